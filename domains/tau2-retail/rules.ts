/**
 * tau2-bench's retail policy (policy.md at the data commit) as executable rule checks over the
 * write log and the database. Each check quotes the policy text it encodes (`policy`); the gate
 * reports a quote the loaded policy.md lacks. Which rules the tools already enforce, and which
 * cannot be checked from state, is listed in README.md ("Executable policy").
 * `= +?` in queries with an `ORDER BY`, a join or an aggregate: see `../tau2-airline/queries.ts`.
 */
import type { RuleCheck, RuleCheckContext } from '../../src/core/schema/domain.ts';
import type { WriteEntry } from '../../src/core/schema/trajectory.ts';
import { pyRound } from '../../src/core/tau2/py-json.ts';
import { ORDER, ORDER_ITEMS, PAYMENT_METHOD, VARIANT } from './tools.ts';

type Db = RuleCheckContext['db'];

/*
 * The checks of one phase share their reads (a phase's reader runs each distinct query once), and
 * the tool called after the `before` checks gets their rows for the same reads (tools.ts: the
 * order named by a call, its items, the new item of each swap, the payment method).
 *
 * Measured in-process (issue 15 item 2, load 5-8 on 2 vCPUs, medians of 300-400 alternating
 * blocks): the `before` checks make a modify_pending_order_items or exchange_delivered_order_items
 * call ~16% slower than `checks: false` (x0.84, x0.83) and a cancel ~5%; one check making the same
 * four reads costs ~8% less than these checks, the rest is the reader's cost per lookup and the
 * handing of its rows to the tool (src/core/env). Tried and not kept: one shared read of the
 * swaps' rows and gift card for the three item-swap checks (a WeakMap by reader and arguments),
 * x1.03 (slower).
 *
 * Where that ~16% goes (session 14, same process, alternating blocks of 20 calls, 150-300 pairs,
 * load 7-9): the checks' machinery alone (the four item-swap checks returning null at once, so no
 * reader is used; one-user after the call) is ~1% (x0.99 against none of them run, x0.985 for
 * one-user alone); the rest is the checks' own code and lookups: the four of them on a reader
 * that answers from memory (no SQL) take ~9 µs per call, ~1 µs a lookup (an async call, an await,
 * a key and a copy of the rows each), gift-card-covers-difference ~4 µs of it. The reader now keeps
 * a synchronous database's rows without a promise, keys a lone text parameter by itself, and hands
 * the tool the checks' rows without copying them (src/core/env, CheckedReads): x0.982, x0.975,
 * x0.988 (modify_items, exchange, cancel; 300 pairs of 20 calls, load ~9.7); the same with copies
 * of the rows x0.98-0.99.
 */

/** The order's first item (by position) with id `itemId`, as the order's items are read. */
async function orderItem(db: Db, orderId: string, itemId: string) {
  return (await db.all(ORDER_ITEMS, [orderId])).find((it) => it.item_id === itemId);
}

const str = (v: unknown) => String(v);

/** The tools that swap items of an order for other variants. */
const ITEM_SWAPS = ['modify_pending_order_items', 'exchange_delivered_order_items'];

/** `item_ids` / `new_item_ids` of an item swap, paired by position (extra ids unpaired are the tool's error). */
function swaps(args: Record<string, unknown>): [string, string][] {
  const from = Array.isArray(args.item_ids) ? args.item_ids.map(str) : [];
  const to = Array.isArray(args.new_item_ids) ? args.new_item_ids.map(str) : [];
  return from.slice(0, to.length).map((id, i) => [id, to[i]!]);
}

/** A status precondition of the order a call names (`order_id`), checked before the call. */
function statusRule(rule: string, policy: string, tools: readonly string[], status: string, verb: string): RuleCheck {
  return {
    rule,
    description: `An order is ${verb} only when its status is exactly '${status}'.`,
    policy,
    tools,
    when: 'before',
    async check({ db, tool, args }) {
      const o = await db.one(ORDER, [str(args.order_id)]);
      if (!o || o.status === status) return null;
      return `${tool} on order ${str(args.order_id)} with status '${str(o.status)}'`;
    },
  };
}

const cancelPendingOnly = statusRule(
  'cancel-pending-only',
  "An order can only be cancelled if its status is 'pending', and you should check its status before taking the action.",
  ['cancel_pending_order'],
  'pending',
  'cancelled',
);

/** Also after an item modification ('pending (item modified)'): "The agent will not be able to modify or cancel the order anymore." */
const modifyPendingOnly = statusRule(
  'modify-pending-only',
  "An order can only be modified if its status is 'pending', and you should check its status before taking the action.",
  ['modify_pending_order_address', 'modify_pending_order_payment', 'modify_pending_order_items'],
  'pending',
  'modified',
);

const returnDeliveredOnly = statusRule(
  'return-delivered-only',
  "An order can only be returned if its status is 'delivered', and you should check its status before taking the action.",
  ['return_delivered_order_items'],
  'delivered',
  'returned',
);

const exchangeDeliveredOnly = statusRule(
  'exchange-delivered-only',
  "An order can only be exchanged if its status is 'delivered', and you should check its status before taking the action.",
  ['exchange_delivered_order_items'],
  'delivered',
  'exchanged',
);

/**
 * A gift card of the order's user named as `payment_method_id`, with its balance, or null for any
 * other method (two lookups by key; the order's row is the one the status checks read).
 */
async function giftCard(db: Db, orderId: string, paymentMethodId: string): Promise<number | null> {
  const o = await db.one(ORDER, [orderId]);
  if (!o) return null;
  const pm = await db.one(PAYMENT_METHOD, [o.user_id!, paymentMethodId]);
  return pm?.source === 'gift_card' ? Number(pm.balance) : null;
}

const giftCardCoversDifference: RuleCheck = {
  rule: 'gift-card-covers-difference',
  description: 'A gift card that pays the price difference of an item modification or exchange has the balance for it.',
  policy: 'If the user provides a gift card, it must have enough balance to cover the price difference.',
  tools: ['modify_pending_order_items', 'exchange_delivered_order_items'],
  when: 'before',
  async check({ db, args }) {
    const orderId = str(args.order_id);
    const balance = await giftCard(db, orderId, str(args.payment_method_id));
    if (balance === null) return null;
    let diff = 0;
    for (const [from, to] of swaps(args)) {
      const old = await orderItem(db, orderId, from);
      const next = await db.one(VARIANT, [to]);
      if (!old || !next) return null;
      diff += Number(next.price) - Number(old.price);
    }
    diff = pyRound(diff, 2);
    if (balance >= diff) return null;
    return `order ${orderId}: price difference ${diff} charged to ${str(args.payment_method_id)} with balance ${balance}`;
  },
};

const giftCardCoversTotal: RuleCheck = {
  rule: 'gift-card-covers-total',
  description: 'A gift card that becomes the payment method of a pending order has the balance for its total.',
  policy:
    'If the user wants the modify the payment method to gift card, it must have enough balance to cover the total amount.',
  tools: ['modify_pending_order_payment'],
  when: 'before',
  async check({ db, args }) {
    const orderId = str(args.order_id);
    const balance = await giftCard(db, orderId, str(args.payment_method_id));
    if (balance === null) return null;
    const paid = await db.one(
      "SELECT SUM(amount) AS total FROM order_payment_history WHERE order_id = +? AND transaction_type = 'payment'",
      [orderId],
    );
    const total = Number(paid?.total ?? 0);
    if (balance >= total) return null;
    return `order ${orderId}: total ${total} moved to ${str(args.payment_method_id)} with balance ${balance}`;
  },
};

const sameProduct: RuleCheck = {
  rule: 'same-product-type',
  description: 'A modified or exchanged item becomes another variant of the same product, never another product.',
  policy: 'There cannot be any change of product types, e.g. modify shirt to shoe.',
  tools: ITEM_SWAPS,
  when: 'before',
  async check({ db, args }) {
    const orderId = str(args.order_id);
    for (const [from, to] of swaps(args)) {
      const old = await orderItem(db, orderId, from);
      const next = await db.one(VARIANT, [to]);
      if (!old || !next || old.product_id === next.product_id) continue;
      // The products' names, only for the message (an item whose product is missing is not judged).
      const name = async (productId: unknown) =>
        (await db.one('SELECT name FROM products WHERE product_id = ?', [str(productId)]))?.name;
      const [oldName, nextName] = [await name(old.product_id), await name(next.product_id)];
      if (oldName === undefined || nextName === undefined) continue;
      return `order ${orderId}: item ${from} (${str(oldName)}) swapped for item ${to} (${str(nextName)}), another product`;
    }
    return null;
  },
};

const differentOption: RuleCheck = {
  rule: 'different-option',
  description: 'A modified or exchanged item becomes a variant with other options, not the same item.',
  policy: 'an available new item of the same product but of different product option',
  tools: ITEM_SWAPS,
  when: 'before',
  check({ args }) {
    const same = swaps(args).filter(([from, to]) => from === to);
    if (same.length === 0) return null;
    return `order ${str(args.order_id)}: item ${same[0]![0]} swapped for itself`;
  },
};

/**
 * What `one-user` knows of an episode's write log: the users whose records the assistant's writes
 * in `log[0, seen)` touched (`user_id` keys, and the owners of the orders named by `order_id`
 * keys), and the owner of each order id looked up so far (null: no such order). Kept per episode
 * (see {@link priorOwners}) so that a call only reads the log entries added since the last one
 * and looks up each order's owner once: the check is O(1) per call over an episode, where filtering
 * the whole log and looking up every order it names again made each call cost more (tau2-retail,
 * 400 calls: 50 → 65 µs a call).
 */
interface OwnerProgress {
  seen: number;
  /** `log[seen - 1]` when it was read: the log read so far is still a prefix of the one given. */
  last: WriteEntry | undefined;
  owners: Set<string>;
  orderOwners: Map<string, string | null>;
}

/**
 * {@link OwnerProgress} by episode, keyed by the first entry of its write log: the environment
 * hands each phase of checks the same entry objects (its log, or a prefix of it), and a restored or
 * forked episode gets copies (a new key, so its owners are worked out afresh).
 */
const ownerProgress = new WeakMap<WriteEntry, OwnerProgress>();

/**
 * The owner of order `orderId` (null: no such order), looked up once per episode. An order's
 * `user_id` is never written (no retail tool changes it), so an owner read early is the one a
 * read after the call would give.
 */
async function orderOwner(db: Db, p: OwnerProgress, orderId: string): Promise<string | null> {
  let owner = p.orderOwners.get(orderId);
  if (owner === undefined) {
    const o = await db.one('SELECT user_id FROM orders WHERE order_id = ?', [orderId]);
    owner = o ? str(o.user_id) : null;
    p.orderOwners.set(orderId, owner);
  }
  return owner;
}

/** The user whose records write `w` touched (its `user_id` key, or its order's owner), or null. */
async function ownerOf(db: Db, p: OwnerProgress, w: WriteEntry): Promise<string | null> {
  if (typeof w.key.user_id === 'string') return w.key.user_id;
  if (typeof w.key.order_id === 'string') return orderOwner(db, p, w.key.order_id);
  return null;
}

/** The {@link OwnerProgress} of `log` brought up to its end (reading only the entries added since). */
async function priorOwners(db: Db, log: readonly WriteEntry[]): Promise<OwnerProgress | undefined> {
  const first = log[0];
  if (!first) return undefined;
  let p = ownerProgress.get(first);
  if (!p || p.seen > log.length || (p.seen > 0 && log[p.seen - 1] !== p.last)) {
    p = { seen: 0, last: undefined, owners: new Set(), orderOwners: new Map() };
    ownerProgress.set(first, p);
  }
  // The entries of one row write share their key object: its owner is the same.
  let key: WriteEntry['key'] | undefined;
  while (p.seen < log.length) {
    const w = log[p.seen]!;
    if (w.actor === 'assistant' && w.key !== key) {
      key = w.key;
      const owner = await ownerOf(db, p, w);
      if (owner !== null) p.owners.add(owner);
    }
    p.last = w;
    p.seen++;
  }
  return p;
}

/**
 * The users whose records `writes` touched, as the violation message names them: `user_id` keys
 * first, then the owners of the orders named by `order_id` keys (one query).
 */
async function owners(db: Db, writes: readonly WriteEntry[]): Promise<Set<string>> {
  const users = new Set<string>();
  const orders = new Set<string>();
  for (const w of writes) {
    if (typeof w.key.user_id === 'string') users.add(w.key.user_id);
    else if (typeof w.key.order_id === 'string') orders.add(w.key.order_id);
  }
  if (orders.size > 0) {
    const ids = [...orders];
    const rows = await db.all(
      `SELECT DISTINCT user_id FROM orders WHERE order_id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    for (const r of rows) users.add(str(r.user_id));
  }
  return users;
}

const oneUser: RuleCheck = {
  rule: 'one-user',
  description: "Every write of a conversation concerns one user's profile and orders.",
  policy:
    'You can only help one user per conversation (but you can handle multiple requests from the same user), and must deny any requests for tasks related to any other user.',
  check(ctx) {
    // No write before this call (an episode's first): nothing to compare, at once.
    return ctx.log.length === 0 ? null : oneUserAfter(ctx);
  },
};

/**
 * {@link oneUser}'s check of a call with writes before it. The first write of an episode (every
 * call of the tau2-writes bench, on fresh environments) answers at once instead: its check phase
 * 7.5 -> 6.9 µs, cancel_pending_order ×0.983 and modify_pending_order_items ×0.994 (whole calls,
 * the geometric mean of runs with this and the old code in either slot, 30 pairs of 100 calls
 * alternating in one process, load 4.5). Measured and not done (session 15): each write's owner
 * taken without an await when known (a `user_id` key, an order looked up before), and catching
 * up on the log likewise, for calls after the reference actions before them: ×1.00.
 */
async function oneUserAfter({ db, tool, writes, log }: RuleCheckContext): Promise<string | null> {
  const earlier = await priorOwners(db, log);
  if (!earlier || earlier.owners.size === 0) return null;
  let other = false;
  for (const w of writes) {
    const owner = await ownerOf(db, earlier, w);
    if (owner !== null && !earlier.owners.has(owner)) other = true;
  }
  if (!other) return null;
  // A finding (rare): its message names the users in the order the whole log gives them.
  const before = await owners(
    db,
    log.filter((w) => w.actor === 'assistant'),
  );
  for (const u of await owners(db, writes))
    if (!before.has(u)) return `${tool} changed records of user ${u} after writes for ${[...before].join(', ')}`;
  return null;
}

/** The retail policy's rule checks, in policy order. */
export const retailRuleChecks: readonly RuleCheck[] = [
  oneUser,
  cancelPendingOnly,
  modifyPendingOnly,
  giftCardCoversTotal,
  sameProduct,
  differentOption,
  giftCardCoversDifference,
  returnDeliveredOnly,
  exchangeDeliveredOnly,
];
