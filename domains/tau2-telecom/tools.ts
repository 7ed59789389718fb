/**
 * tau2-bench telecom's tools: the agent's 13 carrier tools and the caller's 30 phone tools, with
 * tau2's names, parameters, results and failure texts. Each call reads both databases, works on
 * them (carrier.ts, phone.ts) and writes back what changed; the environment then runs the state
 * sync (`syncState` in domain.ts).
 *
 * What the agent sees of a structured result is Python's `json.dumps` of what tau2's tool returns
 * through its environment: records as `model_dump()` (floats as `8.7`, datetimes as
 * `2025-01-20 14:30:00`), and in a dict the tool builds itself, numbers as strings (`"2.0"`).
 * A missing or unexpected argument is answered with Python's `TypeError` text.
 */
import { z } from 'zod';
import { defineTool, type ToolDefinition, type ToolKind } from '../../src/core/schema/domain.ts';
import { toolJson, transferToHumanAgentsTool } from '../../src/core/tau2/common-tools.ts';
import { pyFloatRepr, type PyJson } from '../../src/core/tau2/py-json.ts';
import * as carrier from './carrier.ts';
import { readState, withState, type Sides } from './env.ts';
import { customerDump } from './model.ts';

/**
 * Python's `TypeError` for a call with keyword arguments that do not fit the function's
 * signature: an unexpected keyword first, then the missing required ones.
 * @param qualname e.g. `TelecomTools.get_customer_by_id`.
 * @returns the message, or `null` when the names fit.
 */
export function pyArgumentError(
  qualname: string,
  params: readonly string[],
  required: readonly string[],
  args: Readonly<Record<string, unknown>>,
): string | null {
  const unexpected = Object.keys(args).find((k) => !params.includes(k));
  if (unexpected !== undefined) return `${qualname}() got an unexpected keyword argument '${unexpected}'`;
  const missing = required.filter((p) => !Object.hasOwn(args, p));
  if (missing.length === 0) return null;
  const q = missing.map((m) => `'${m}'`);
  const list =
    q.length === 1 ? q[0] : q.length === 2 ? `${q[0]} and ${q[1]}` : `${q.slice(0, -1).join(', ')}, and ${q.at(-1)}`;
  return `${qualname}() missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${list}`;
}

type Shape = z.ZodRawShape;

interface TelecomToolDef<S extends Shape> {
  owner: 'TelecomTools' | 'TelecomUserTools';
  name: string;
  kind: ToolKind;
  description: string;
  params: S;
  run(s: Sides, args: z.output<z.ZodObject<S>>): PyJson;
  spokenAs?: string;
}

/** A telecom tool: params, tau2's argument checking, and a run over both sides. */
function telecomTool<S extends Shape>(def: TelecomToolDef<S>): ToolDefinition {
  const names = Object.keys(def.params);
  const required = names.filter((n) => !z.safeParse(def.params[n]!, undefined).success);
  const reads = def.kind === 'read';
  return defineTool({
    name: def.name,
    kind: def.kind,
    description: def.description,
    params: z.strictObject(def.params),
    ...(def.spokenAs ? { spokenAs: def.spokenAs } : {}),
    argumentError: (args) => pyArgumentError(`${def.owner}.${def.name}`, names, required, args),
    async run(ctx, args) {
      const go = (s: Sides) => {
        const out = def.run(s, args as z.output<z.ZodObject<S>>);
        return typeof out === 'string' ? out : toolJson(out);
      };
      return reads ? readState(ctx.db, ctx.now(), go) : withState(ctx.db, ctx.now(), go);
    },
  }) as unknown as ToolDefinition;
}

const customerId = z.string().describe('The customer id, e.g. C1001.');
const lineId = z.string().describe('The line id, e.g. L1002.');

const agent = <S extends Shape>(def: Omit<TelecomToolDef<S>, 'owner'>) =>
  telecomTool({ owner: 'TelecomTools', ...def });

/** The agent's carrier tools (tau2 `TelecomTools`), in tau2's order. */
export const agentTools: readonly ToolDefinition[] = [
  agent({
    name: 'get_customer_by_phone',
    kind: 'read',
    description: "Find the customer whose contact number, or one of whose lines' numbers, is the given phone number.",
    params: { phone_number: z.string().describe('The phone number, e.g. 555-123-2002.') },
    run: (s, a) => customerDump(carrier.customerByPhone(s.carrier, a.phone_number)),
  }),
  agent({
    name: 'get_customer_by_id',
    kind: 'read',
    description: 'Look up a customer by customer id.',
    params: { customer_id: customerId },
    run: (s, a) => customerDump(carrier.customerById(s.carrier, a.customer_id)),
  }),
  agent({
    name: 'get_customer_by_name',
    kind: 'read',
    description:
      'List the customers with this full name (case-insensitive) and date of birth; the list may be empty or hold several.',
    params: {
      full_name: z.string().describe("The customer's full name."),
      dob: z.string().describe('Date of birth, YYYY-MM-DD.'),
    },
    run: (s, a) => carrier.getCustomerByName(s.carrier, a.full_name, a.dob),
  }),
  agent({
    name: 'get_details_by_id',
    kind: 'read',
    description: 'Show the record with this id: a line (L…), device (D…), bill (B…), customer (C…) or plan (P…).',
    params: { id: z.string().describe('The id, e.g. L1002, D1001, B1003, C1001 or P1002.') },
    run: (s, a) => carrier.detailsById(s.carrier, a.id),
  }),
  agent({
    name: 'suspend_line',
    kind: 'write',
    description:
      'Suspend an active line of the customer (at most six months; a $5 monthly holding fee applies). The line must be active.',
    params: { customer_id: customerId, line_id: lineId, reason: z.string().describe('Why the line is suspended.') },
    run: (s, a) => carrier.suspendLine(s.carrier, a.customer_id, a.line_id),
  }),
  agent({
    name: 'resume_line',
    kind: 'write',
    description: 'Make a suspended (or pending) line of the customer active again.',
    params: { customer_id: customerId, line_id: lineId },
    run: (s, a) => carrier.resumeLine(s.carrier, a.customer_id, a.line_id),
  }),
  agent({
    name: 'get_bills_for_customer',
    kind: 'read',
    description: "List the customer's bills, newest issue date first.",
    params: {
      customer_id: customerId,
      limit: z.number().int().default(12).describe('How many bills at most (default 12).'),
    },
    run: (s, a) => carrier.billsForCustomer(s.carrier, a.customer_id, a.limit),
  }),
  agent({
    name: 'send_payment_request',
    kind: 'write',
    description:
      "Ask the customer to pay one of their bills: the bill becomes 'Awaiting Payment' and the request appears on the customer's phone. Refused while another bill awaits payment; it does not check whether the bill is already paid.",
    params: { customer_id: customerId, bill_id: z.string().describe('The bill id, e.g. B1002.') },
    run: (s, a) => carrier.sendPaymentRequest(s.carrier, a.customer_id, a.bill_id),
  }),
  agent({
    name: 'get_data_usage',
    kind: 'read',
    description:
      "Show a line's data used this billing cycle, its plan's data limit, data refueled, and when the cycle ends.",
    params: { customer_id: customerId, line_id: lineId },
    run: (s, a) => carrier.dataUsage(s.carrier, a.customer_id, a.line_id),
  }),
  agent({
    name: 'enable_roaming',
    kind: 'write',
    description: 'Turn on international roaming for a line of the customer.',
    params: { customer_id: customerId, line_id: lineId },
    run: (s, a) => carrier.setRoaming(s.carrier, a.customer_id, a.line_id, true),
  }),
  agent({
    name: 'disable_roaming',
    kind: 'write',
    description: 'Turn off international roaming for a line of the customer.',
    params: { customer_id: customerId, line_id: lineId },
    run: (s, a) => carrier.setRoaming(s.carrier, a.customer_id, a.line_id, false),
  }),
  {
    ...transferToHumanAgentsTool,
    argumentError: (args) => pyArgumentError('TelecomTools.transfer_to_human_agents', ['summary'], ['summary'], args),
  } as ToolDefinition,
  agent({
    name: 'refuel_data',
    kind: 'write',
    description:
      "Add data to a line for this billing cycle; the plan's price per GB is charged on the customer's next bill.",
    params: {
      customer_id: customerId,
      line_id: lineId,
      gb_amount: z.number().describe('How many GB to add, more than 0.'),
    },
    run: (s, a) => carrier.refuelData(s.carrier, a.customer_id, a.line_id, a.gb_amount),
  }),
];

const user = <S extends Shape>(def: Omit<TelecomToolDef<S>, 'owner'>) =>
  telecomTool({ owner: 'TelecomUserTools', ...def });
const appName = z.string().describe('The app, e.g. messaging or browser.');

/** The caller's phone tools (tau2 `TelecomUserTools`), in tau2's order. */
export const userTools: readonly ToolDefinition[] = [
  user({
    name: 'check_status_bar',
    kind: 'read',
    description: "Read the icons in the phone's status bar: signal, network type, mobile data, Wi-Fi, VPN, battery.",
    params: {},
    spokenAs: 'look at the status bar at the top of your screen',
    run: (s) => s.phone.checkStatusBar(),
  }),
  user({
    name: 'check_network_status',
    kind: 'read',
    description:
      "Show the phone's connection details: airplane mode, SIM, cellular connection, signal and type, mobile data, data roaming, Wi-Fi.",
    params: {},
    spokenAs: 'check your network status in the settings',
    run: (s) => s.phone.checkNetworkStatus(),
  }),
  user({
    name: 'check_network_mode_preference',
    kind: 'read',
    description: 'Show which kind of cellular network the phone prefers.',
    params: {},
    spokenAs: 'check your preferred network type',
    run: (s) => s.phone.checkNetworkModePreference(),
  }),
  user({
    name: 'set_network_mode_preference',
    kind: 'write',
    description:
      'Choose the kind of cellular network the phone prefers: 4g_5g_preferred, 4g_only, 3g_only or 2g_only. Faster networks use more battery.',
    params: { mode: z.string().describe('One of 4g_5g_preferred, 4g_only, 3g_only, 2g_only.') },
    spokenAs: 'set your preferred network type',
    run: (s, a) => s.phone.setNetworkModePreference(a.mode),
  }),
  user({
    name: 'run_speed_test',
    kind: 'read',
    description: 'Measure the download speed of the mobile data connection and say what it is good for.',
    params: {},
    spokenAs: 'run a speed test',
    run: (s) => s.phone.runSpeedTest(),
  }),
  user({
    name: 'toggle_airplane_mode',
    kind: 'write',
    description: 'Switch airplane mode on or off; on, it cuts every radio (cellular, Wi-Fi, Bluetooth).',
    params: {},
    spokenAs: 'toggle airplane mode',
    run: (s) => s.phone.toggleAirplaneMode(),
  }),
  user({
    name: 'check_sim_status',
    kind: 'read',
    description: 'Check whether the SIM card works: active, missing, or locked by PIN or PUK.',
    params: {},
    spokenAs: 'check your SIM card status',
    run: (s) => s.phone.checkSimStatus(),
  }),
  user({
    name: 'reseat_sim_card',
    kind: 'write',
    description: 'Take the SIM card out and put it back in, which can fix a SIM the phone does not recognize.',
    params: {},
    spokenAs: 'take out your SIM card and put it back in',
    run: (s) => s.phone.reseatSimCard(),
  }),
  user({
    name: 'toggle_data',
    kind: 'write',
    description: 'Switch mobile data on or off.',
    params: {},
    spokenAs: 'toggle mobile data',
    run: (s) => s.phone.toggleData(),
  }),
  user({
    name: 'toggle_roaming',
    kind: 'write',
    description: 'Switch data roaming on or off (using data networks outside the carrier’s own coverage).',
    params: {},
    spokenAs: 'toggle data roaming',
    run: (s) => s.phone.toggleRoaming(),
  }),
  user({
    name: 'check_data_restriction_status',
    kind: 'read',
    description: 'Check whether a data-limiting feature (Data Saver) is on.',
    params: {},
    spokenAs: 'check whether data saver is on',
    run: (s) => s.phone.checkDataRestrictionStatus(),
  }),
  user({
    name: 'toggle_data_saver_mode',
    kind: 'write',
    description: 'Switch Data Saver on or off; on, it uses less data and can slow the connection.',
    params: {},
    spokenAs: 'toggle data saver',
    run: (s) => s.phone.toggleDataSaverMode(),
  }),
  user({
    name: 'check_apn_settings',
    kind: 'read',
    description: 'Show the APN the phone uses for mobile data and its MMSC URL for picture messages.',
    params: {},
    spokenAs: 'check your APN settings',
    run: (s) => s.phone.checkApnSettings(),
  }),
  user({
    name: 'set_apn_settings',
    kind: 'write',
    description: "Set the phone's APN settings.",
    params: {
      apn_settings: z
        .record(z.string(), z.unknown())
        .describe('Fields of the settings: apn_name, reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port.'),
    },
    spokenAs: 'change your APN settings',
    run: (s, a) => s.phone.setApnSettings(a.apn_settings),
  }),
  user({
    name: 'reset_apn_settings',
    kind: 'write',
    description: 'Reset the APN settings to the defaults; takes effect at the next restart.',
    params: {},
    spokenAs: 'reset your APN settings',
    run: (s) => s.phone.resetApnSettings(),
  }),
  user({
    name: 'check_wifi_status',
    kind: 'read',
    description: 'Check whether Wi-Fi is on, which network it is connected to, and the signal strength.',
    params: {},
    spokenAs: 'check your Wi-Fi',
    run: (s) => s.phone.checkWifiStatus(),
  }),
  user({
    name: 'toggle_wifi',
    kind: 'write',
    description: 'Switch the Wi-Fi radio on or off.',
    params: {},
    spokenAs: 'toggle Wi-Fi',
    run: (s) => s.phone.toggleWifi(),
  }),
  user({
    name: 'check_wifi_calling_status',
    kind: 'read',
    description: 'Check whether Wi-Fi Calling (calls over Wi-Fi instead of the cellular network) is on.',
    params: {},
    spokenAs: 'check whether Wi-Fi calling is on',
    run: (s) => s.phone.checkWifiCallingStatus(),
  }),
  user({
    name: 'toggle_wifi_calling',
    kind: 'write',
    description: 'Switch Wi-Fi Calling on or off.',
    params: {},
    spokenAs: 'toggle Wi-Fi calling',
    run: (s) => s.phone.toggleWifiCalling(),
  }),
  user({
    name: 'check_vpn_status',
    kind: 'read',
    description: 'Check whether a VPN is on and connected, with its connection details.',
    params: {},
    spokenAs: 'check your VPN',
    run: (s) => s.phone.checkVpnStatus(),
  }),
  user({
    name: 'connect_vpn',
    kind: 'write',
    description: 'Connect the VPN.',
    params: {},
    spokenAs: 'connect your VPN',
    run: (s) => s.phone.connectVpn(),
  }),
  user({
    name: 'disconnect_vpn',
    kind: 'write',
    description: 'Disconnect the VPN, so traffic no longer goes through a VPN server.',
    params: {},
    spokenAs: 'disconnect your VPN',
    run: (s) => s.phone.disconnectVpn(),
  }),
  user({
    name: 'check_installed_apps',
    kind: 'read',
    description: 'List the apps installed on the phone.',
    params: {},
    spokenAs: 'check which apps are installed',
    run: (s) => s.phone.checkInstalledApps(),
  }),
  user({
    name: 'check_app_status',
    kind: 'read',
    description: 'Show an app’s details and the permissions it has.',
    params: { app_name: appName },
    spokenAs: 'check the app',
    run: (s, a) => s.phone.checkAppStatus(a.app_name),
  }),
  user({
    name: 'check_app_permissions',
    kind: 'read',
    description: 'Show which permissions (sms, storage, phone, network) an app has.',
    params: { app_name: appName },
    spokenAs: 'check the app permissions',
    run: (s, a) => s.phone.checkAppPermissions(a.app_name),
  }),
  user({
    name: 'grant_app_permission',
    kind: 'write',
    description: 'Give an app a permission it needs (sms, storage, phone or network).',
    params: { app_name: appName, permission: z.string().describe('The permission, in lower case, e.g. storage.') },
    spokenAs: 'give the app the permission',
    run: (s, a) => s.phone.grantAppPermission(a.app_name, a.permission),
  }),
  user({
    name: 'can_send_mms',
    kind: 'read',
    description: 'Check whether the messaging app can send picture messages (MMS).',
    params: {},
    spokenAs: 'check whether you can send a picture message',
    run: (s) => s.phone.canSendMmsText(),
  }),
  user({
    name: 'reboot_device',
    kind: 'write',
    description: 'Restart the phone, which clears many temporary glitches and reconnects to the network.',
    params: {},
    spokenAs: 'restart your phone',
    run: (s) => s.phone.rebootDevice(),
  }),
  user({
    name: 'check_payment_request',
    kind: 'read',
    description: 'Check whether the carrier has sent a payment request.',
    params: {},
    spokenAs: 'check for a payment request',
    run: (s) => s.phone.checkPaymentRequest(pyFloatRepr),
  }),
  user({
    name: 'make_payment',
    kind: 'write',
    description: 'Pay the bill of the payment request the carrier sent.',
    params: {},
    spokenAs: 'pay the bill from the payment request',
    run: (s) => s.phone.makePayment(pyFloatRepr),
  }),
];
