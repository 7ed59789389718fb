/**
 * What ties tau2-bench telecom's two sides together: running a function over both databases of an
 * episode ({@link withState}), the state sync after every call ({@link syncTelecom}, tau2's
 * `TelecomEnvironment.sync_tools`), the task setup (`initialization_actions`: any tool or helper
 * function of either side by name), the env assertions, and tau2's hashes of both databases.
 */
import { z } from 'zod';
import { DomainFileError, ToolError, type EnvFunction, type ToolDb } from '../../src/core/schema/domain.ts';
import type { Task } from '../../src/core/schema/task.ts';
import { tau2DbHash } from '../../src/core/tau2/db-hash.ts';
import { pyFloatRepr } from '../../src/core/tau2/py-json.ts';
import * as carrier from './carrier.ts';
import { agentModelDump, userModelDump } from './model.ts';
import { PhoneSim } from './phone.ts';
import { cloneState, loadState, saveState, type TelecomState } from './store.ts';

/** tau2's "today" in telecom (`get_today()`), as the policy clock's date in US Eastern time (UTC−5 in February). */
export function telecomToday(nowMs: number): string {
  return new Date(nowMs - 5 * 3_600_000).toISOString().slice(0, 10);
}

/** Both sides of one state, ready for the carrier and phone functions. */
export interface Sides {
  carrier: carrier.Carrier;
  phone: PhoneSim;
}

function sides(state: TelecomState, nowMs: number): Sides {
  return { carrier: { db: state.agent, today: telecomToday(nowMs) }, phone: new PhoneSim(state.user) };
}

/**
 * Run `fn` over the episode's state and write back what it changed. A {@link ToolError} leaves
 * the database as it was (the environment rolls the call back).
 */
export async function withState<T>(db: ToolDb, nowMs: number, fn: (s: Sides) => T): Promise<T> {
  const before = await loadState(db);
  const after = cloneState(before);
  const result = fn(sides(after, nowMs));
  await saveState(db, before, after);
  return result;
}

/** Run a read-only `fn` over the episode's state. */
export async function readState<T>(db: Pick<ToolDb, 'all'>, nowMs: number, fn: (s: Sides) => T): Promise<T> {
  return fn(sides(await loadState(db), nowMs));
}

/**
 * tau2's state sync: when the caller's phone number is known, the caller's surroundings follow
 * their line (active or not, roaming allowed or not, data allowance used up or not); a payment the
 * caller made marks its bill paid and clears the request; and with no request pending, the
 * first bill awaiting payment becomes the caller's payment request.
 * @throws Error (a task defect, not the caller's) when the number has no line or the line no plan.
 */
export function syncSides({ carrier: c, phone }: Sides): void {
  const s = phone.db.surroundings;
  if (s.phone_number === null) return;
  let line: ReturnType<typeof carrier.lineByPhone>;
  let plan: ReturnType<typeof carrier.planById>;
  try {
    line = carrier.lineByPhone(c, s.phone_number);
    plan = carrier.planById(c, line.plan_id);
  } catch (e) {
    throw new Error(`tau2-telecom sync: ${(e as Error).message} (the caller's phone number ${s.phone_number})`);
  }
  s.line_active = line.status === 'Active';
  s.roaming_allowed = line.roaming_enabled;
  s.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb;
  if (s.payment_request?.paid) {
    carrier.billById(c, s.payment_request.bill_id).status = 'Paid';
    s.payment_request = null;
  }
  if (s.payment_request === null) {
    const bill = carrier.billsAwaitingPayment(c, carrier.customerByPhone(c, s.phone_number))[0];
    if (bill) s.payment_request = { bill_id: bill.bill_id, amount_due: bill.total_due, paid: false };
  }
}

/** The domain's `syncState`: {@link syncSides} on the episode database. */
export async function syncTelecom(db: ToolDb, nowMs: number): Promise<void> {
  await withState(db, nowMs, syncSides);
}

// --- functions by name (task setup and assertions) -----------------------------------------

type Args = Record<string, unknown>;
const S = z.string();
const B = z.boolean();
const N = z.number();

/** A function of one side that tau2's tasks may name, with its argument schema. */
interface SideFunction {
  args: z.ZodObject;
  run(s: Sides, a: Args): unknown;
}
const fnOf = <A extends z.ZodRawShape>(
  shape: A,
  run: (s: Sides, a: z.output<z.ZodObject<A>>) => unknown,
): SideFunction => ({
  args: z.strictObject(shape),
  run: run as SideFunction['run'],
});

const line = { customer_id: S, line_id: S };

/** Carrier-side functions a task's setup may call (`env_type: assistant`). */
const AGENT_SETUP: Record<string, SideFunction> = {
  set_data_usage: fnOf({ ...line, data_used_gb: N }, (s, a) =>
    carrier.setDataUsage(s.carrier, a.customer_id, a.line_id, a.data_used_gb),
  ),
  suspend_line_for_overdue_bill: fnOf({ ...line, new_bill_id: S, contract_ended: B }, (s, a) =>
    carrier.suspendLineForOverdueBill(s.carrier, a.customer_id, a.line_id, a.new_bill_id, a.contract_ended),
  ),
  enable_roaming: fnOf(line, (s, a) => carrier.setRoaming(s.carrier, a.customer_id, a.line_id, true)),
  disable_roaming: fnOf(line, (s, a) => carrier.setRoaming(s.carrier, a.customer_id, a.line_id, false)),
  suspend_line: fnOf({ ...line, reason: S }, (s, a) => carrier.suspendLine(s.carrier, a.customer_id, a.line_id)),
  resume_line: fnOf(line, (s, a) => carrier.resumeLine(s.carrier, a.customer_id, a.line_id)),
  refuel_data: fnOf({ ...line, gb_amount: N }, (s, a) =>
    carrier.refuelData(s.carrier, a.customer_id, a.line_id, a.gb_amount),
  ),
  send_payment_request: fnOf({ customer_id: S, bill_id: S }, (s, a) =>
    carrier.sendPaymentRequest(s.carrier, a.customer_id, a.bill_id),
  ),
};

/** Caller-side functions a task's setup may call (`env_type: user`). */
const USER_SETUP: Record<string, SideFunction> = {
  set_user_info: fnOf({ name: S, phone_number: S }, (s, a) => {
    s.phone.db.surroundings.name = a.name;
    s.phone.db.surroundings.phone_number = a.phone_number;
  }),
  set_user_location: fnOf({ abroad: B }, (s, a) => {
    s.phone.db.surroundings.is_abroad = a.abroad;
  }),
  turn_airplane_mode_on: fnOf({}, (s) => s.phone.setAirplane(true)),
  turn_airplane_mode_off: fnOf({}, (s) => s.phone.setAirplane(false)),
  turn_data_off: fnOf({}, (s) => s.phone.turnDataOff()),
  turn_data_on: fnOf({}, (s) => {
    s.phone.device.data_enabled = true;
  }),
  turn_roaming_on: fnOf({}, (s) => s.phone.setRoaming(true)),
  turn_roaming_off: fnOf({}, (s) => s.phone.setRoaming(false)),
  turn_data_saver_mode_on: fnOf({}, (s) => s.phone.setDataSaver(true)),
  turn_data_saver_mode_off: fnOf({}, (s) => s.phone.setDataSaver(false)),
  unseat_sim_card: fnOf({}, (s) => s.phone.unseatSimCard()),
  lock_sim_card: fnOf({ mode: z.enum(['pin', 'puk']) }, (s, a) => s.phone.lockSimCard(a.mode)),
  break_apn_settings: fnOf({}, (s) => s.phone.breakApnSettings()),
  break_apn_mms_setting: fnOf({}, (s) => s.phone.breakApnMmsSetting()),
  break_vpn: fnOf({}, (s) => s.phone.breakVpn()),
  remove_app_permission: fnOf({ app_name: S, permission: S }, (s, a) =>
    s.phone.setPermission(a.app_name, a.permission, false),
  ),
  set_network_mode_preference: fnOf({ mode: S }, (s, a) => s.phone.setNetworkModePreference(a.mode)),
  set_wifi_calling: fnOf({ enabled: B, mms_over_wifi: B.nullable().optional() }, (s, a) =>
    s.phone.setWifiCalling(a.enabled, a.mms_over_wifi ?? null),
  ),
  simulate_network_search: fnOf({}, (s) => s.phone.networkSearch()),
  toggle_airplane_mode: fnOf({}, (s) => s.phone.toggleAirplaneMode()),
  toggle_data: fnOf({}, (s) => s.phone.toggleData()),
  toggle_roaming: fnOf({}, (s) => s.phone.toggleRoaming()),
  toggle_data_saver_mode: fnOf({}, (s) => s.phone.toggleDataSaverMode()),
  reseat_sim_card: fnOf({}, (s) => s.phone.reseatSimCard()),
  reset_apn_settings: fnOf({}, (s) => s.phone.resetApnSettings()),
  reboot_device: fnOf({}, (s) => s.phone.rebootDevice()),
  connect_vpn: fnOf({}, (s) => s.phone.connectVpn()),
  disconnect_vpn: fnOf({}, (s) => s.phone.disconnectVpn()),
  toggle_wifi: fnOf({}, (s) => s.phone.toggleWifi()),
  toggle_wifi_calling: fnOf({}, (s) => s.phone.toggleWifiCalling()),
  grant_app_permission: fnOf({ app_name: S, permission: S }, (s, a) =>
    s.phone.grantAppPermission(a.app_name, a.permission),
  ),
  make_payment: fnOf({}, (s) => s.phone.makePayment(pyFloatRepr)),
};

/** The setup functions of each side, by tau2's `env_type`. */
export const SETUP_FUNCTIONS = { assistant: AGENT_SETUP, user: USER_SETUP } as const;

const InitAction = z.strictObject({
  env_type: z.enum(['assistant', 'user']),
  func_name: z.string(),
  arguments: z.record(z.string(), z.unknown()).default({}),
});

/**
 * The domain's `setupTask`: run the task's `initialization_actions` in order, each followed by
 * the state sync, then sync once more (tau2's `set_state`).
 * @throws DomainFileError naming the action when it is malformed, names an unknown function, or
 *   fails.
 */
export async function setupTelecomTask(
  db: ToolDb,
  nowMs: number,
  task: Task,
  where: { file: string; field: string },
): Promise<void> {
  const actions = task.initial_state?.initialization_actions ?? [];
  for (const [i, raw] of actions.entries()) {
    const field = `${where.field}.initial_state.initialization_actions[${i}]`;
    const fail = (message: string): never => {
      throw new DomainFileError(where.file, field, `${message} (task ${task.id})`);
    };
    const action = InitAction.safeParse(raw);
    if (!action.success) return fail(action.error.issues[0]!.message);
    const { env_type, func_name } = action.data;
    const table: Record<string, SideFunction> = SETUP_FUNCTIONS[env_type];
    const fn = Object.hasOwn(table, func_name) ? table[func_name] : undefined;
    if (!fn) return fail(`unknown ${env_type === 'user' ? 'caller' : 'carrier'} function "${func_name}"`);
    const args = fn.args.safeParse(action.data.arguments);
    if (!args.success) return fail(`arguments of ${func_name}: ${args.error.issues[0]!.message}`);
    try {
      await withState(db, nowMs, (s) => {
        fn.run(s, args.data);
        syncSides(s);
      });
    } catch (e) {
      if (e instanceof ToolError) return fail(`${func_name} failed: ${e.message}`);
      throw e;
    }
  }
  await syncTelecom(db, nowMs);
}

/** tau2's telecom clock (`get_now()`: 2025-02-25 12:08), as US Eastern time. */
export const TAU2_TELECOM_NOW_MS = Date.parse('2025-02-25T12:08:00-05:00');

const assertion = <A extends z.ZodRawShape>(
  shape: A,
  check: (s: Sides, a: z.output<z.ZodObject<A>>) => boolean,
): EnvFunction => {
  const schema = z.strictObject(shape);
  return async (db, args) => {
    const parsed = schema.safeParse(args);
    if (!parsed.success) throw new ToolError(`invalid arguments: ${parsed.error.issues[0]!.message}`);
    return readState(db, TAU2_TELECOM_NOW_MS, (s) => check(s, parsed.data));
  };
};

/** tau2's telecom assertion functions of both sides, by name (they do not clash). */
export const TELECOM_ENV_FUNCTIONS: Readonly<Record<string, EnvFunction>> = {
  assert_data_refueling_amount: assertion({ ...line, expected_amount: N }, (s, a) =>
    carrier.assertDataRefuelingAmount(s.carrier, a.customer_id, a.line_id, a.expected_amount),
  ),
  assert_line_status: assertion({ ...line, expected_status: S }, (s, a) =>
    carrier.assertLineStatus(s.carrier, a.customer_id, a.line_id, a.expected_status),
  ),
  assert_overdue_bill_exists: assertion({ customer_id: S, overdue_bill_id: S }, (s, a) =>
    carrier.assertOverdueBillExists(s.carrier, a.customer_id, a.overdue_bill_id),
  ),
  assert_no_overdue_bill: assertion({ overdue_bill_id: S }, (s, a) =>
    carrier.assertNoOverdueBill(s.carrier, a.overdue_bill_id),
  ),
  assert_airplane_mode_status: assertion(
    { expected_status: B },
    (s, a) => s.phone.device.airplane_mode === a.expected_status,
  ),
  assert_service_status: assertion({ expected_status: S }, (s, a) => s.phone.serviceStatusIs(a.expected_status)),
  assert_mobile_data_status: assertion(
    { expected_status: B },
    (s, a) => s.phone.mobileDataWorking() === a.expected_status,
  ),
  assert_mobile_roaming_status: assertion(
    { expected_status: B },
    (s, a) => s.phone.device.roaming_enabled === a.expected_status,
  ),
  assert_mobile_data_saver_mode_status: assertion(
    { expected_status: B },
    (s, a) => s.phone.device.data_saver_mode === a.expected_status,
  ),
  assert_internet_speed: assertion({ expected_speed: N, expected_desc: S.nullable().optional() }, (s, a) =>
    s.phone.internetSpeedAtLeast(a.expected_speed, a.expected_desc ?? null),
  ),
  assert_internet_not_excellent: assertion({}, (s) => s.phone.speedTest().label.toLowerCase() !== 'excellent'),
  assert_can_send_mms: assertion({ expected_status: B }, (s, a) => s.phone.canSendMms() === a.expected_status),
  assert_mobile_data_usage_exceeded: assertion(
    { expected_status: B },
    (s, a) => s.phone.db.surroundings.mobile_data_usage_exceeded === a.expected_status,
  ),
};

/**
 * tau2's hashes of the episode's two databases (`get_db_hash`, `get_user_db_hash`): sha256 of
 * `json.dumps(model_dump(), sort_keys=True, default=str)`.
 */
export async function telecomHashes(db: Pick<ToolDb, 'all'>): Promise<{ db: string; user_db: string }> {
  const state = await loadState(db);
  return { db: await tau2DbHash(agentModelDump(state.agent)), user_db: await tau2DbHash(userModelDump(state.user)) };
}
