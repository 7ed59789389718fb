/**
 * tau2-bench airline tools over the tables of `schema.sql`: same names, parameters, kinds,
 * results (the pydantic records as JSON, see `records.ts`) and failure conditions as tau2-bench's
 * `AirlineTools`, quirks included:
 * - `cancel_reservation` does not check the status: cancelling twice appends the refunds twice;
 *   seats are not released; a cancelled reservation can still be updated.
 * - `update_reservation_flights` records a negative payment and credits a gift card when the new
 *   itinerary is cheaper; a certificate is refused even for a zero difference; seats are not
 *   taken from the new flights.
 * - `search_direct_flight` results carry `date: null`; `search_onestop_flight` compares times as
 *   strings (the `+1` suffix included) and builds the next day as `2024-05-<day + 1>` (unpadded).
 * - New ids come from fixed lists: reservations HATHAT, HATHAU, HATHAV; certificates
 *   certificate_3221322 … _3221324.
 *
 * Times are EST without offset (`2024-05-15T15:00:00`), derived from the policy clock.
 */
import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../../src/core/schema/domain.ts';
import { calculateTool, thinkTool, toolJson, transferToHumanAgentsTool } from '../../src/core/tau2/common-tools.ts';
import type { PyJson } from '../../src/core/tau2/py-json.ts';
import { flightDateRow, reservationJson, reservationRow, searchDirect, userJson, userRow } from './queries.ts';
import {
  bookReservation,
  cancelReservation,
  sendCertificate,
  updateReservationBaggages,
  updateReservationFlights,
  updateReservationPassengers,
} from './write-tools.ts';

/** Airports of `list_all_airports`, in tau2's order. */
export const AIRPORTS: readonly { iata: string; city: string }[] = [
  { iata: 'SFO', city: 'San Francisco' },
  { iata: 'JFK', city: 'New York' },
  { iata: 'LAX', city: 'Los Angeles' },
  { iata: 'ORD', city: 'Chicago' },
  { iata: 'DFW', city: 'Dallas' },
  { iata: 'DEN', city: 'Denver' },
  { iata: 'SEA', city: 'Seattle' },
  { iata: 'ATL', city: 'Atlanta' },
  { iata: 'MIA', city: 'Miami' },
  { iata: 'BOS', city: 'Boston' },
  { iata: 'PHX', city: 'Phoenix' },
  { iata: 'IAH', city: 'Houston' },
  { iata: 'LAS', city: 'Las Vegas' },
  { iata: 'MCO', city: 'Orlando' },
  { iata: 'EWR', city: 'Newark' },
  { iata: 'CLT', city: 'Charlotte' },
  { iata: 'MSP', city: 'Minneapolis' },
  { iata: 'DTW', city: 'Detroit' },
  { iata: 'PHL', city: 'Philadelphia' },
  { iata: 'LGA', city: 'LaGuardia' },
];

// ---------------------------------------------------------------------------------------------
// Read tools

const getUserDetails = defineTool({
  name: 'get_user_details',
  kind: 'read',
  description:
    "Look up a user's profile: name, address, email, date of birth, payment methods, saved passengers, membership and reservation ids.",
  params: z.strictObject({ user_id: z.string().describe("The user id, e.g. 'sara_doe_496'.") }),
  async run({ db, resultDiscarded }, { user_id }) {
    const u = await userRow(db, user_id);
    return resultDiscarded ? '' : toolJson(await userJson(db, u));
  },
});

const getReservationDetails = defineTool({
  name: 'get_reservation_details',
  kind: 'read',
  description: 'Look up a reservation: trip, cabin, flights, passengers, payments, baggage, insurance and status.',
  params: z.strictObject({ reservation_id: z.string().describe("The reservation id, e.g. '8JX2WO'.") }),
  async run({ db, resultDiscarded }, { reservation_id }) {
    const row = await reservationRow(db, reservation_id);
    return resultDiscarded ? '' : reservationJson(db, reservation_id, { row });
  },
});

const listAllAirports = defineTool({
  name: 'list_all_airports',
  kind: 'read',
  description: 'List every airport served, as IATA code and city.',
  params: z.strictObject({}),
  async run({ resultDiscarded }) {
    if (resultDiscarded) return '';
    return toolJson(AIRPORTS.map((a) => ({ iata: a.iata, city: a.city })));
  },
});

const searchDirectFlight = defineTool({
  name: 'search_direct_flight',
  kind: 'read',
  description: 'Find nonstop flights bookable between two airports on a date, with seats left and prices per cabin.',
  params: z.strictObject({
    origin: z.string().describe("Origin airport code (three letters), e.g. 'JFK'."),
    destination: z.string().describe("Destination airport code (three letters), e.g. 'LAX'."),
    date: z.string().describe("Travel date as 'YYYY-MM-DD', e.g. '2024-01-01'."),
  }),
  async run({ db, resultDiscarded }, { origin, destination, date }) {
    // Cannot fail: with the result discarded there is nothing to do.
    if (resultDiscarded) return '';
    return toolJson(await searchDirect(db, date, origin, destination, null, null));
  },
});

const searchOnestopFlight = defineTool({
  name: 'search_onestop_flight',
  kind: 'read',
  description: 'Find itineraries with one connection between two airports on a date: pairs of bookable flights.',
  params: z.strictObject({
    origin: z.string().describe("Origin airport code (three letters), e.g. 'JFK'."),
    destination: z.string().describe("Destination airport code (three letters), e.g. 'LAX'."),
    date: z.string().describe("Travel date as 'YYYY-MM-DD', e.g. '2024-05-01'."),
  }),
  async run({ db, resultDiscarded }, { origin, destination, date }) {
    if (resultDiscarded) return '';
    const out: PyJson[] = [];
    for (const first of await searchDirect(db, date, origin, null, null, date)) {
      const f = first as { destination: string; scheduled_arrival_time_est: string };
      // tau2 builds the next day by adding 1 to the day number without zero padding.
      const date2 = f.scheduled_arrival_time_est.includes('+1')
        ? `2024-05-${Number.parseInt(date.slice(-2), 10) + 1}`
        : date;
      for (const second of await searchDirect(
        db,
        date2,
        f.destination,
        destination,
        f.scheduled_arrival_time_est,
        date2,
      )) {
        out.push([first, second]);
      }
    }
    return toolJson(out);
  },
});

const getFlightStatus = defineTool({
  name: 'get_flight_status',
  kind: 'read',
  description: "Get a flight's status on a date (available, on time, delayed, flying, landed or cancelled).",
  params: z.strictObject({
    flight_number: z.string().describe("The flight number, e.g. 'HAT001'."),
    date: z.string().describe("The date as 'YYYY-MM-DD'."),
  }),
  async run({ db }, { flight_number, date }) {
    return (await flightDateRow(db, flight_number, date)).status as string;
  },
});

/** Every airline tool, in tau2-bench's order of definition. */
export const tools: readonly ToolDefinition[] = [
  bookReservation,
  calculateTool,
  cancelReservation,
  getReservationDetails,
  getUserDetails,
  listAllAirports,
  searchDirectFlight,
  searchOnestopFlight,
  sendCertificate,
  thinkTool,
  transferToHumanAgentsTool,
  updateReservationBaggages,
  updateReservationFlights,
  updateReservationPassengers,
  getFlightStatus,
] as readonly ToolDefinition[];
