/**
 * tau2-bench telecom's two databases as plain data: the carrier's `TelecomDB` (db.toml) and the
 * caller's `TelecomUserDB` (user_db.toml: the phone and the surroundings), with the field names,
 * defaults and enum values of tau2's data models (`tau2/domains/telecom/data_model.py` and
 * `user_data_model.py` at commit a2c024725189), and their validation from TOML documents.
 *
 * Numbers are JavaScript numbers; which fields are Python floats is known to the dump
 * ({@link agentModelDump}, {@link userModelDump}). Dates are text: `YYYY-MM-DD`, datetimes
 * `YYYY-MM-DDTHH:MM:SS` as in the files.
 */
import { z } from 'zod';
import { DomainFileError, fieldPath } from '../../src/core/schema/domain.ts';
import { PyFloat, type PyDict, type PyJson, type PyJsonObject } from '../../src/core/tau2/py-json.ts';

// --- enums (values as in tau2) ---------------------------------------------------------------

export const LINE_STATUSES = ['Active', 'Suspended', 'Pending Activation', 'Closed'] as const;
export const BILL_STATUSES = ['Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue', 'Disputed'] as const;
export const SIM_STATUSES = ['active', 'missing', 'locked_pin', 'locked_puk'] as const;
export const NETWORK_TECHNOLOGIES = ['none', '2G', '3G', '4G', '5G'] as const;
export const NETWORK_MODES = ['4g_5g_preferred', '4g_only', '3g_only', '2g_only'] as const;
export const SIGNAL_STRENGTHS = ['none', 'poor', 'fair', 'good', 'excellent'] as const;
export const PERFORMANCE_LEVELS = ['unknown', 'poor', 'fair', 'good', 'excellent'] as const;
export const NETWORK_STATUSES = ['connected', 'searching', 'no_service', 'emergency_only'] as const;
export const APN_NAMES = ['internet', 'broken'] as const;

export type SignalStrength = (typeof SIGNAL_STRENGTHS)[number];
export type NetworkTechnology = (typeof NETWORK_TECHNOLOGIES)[number];
export type NetworkMode = (typeof NETWORK_MODES)[number];
export type SimStatus = (typeof SIM_STATUSES)[number];

// --- carrier side ----------------------------------------------------------------------------

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const date = z.string().regex(DATE, 'expected a date YYYY-MM-DD');
const datetime = z.string().regex(DATETIME, 'expected a datetime YYYY-MM-DDTHH:MM:SS');
const str = z.string();
const num = z.number();
const int = z.number().int();

const Plan = z.strictObject({
  plan_id: str,
  name: str,
  data_limit_gb: num,
  price_per_month: num,
  data_refueling_price_per_gb: num,
});
const Device = z.strictObject({
  device_id: str,
  device_type: z.enum(['phone', 'router', 'tablet', 'watch', 'other']),
  model: str,
  imei: str.nullable().default(null),
  is_esim_capable: z.boolean(),
  activated: z.boolean().default(false),
  activation_date: datetime.nullable().default(null),
  last_esim_transfer_date: datetime.nullable().default(null),
});
const Line = z.strictObject({
  line_id: str,
  phone_number: str,
  status: z.enum(LINE_STATUSES).default('Pending Activation'),
  plan_id: str,
  device_id: str.nullable().default(null),
  data_used_gb: num.default(0),
  data_refueling_gb: num.default(0),
  roaming_enabled: z.boolean().default(false),
  contract_end_date: date.nullable().default(null),
  last_plan_change_date: date.nullable().default(null),
  last_sim_replacement_date: date.nullable().default(null),
  suspension_start_date: date.nullable().default(null),
});
const LineItem = z.strictObject({ description: str, amount: num, date, item_type: str });
const Bill = z.strictObject({
  bill_id: str,
  customer_id: str,
  period_start: date,
  period_end: date,
  issue_date: date,
  total_due: num,
  due_date: date,
  line_items: z.array(LineItem).default([]),
  status: z.enum(BILL_STATUSES).default('Draft'),
});
const PaymentMethod = z.strictObject({
  method_type: z.enum(['Credit Card', 'Debit Card', 'PayPal']),
  account_number_last_4: str,
  expiration_date: str,
});
/** tau2's `DEFAULT_START_DATE`: a date (not a datetime) used as `created_at`'s default. */
const DEFAULT_START_DATE = '2025-01-01';
const Customer = z.strictObject({
  customer_id: str,
  full_name: str,
  date_of_birth: str,
  email: str,
  phone_number: str,
  address: z.strictObject({ street: str, city: str, state: str, zip_code: str }),
  account_status: z.enum(['Active', 'Suspended', 'Pending Verification', 'Closed']).default('Pending Verification'),
  payment_methods: z.array(PaymentMethod).default([]),
  line_ids: z.array(str).default([]),
  bill_ids: z.array(str).default([]),
  created_at: datetime.default(DEFAULT_START_DATE),
  last_extension_date: date.nullable().default(null),
  goodwill_credit_used_this_year: num.default(0),
});

/** `TelecomDB`: the carrier's records, lists in order. */
export const AgentDbSchema = z.strictObject({
  plans: z.array(Plan).default([]),
  customers: z.array(Customer).default([]),
  lines: z.array(Line).default([]),
  bills: z.array(Bill).default([]),
  devices: z.array(Device).default([]),
});
export type AgentDb = z.output<typeof AgentDbSchema>;
export type Customer = z.output<typeof Customer>;
export type Line = z.output<typeof Line>;
export type Bill = z.output<typeof Bill>;
export type Plan = z.output<typeof Plan>;
export type DeviceRecord = z.output<typeof Device>;
export type LineItem = z.output<typeof LineItem>;

// --- caller side -----------------------------------------------------------------------------

const signal = z.enum(SIGNAL_STRENGTHS);
const ApnSettings = z.strictObject({
  apn_name: z.enum(APN_NAMES).default('internet'),
  reset_at_reboot: z.boolean().default(false),
  mms_apn: str.nullable().default('mms'),
  mmsc_url: str.nullable().default('http://mms.carrier.com/mms/wapenc'),
  mms_proxy: str.nullable().default(null),
  mms_port: int.nullable().default(null),
});
const VpnDetails = z.strictObject({
  server_address: str.nullable().default(null),
  protocol: str.nullable().default(null),
  server_performance: z.enum(PERFORMANCE_LEVELS).default('unknown'),
});
const Permissions = z.strictObject({
  sms: z.boolean().default(false),
  storage: z.boolean().default(false),
  phone: z.boolean().default(false),
  network: z.boolean().default(false),
});
const AppStatus = z.strictObject({ app_name: str, permissions: Permissions.default(Permissions.parse({})) });
const defaultApps = () =>
  new Map([
    ['messaging', { app_name: 'messaging', permissions: { sms: true, storage: true, phone: true, network: false } }],
    ['browser', { app_name: 'browser', permissions: { sms: false, storage: true, phone: false, network: true } }],
  ]);
const Phone = z.strictObject({
  sim_card_status: z.enum(SIM_STATUSES).default('active'),
  sim_card_missing: z.boolean().default(false),
  airplane_mode: z.boolean().default(false),
  network_signal_strength: signal.default('good'),
  network_technology_connected: z.enum(NETWORK_TECHNOLOGIES).default('5G'),
  network_connection_status: z.enum(NETWORK_STATUSES).default('connected'),
  battery_level: int.default(80),
  data_enabled: z.boolean().default(true),
  roaming_enabled: z.boolean().default(false),
  network_mode_preference: z.enum(NETWORK_MODES).default('4g_5g_preferred'),
  active_apn_settings: ApnSettings.default(ApnSettings.parse({})),
  wifi_enabled: z.boolean().default(false),
  wifi_connected: z.boolean().default(false),
  wifi_ssid: str.nullable().default(null),
  wifi_signal_strength: signal.default('none'),
  wifi_calling_enabled: z.boolean().default(false),
  wifi_calling_mms_over_wifi: z.boolean().default(false),
  data_saver_mode: z.boolean().default(false),
  vpn_enabled_setting: z.boolean().default(false),
  vpn_connected: z.boolean().default(false),
  vpn_details: VpnDetails.nullable().default(null),
  app_statuses: z
    .record(str, AppStatus)
    .optional()
    .transform((apps) => (apps ? new Map(Object.entries(apps)) : defaultApps())),
});
const Surroundings = z.strictObject({
  name: str.nullable().default(null),
  phone_number: str.nullable().default(null),
  is_abroad: z.boolean().default(false),
  roaming_allowed: z.boolean().default(false),
  signal_strength: z
    .record(z.enum(NETWORK_TECHNOLOGIES), signal)
    .optional()
    .transform(
      (s) =>
        new Map<string, SignalStrength>(
          s
            ? Object.entries(s)
            : [
                ['2G', 'poor'],
                ['3G', 'fair'],
                ['4G', 'good'],
                ['5G', 'excellent'],
              ],
        ),
    ),
  mobile_data_usage_exceeded: z.boolean().default(false),
  line_active: z.boolean().default(true),
  payment_request: z
    .strictObject({ bill_id: str, amount_due: num, paid: z.boolean().default(false) })
    .nullable()
    .default(null),
});

/** `TelecomUserDB`: the caller's phone (`device`) and surroundings. */
export const UserDbSchema = z.strictObject({
  device: z.preprocess((v) => v ?? {}, Phone),
  surroundings: z.preprocess((v) => v ?? {}, Surroundings),
});
export type UserDb = z.output<typeof UserDbSchema>;
export type Phone = z.output<typeof Phone>;
export type Surroundings = z.output<typeof Surroundings>;
export type ApnSettings = z.output<typeof ApnSettings>;
export type VpnDetails = z.output<typeof VpnDetails>;
export type AppStatus = z.output<typeof AppStatus>;

/** tau2's `APNSettings()` with every default. */
export function defaultApnSettings(): ApnSettings {
  return ApnSettings.parse({});
}

/**
 * Validate `APNSettings(**fields)` as the caller's `set_apn_settings` does.
 * @returns the settings, or the first problem as `field: message`.
 */
export function parseApnSettings(fields: unknown): { ok: true; value: ApnSettings } | { ok: false; problem: string } {
  const parsed = ApnSettings.safeParse(fields);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, problem: `${fieldPath(issue.path) || '(settings)'}: ${issue.message}` };
}

/**
 * Validate a parsed TOML document as a tau2 database.
 * @throws DomainFileError naming `file` and the first bad field (e.g. `lines[2].status`).
 */
export function parseDb<S extends z.ZodType>(schema: S, doc: unknown, file: string): z.output<S> {
  const parsed = schema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  return parsed.data;
}

// --- tau2's model_dump -----------------------------------------------------------------------

const f = (x: number): PyFloat => new PyFloat(x);
const fn = (x: number | null): PyFloat | null => (x === null ? null : new PyFloat(x));
/** A datetime as `str(datetime)` prints it (`2025-01-20 14:30:00`); a date stays as it is. */
const dt = (x: string | null): string | null => (x === null ? null : x.replace('T', ' '));

/** `Plan.model_dump()` (what tools return and what the hash covers), declared field order. */
export function planDump(p: Plan): PyJsonObject {
  return {
    plan_id: p.plan_id,
    name: p.name,
    data_limit_gb: f(p.data_limit_gb),
    price_per_month: f(p.price_per_month),
    data_refueling_price_per_gb: f(p.data_refueling_price_per_gb),
  };
}

export function deviceDump(d: DeviceRecord): PyJsonObject {
  return {
    device_id: d.device_id,
    device_type: d.device_type,
    model: d.model,
    imei: d.imei,
    is_esim_capable: d.is_esim_capable,
    activated: d.activated,
    activation_date: dt(d.activation_date),
    last_esim_transfer_date: dt(d.last_esim_transfer_date),
  };
}

export function lineDump(l: Line): PyJsonObject {
  return {
    line_id: l.line_id,
    phone_number: l.phone_number,
    status: l.status,
    plan_id: l.plan_id,
    device_id: l.device_id,
    data_used_gb: f(l.data_used_gb),
    data_refueling_gb: f(l.data_refueling_gb),
    roaming_enabled: l.roaming_enabled,
    contract_end_date: l.contract_end_date,
    last_plan_change_date: l.last_plan_change_date,
    last_sim_replacement_date: l.last_sim_replacement_date,
    suspension_start_date: l.suspension_start_date,
  };
}

export function billDump(b: Bill): PyJsonObject {
  return {
    bill_id: b.bill_id,
    customer_id: b.customer_id,
    period_start: b.period_start,
    period_end: b.period_end,
    issue_date: b.issue_date,
    total_due: f(b.total_due),
    due_date: b.due_date,
    line_items: b.line_items.map((i) => ({
      description: i.description,
      amount: f(i.amount),
      date: i.date,
      item_type: i.item_type,
    })),
    status: b.status,
  };
}

export function customerDump(c: Customer): PyJsonObject {
  return {
    customer_id: c.customer_id,
    full_name: c.full_name,
    date_of_birth: c.date_of_birth,
    email: c.email,
    phone_number: c.phone_number,
    address: { ...c.address },
    account_status: c.account_status,
    payment_methods: c.payment_methods.map((m) => ({ ...m })),
    line_ids: [...c.line_ids],
    bill_ids: [...c.bill_ids],
    created_at: dt(c.created_at),
    last_extension_date: c.last_extension_date,
    goodwill_credit_used_this_year: f(c.goodwill_credit_used_this_year),
  };
}

/** `TelecomDB.model_dump()`. */
export function agentModelDump(db: AgentDb): PyJsonObject {
  return {
    plans: db.plans.map(planDump),
    customers: db.customers.map(customerDump),
    lines: db.lines.map(lineDump),
    bills: db.bills.map(billDump),
    devices: db.devices.map(deviceDump),
  };
}

/** `VpnDetails.model_dump()`. */
export function vpnDump(v: VpnDetails): PyJsonObject {
  return { server_address: v.server_address, protocol: v.protocol, server_performance: v.server_performance };
}

/** `TelecomUserDB.model_dump()`. */
export function userModelDump(db: UserDb): PyJsonObject {
  const d = db.device;
  const s = db.surroundings;
  const apn = d.active_apn_settings;
  const apps: PyDict = new Map();
  for (const [k, a] of d.app_statuses) apps.set(k, { app_name: a.app_name, permissions: { ...a.permissions } });
  const signal: PyDict = new Map([...s.signal_strength].map(([k, v]) => [k, v as PyJson]));
  return {
    device: {
      sim_card_status: d.sim_card_status,
      sim_card_missing: d.sim_card_missing,
      airplane_mode: d.airplane_mode,
      network_signal_strength: d.network_signal_strength,
      network_technology_connected: d.network_technology_connected,
      network_connection_status: d.network_connection_status,
      battery_level: d.battery_level,
      data_enabled: d.data_enabled,
      roaming_enabled: d.roaming_enabled,
      network_mode_preference: d.network_mode_preference,
      active_apn_settings: {
        apn_name: apn.apn_name,
        reset_at_reboot: apn.reset_at_reboot,
        mms_apn: apn.mms_apn,
        mmsc_url: apn.mmsc_url,
        mms_proxy: apn.mms_proxy,
        mms_port: apn.mms_port,
      },
      wifi_enabled: d.wifi_enabled,
      wifi_connected: d.wifi_connected,
      wifi_ssid: d.wifi_ssid,
      wifi_signal_strength: d.wifi_signal_strength,
      wifi_calling_enabled: d.wifi_calling_enabled,
      wifi_calling_mms_over_wifi: d.wifi_calling_mms_over_wifi,
      data_saver_mode: d.data_saver_mode,
      vpn_enabled_setting: d.vpn_enabled_setting,
      vpn_connected: d.vpn_connected,
      vpn_details: d.vpn_details ? vpnDump(d.vpn_details) : null,
      app_statuses: apps,
    },
    surroundings: {
      name: s.name,
      phone_number: s.phone_number,
      is_abroad: s.is_abroad,
      roaming_allowed: s.roaming_allowed,
      signal_strength: signal,
      mobile_data_usage_exceeded: s.mobile_data_usage_exceeded,
      line_active: s.line_active,
      payment_request: s.payment_request
        ? {
            bill_id: s.payment_request.bill_id,
            amount_due: fn(s.payment_request.amount_due),
            paid: s.payment_request.paid,
          }
        : null,
    },
  };
}
