/**
 * The two telecom databases ↔ the tables of `schema.sql`: documents to rows (the seed, and every
 * write), rows to documents (every tool call reads the whole state — a few dozen rows — and
 * works on it as tau2's tools work on their pydantic models), and the write-back that turns a
 * changed document into the row updates, inserts and deletes that differ (so the write log holds
 * exactly the changed columns).
 */
import type { ToolDb } from '../../src/core/schema/domain.ts';
import type { SqlRow, SqlValue } from '../../src/core/ports/sql-db.ts';
import { groupByParent, inPositionOrder } from '../../src/core/tau2/rows.ts';
import type { AgentDb, UserDb } from './model.ts';

/** Table name → primary-key columns, for every table of the schema, in dependency order. */
export const TELECOM_TABLES = {
  plans: ['plan_id'],
  devices: ['device_id'],
  lines: ['line_id'],
  customers: ['customer_id'],
  customer_payment_methods: ['customer_id', 'position'],
  customer_line_ids: ['customer_id', 'position'],
  customer_bill_ids: ['customer_id', 'position'],
  bills: ['bill_id'],
  bill_line_items: ['bill_id', 'position'],
  user_device: ['id'],
  user_apps: ['app_key'],
  user_surroundings: ['id'],
  user_signal_strength: ['technology'],
} as const satisfies Record<string, readonly string[]>;
export type TelecomTable = keyof typeof TELECOM_TABLES;

/** Tables of the carrier's side (`db.toml`). */
export const AGENT_TABLES = [
  'plans',
  'devices',
  'lines',
  'customers',
  'customer_payment_methods',
  'customer_line_ids',
  'customer_bill_ids',
  'bills',
  'bill_line_items',
] as const satisfies readonly TelecomTable[];
/** Tables of the caller's side (`user_db.toml`). */
export const USER_TABLES = [
  'user_device',
  'user_apps',
  'user_surroundings',
  'user_signal_strength',
] as const satisfies readonly TelecomTable[];

type Rows = Record<TelecomTable, SqlRow[]>;

const b = (x: boolean): number => (x ? 1 : 0);
const bool = (v: SqlValue | undefined): boolean => v === 1;
const s = (v: SqlValue | undefined): string => v as string;
const sn = (v: SqlValue | undefined): string | null => (v ?? null) as string | null;
const n = (v: SqlValue | undefined): number => v as number;

/** A `TelecomDB` document → rows of the carrier's tables. */
export function agentRows(db: AgentDb): Pick<Rows, (typeof AGENT_TABLES)[number]> {
  const out = Object.fromEntries(AGENT_TABLES.map((t) => [t, [] as SqlRow[]])) as Rows;
  db.plans.forEach((p, position) => out.plans.push({ ...p, position }));
  db.devices.forEach((d, position) =>
    out.devices.push({ ...d, position, is_esim_capable: b(d.is_esim_capable), activated: b(d.activated) }),
  );
  db.lines.forEach((l, position) => out.lines.push({ ...l, position, roaming_enabled: b(l.roaming_enabled) }));
  db.customers.forEach((c, position) => {
    const { address, payment_methods, line_ids, bill_ids, ...rest } = c;
    out.customers.push({ ...rest, ...address, position });
    payment_methods.forEach((m, i) =>
      out.customer_payment_methods.push({ customer_id: c.customer_id, position: i, ...m }),
    );
    line_ids.forEach((id, i) => out.customer_line_ids.push({ customer_id: c.customer_id, position: i, line_id: id }));
    bill_ids.forEach((id, i) => out.customer_bill_ids.push({ customer_id: c.customer_id, position: i, bill_id: id }));
  });
  db.bills.forEach((bill, position) => {
    const { line_items, ...rest } = bill;
    out.bills.push({ ...rest, position });
    line_items.forEach((item, i) => out.bill_line_items.push({ bill_id: bill.bill_id, position: i, ...item }));
  });
  return out;
}

/** A `TelecomUserDB` document → rows of the caller's tables. */
export function userRows(db: UserDb): Pick<Rows, (typeof USER_TABLES)[number]> {
  const d = db.device;
  const apn = d.active_apn_settings;
  const vpn = d.vpn_details;
  const sr = db.surroundings;
  return {
    user_device: [
      {
        id: 1,
        sim_card_status: d.sim_card_status,
        sim_card_missing: b(d.sim_card_missing),
        airplane_mode: b(d.airplane_mode),
        network_signal_strength: d.network_signal_strength,
        network_technology_connected: d.network_technology_connected,
        network_connection_status: d.network_connection_status,
        battery_level: d.battery_level,
        data_enabled: b(d.data_enabled),
        roaming_enabled: b(d.roaming_enabled),
        network_mode_preference: d.network_mode_preference,
        apn_name: apn.apn_name,
        apn_reset_at_reboot: b(apn.reset_at_reboot),
        apn_mms_apn: apn.mms_apn,
        apn_mmsc_url: apn.mmsc_url,
        apn_mms_proxy: apn.mms_proxy,
        apn_mms_port: apn.mms_port,
        wifi_enabled: b(d.wifi_enabled),
        wifi_connected: b(d.wifi_connected),
        wifi_ssid: d.wifi_ssid,
        wifi_signal_strength: d.wifi_signal_strength,
        wifi_calling_enabled: b(d.wifi_calling_enabled),
        wifi_calling_mms_over_wifi: b(d.wifi_calling_mms_over_wifi),
        data_saver_mode: b(d.data_saver_mode),
        vpn_enabled_setting: b(d.vpn_enabled_setting),
        vpn_connected: b(d.vpn_connected),
        vpn_details_set: b(vpn !== null),
        vpn_server_address: vpn?.server_address ?? null,
        vpn_protocol: vpn?.protocol ?? null,
        vpn_server_performance: vpn?.server_performance ?? null,
      },
    ],
    user_apps: [...d.app_statuses].map(([key, a], position) => ({
      app_key: key,
      position,
      app_name: a.app_name,
      sms: b(a.permissions.sms),
      storage: b(a.permissions.storage),
      phone: b(a.permissions.phone),
      network: b(a.permissions.network),
    })),
    user_surroundings: [
      {
        id: 1,
        name: sr.name,
        phone_number: sr.phone_number,
        is_abroad: b(sr.is_abroad),
        roaming_allowed: b(sr.roaming_allowed),
        mobile_data_usage_exceeded: b(sr.mobile_data_usage_exceeded),
        line_active: b(sr.line_active),
        payment_bill_id: sr.payment_request?.bill_id ?? null,
        payment_amount_due: sr.payment_request?.amount_due ?? null,
        payment_paid: sr.payment_request ? b(sr.payment_request.paid) : null,
      },
    ],
    user_signal_strength: [...sr.signal_strength].map(([technology, strength], position) => ({
      technology,
      position,
      strength,
    })),
  };
}

/** Rows of the carrier's tables → a `TelecomDB` document (lists in `position` order). */
export function agentFromRows(rows: Partial<Record<TelecomTable, readonly SqlRow[]>>): AgentDb {
  const pms = groupByParent(rows.customer_payment_methods, 'customer_id');
  const lineIds = groupByParent(rows.customer_line_ids, 'customer_id');
  const billIds = groupByParent(rows.customer_bill_ids, 'customer_id');
  const items = groupByParent(rows.bill_line_items, 'bill_id');
  return {
    plans: inPositionOrder(rows.plans).map((p) => ({
      plan_id: s(p.plan_id),
      name: s(p.name),
      data_limit_gb: n(p.data_limit_gb),
      price_per_month: n(p.price_per_month),
      data_refueling_price_per_gb: n(p.data_refueling_price_per_gb),
    })),
    customers: inPositionOrder(rows.customers).map((c) => {
      const id = s(c.customer_id);
      return {
        customer_id: id,
        full_name: s(c.full_name),
        date_of_birth: s(c.date_of_birth),
        email: s(c.email),
        phone_number: s(c.phone_number),
        address: { street: s(c.street), city: s(c.city), state: s(c.state), zip_code: s(c.zip_code) },
        account_status: s(c.account_status) as AgentDb['customers'][number]['account_status'],
        payment_methods: (pms.get(id) ?? []).map((m) => ({
          method_type: s(m.method_type) as AgentDb['customers'][number]['payment_methods'][number]['method_type'],
          account_number_last_4: s(m.account_number_last_4),
          expiration_date: s(m.expiration_date),
        })),
        line_ids: (lineIds.get(id) ?? []).map((r) => s(r.line_id)),
        bill_ids: (billIds.get(id) ?? []).map((r) => s(r.bill_id)),
        created_at: s(c.created_at),
        last_extension_date: sn(c.last_extension_date),
        goodwill_credit_used_this_year: n(c.goodwill_credit_used_this_year),
      };
    }),
    lines: inPositionOrder(rows.lines).map((l) => ({
      line_id: s(l.line_id),
      phone_number: s(l.phone_number),
      status: s(l.status) as AgentDb['lines'][number]['status'],
      plan_id: s(l.plan_id),
      device_id: sn(l.device_id),
      data_used_gb: n(l.data_used_gb),
      data_refueling_gb: n(l.data_refueling_gb),
      roaming_enabled: bool(l.roaming_enabled),
      contract_end_date: sn(l.contract_end_date),
      last_plan_change_date: sn(l.last_plan_change_date),
      last_sim_replacement_date: sn(l.last_sim_replacement_date),
      suspension_start_date: sn(l.suspension_start_date),
    })),
    bills: inPositionOrder(rows.bills).map((r) => ({
      bill_id: s(r.bill_id),
      customer_id: s(r.customer_id),
      period_start: s(r.period_start),
      period_end: s(r.period_end),
      issue_date: s(r.issue_date),
      total_due: n(r.total_due),
      due_date: s(r.due_date),
      line_items: (items.get(s(r.bill_id)) ?? []).map((i) => ({
        description: s(i.description),
        amount: n(i.amount),
        date: s(i.date),
        item_type: s(i.item_type),
      })),
      status: s(r.status) as AgentDb['bills'][number]['status'],
    })),
    devices: inPositionOrder(rows.devices).map((d) => ({
      device_id: s(d.device_id),
      device_type: s(d.device_type) as AgentDb['devices'][number]['device_type'],
      model: s(d.model),
      imei: sn(d.imei),
      is_esim_capable: bool(d.is_esim_capable),
      activated: bool(d.activated),
      activation_date: sn(d.activation_date),
      last_esim_transfer_date: sn(d.last_esim_transfer_date),
    })),
  };
}

/** Rows of the caller's tables → a `TelecomUserDB` document. */
export function userFromRows(rows: Partial<Record<TelecomTable, readonly SqlRow[]>>): UserDb {
  const d = rows.user_device?.[0];
  const sr = rows.user_surroundings?.[0];
  if (!d || !sr) throw new Error('tau2-telecom: the caller-side tables user_device and user_surroundings are empty');
  type Phone = UserDb['device'];
  return {
    device: {
      sim_card_status: s(d.sim_card_status) as Phone['sim_card_status'],
      sim_card_missing: bool(d.sim_card_missing),
      airplane_mode: bool(d.airplane_mode),
      network_signal_strength: s(d.network_signal_strength) as Phone['network_signal_strength'],
      network_technology_connected: s(d.network_technology_connected) as Phone['network_technology_connected'],
      network_connection_status: s(d.network_connection_status) as Phone['network_connection_status'],
      battery_level: n(d.battery_level),
      data_enabled: bool(d.data_enabled),
      roaming_enabled: bool(d.roaming_enabled),
      network_mode_preference: s(d.network_mode_preference) as Phone['network_mode_preference'],
      active_apn_settings: {
        apn_name: s(d.apn_name) as Phone['active_apn_settings']['apn_name'],
        reset_at_reboot: bool(d.apn_reset_at_reboot),
        mms_apn: sn(d.apn_mms_apn),
        mmsc_url: sn(d.apn_mmsc_url),
        mms_proxy: sn(d.apn_mms_proxy),
        mms_port: (d.apn_mms_port ?? null) as number | null,
      },
      wifi_enabled: bool(d.wifi_enabled),
      wifi_connected: bool(d.wifi_connected),
      wifi_ssid: sn(d.wifi_ssid),
      wifi_signal_strength: s(d.wifi_signal_strength) as Phone['wifi_signal_strength'],
      wifi_calling_enabled: bool(d.wifi_calling_enabled),
      wifi_calling_mms_over_wifi: bool(d.wifi_calling_mms_over_wifi),
      data_saver_mode: bool(d.data_saver_mode),
      vpn_enabled_setting: bool(d.vpn_enabled_setting),
      vpn_connected: bool(d.vpn_connected),
      vpn_details: bool(d.vpn_details_set)
        ? {
            server_address: sn(d.vpn_server_address),
            protocol: sn(d.vpn_protocol),
            server_performance: s(d.vpn_server_performance) as NonNullable<Phone['vpn_details']>['server_performance'],
          }
        : null,
      app_statuses: new Map(
        inPositionOrder(rows.user_apps).map((a) => [
          s(a.app_key),
          {
            app_name: s(a.app_name),
            permissions: {
              sms: bool(a.sms),
              storage: bool(a.storage),
              phone: bool(a.phone),
              network: bool(a.network),
            },
          },
        ]),
      ),
    },
    surroundings: {
      name: sn(sr.name),
      phone_number: sn(sr.phone_number),
      is_abroad: bool(sr.is_abroad),
      roaming_allowed: bool(sr.roaming_allowed),
      signal_strength: new Map(
        inPositionOrder(rows.user_signal_strength).map((r) => [
          s(r.technology),
          s(r.strength) as UserDb['surroundings']['signal_strength'] extends Map<string, infer V> ? V : never,
        ]),
      ),
      mobile_data_usage_exceeded: bool(sr.mobile_data_usage_exceeded),
      line_active: bool(sr.line_active),
      payment_request:
        sr.payment_bill_id == null
          ? null
          : { bill_id: s(sr.payment_bill_id), amount_due: n(sr.payment_amount_due), paid: bool(sr.payment_paid) },
    },
  };
}

/** Both databases of one episode, as tau2's tools see them. */
export interface TelecomState {
  agent: AgentDb;
  user: UserDb;
}

async function readTables(db: Pick<ToolDb, 'all'>, tables: readonly TelecomTable[]) {
  const out: Partial<Record<TelecomTable, SqlRow[]>> = {};
  for (const t of tables) out[t] = await db.all(`SELECT * FROM "${t}"`);
  return out;
}

/** Read both databases of the episode. */
export async function loadState(db: Pick<ToolDb, 'all'>): Promise<TelecomState> {
  const rows = await readTables(db, [...AGENT_TABLES, ...USER_TABLES]);
  return { agent: agentFromRows(rows), user: userFromRows(rows) };
}

/** Rows of both databases. */
export function stateRows(state: TelecomState): Rows {
  return { ...agentRows(state.agent), ...userRows(state.user) } as Rows;
}

const rowKey = (table: TelecomTable, row: SqlRow): string =>
  JSON.stringify(TELECOM_TABLES[table].map((c) => row[c] ?? null));

/**
 * Write the difference between two states: per table, rows whose key vanished are deleted,
 * changed columns of kept rows updated, new rows inserted (deletes first, then updates and
 * inserts in dependency order). Only parameters carry values; table and column names are the
 * schema's own.
 */
export async function saveState(db: ToolDb, before: TelecomState, after: TelecomState): Promise<void> {
  const old = stateRows(before);
  const now = stateRows(after);
  const order = Object.keys(TELECOM_TABLES) as TelecomTable[];
  for (const table of [...order].reverse()) {
    const keep = new Set(now[table].map((r) => rowKey(table, r)));
    for (const row of old[table]) {
      if (keep.has(rowKey(table, row))) continue;
      const pk = TELECOM_TABLES[table];
      await db.run(
        `DELETE FROM "${table}" WHERE ${pk.map((c) => `"${c}" = ?`).join(' AND ')}`,
        pk.map((c) => row[c] ?? null),
      );
    }
  }
  for (const table of order) {
    const was = new Map(old[table].map((r) => [rowKey(table, r), r]));
    const pk = TELECOM_TABLES[table];
    for (const row of now[table]) {
      const prev = was.get(rowKey(table, row));
      if (!prev) {
        const cols = Object.keys(row);
        await db.run(
          `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
          cols.map((c) => row[c] ?? null),
        );
        continue;
      }
      const changed = Object.keys(row).filter((c) => (row[c] ?? null) !== (prev[c] ?? null));
      if (changed.length === 0) continue;
      await db.run(
        `UPDATE "${table}" SET ${changed.map((c) => `"${c}" = ?`).join(', ')} WHERE ${pk.map((c) => `"${c}" = ?`).join(' AND ')}`,
        [...changed.map((c) => row[c] ?? null), ...pk.map((c) => row[c] ?? null)],
      );
    }
  }
}

/** A deep copy of a state (documents hold Maps for dicts). */
export function cloneState(state: TelecomState): TelecomState {
  return structuredClone(state);
}
