/**
 * The gate's lint of ambiguous `communicate_info` items: an item is ambiguous when two readings
 * of the task text give different numbers, so an agent that follows one reading fails
 * `COMMUNICATE` through no fault of its own.
 *
 * The two readings ("which moment of the call does the caller's question mean?"):
 * - **start reading**: the number as the database holds it when the call starts — each read
 *   action of the reference solution (`evaluation_criteria.actions`, agent reads) run on the
 *   task's initial state;
 * - **end reading**: the number once the reference's writes are done — the same read actions run
 *   again after the whole reference solution (the gold state).
 *
 * A numeric item (`36.5`, `200`; see {@link numberItem}) is located in the reads' results: every
 * numeric leaf of the JSON result, addressed as `<tool>#<action index>.<json path>` (e.g.
 * `find_customer_by_phone#0.prepaid_balance`). The item is
 * - *stable* when some address holds the item in both readings (the bill's `amount`): fine;
 * - *ungrounded* when no address holds it in either reading (a policy limit, a sum the agent
 *   computes): not this lint's business;
 * - otherwise it holds in one reading only, and the other reading gives another number at the
 *   same address (the balance: 100 at the start, 36.5 at the end). It is **ambiguous** unless the
 *   caller's text ({@link callerCardText}) names the moment it means with a cue of that reading
 *   ({@link READING_CUES}: "缴完后…还剩", "after", "remaining" for the end; "之前", "before",
 *   "currently" for the start).
 *
 * Items of tasks without writes never change between the readings and are never ambiguous.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { toolsFor } from '../schema/domain.ts';
import { callerCardText, type Task } from '../schema/task.ts';
import { numberItem } from '../scoring/communicate.ts';
import { sameNumber } from '../scoring/spoken-numbers.ts';

/** A moment of the call a communicate item may mean. */
export type Reading = 'start' | 'end';

/**
 * Words in the caller's text that name the moment (lower-case substrings; Mandarin and English).
 * End: the state after the caller's request is done; start: the state as it is before anything
 * is changed. Ours, written for carrier's and tau2-bench's task texts.
 */
export const READING_CUES: Readonly<Record<Reading, readonly string[]>> = {
  end: [
    '之后',
    '以后',
    '完后',
    '完了',
    '还剩',
    '剩下',
    '剩余',
    '剩多少',
    'after',
    'afterwards',
    'remaining',
    'left over',
    'leftover',
    'what is left',
    "what's left",
  ],
  start: ['之前', '以前', '原来', '目前', '当前', 'before', 'currently', 'at the moment', 'right now'],
};

/** One ambiguous item, with both readings' numbers. */
export interface AmbiguousCommunicateItem {
  /** Index in `evaluation_criteria.communicate_info`. */
  index: number;
  /** `evaluation_criteria.communicate_info[<index>]`. */
  field: string;
  item: string;
  /** Where the item is read: `<tool>#<action index>.<json path>`. */
  at: string;
  /** The reading that gives the item. */
  reading: Reading;
  /** The number at `at` in the start reading and in the end reading. */
  start: number;
  end: number;
  /** `communicate item "36.5" is ambiguous: the caller's text does not say whether it means … when the call starts (100) or after the reference's writes (36.5)` */
  message: string;
}

/** Numeric leaves of a JSON value by path (`bills[0].outstanding`). */
function numericLeaves(value: unknown, path: string, out: Map<string, number>): Map<string, number> {
  if (typeof value === 'number' && Number.isFinite(value)) out.set(path, value);
  else if (Array.isArray(value)) value.forEach((v, i) => numericLeaves(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) numericLeaves(v, path ? `${path}.${k}` : k, out);
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Both readings of the reference's agent reads: address → number. Runs on one fresh
 * environment: the reads, then the whole reference solution, then the reads again.
 */
export async function communicateReadings(
  runtime: DomainRuntime,
  task: Task,
): Promise<Record<Reading, Map<string, number>>> {
  const actions = task.evaluation_criteria?.actions ?? [];
  const kinds = new Map(toolsFor(runtime.domain, 'assistant').map((t) => [t.name, t.kind]));
  const reads = [...actions.entries()].filter(([, a]) => a.requestor === 'assistant' && kinds.get(a.name) === 'read');
  const out: Record<Reading, Map<string, number>> = { start: new Map(), end: new Map() };
  if (reads.length === 0) return out;
  const env = await runtime.open(task);
  try {
    let n = 0;
    const readAll = async (into: Map<string, number>) => {
      for (const [i, a] of reads) {
        const r = await env.call({ id: `readings-${n++}`, name: a.name, arguments: structuredClone(a.arguments) });
        if (!r.error) numericLeaves(parseJson(r.content), `${a.name}#${i}`, into);
      }
    };
    await readAll(out.start);
    for (const a of actions)
      await env.call({ id: `readings-${n++}`, name: a.name, arguments: structuredClone(a.arguments) }, a.requestor);
    await readAll(out.end);
  } finally {
    await env.close();
  }
  return out;
}

/** True when `text` names the moment `reading` with one of its {@link READING_CUES}. */
export function namesReading(text: string, reading: Reading): boolean {
  const t = text.toLowerCase();
  return READING_CUES[reading].some((c) => t.includes(c));
}

/**
 * The ambiguous numeric communicate items of `task` (see the module comment for the readings).
 * One entry per ambiguous item, at the first address that shows it, in item order.
 */
export async function ambiguousCommunicateItems(
  runtime: DomainRuntime,
  task: Task,
): Promise<AmbiguousCommunicateItem[]> {
  const items = task.evaluation_criteria?.communicate_info ?? [];
  const numeric = items
    .map((item, index) => ({ item, index, value: numberItem(item) }))
    .filter((x) => x.value !== null);
  if (numeric.length === 0) return [];
  const readings = await communicateReadings(runtime, task);
  const text = callerCardText(task);
  const out: AmbiguousCommunicateItem[] = [];
  for (const { item, index, value } of numeric) {
    const holds = (r: Reading, at: string) => {
      const v = readings[r].get(at);
      return v !== undefined && sameNumber(v, value!);
    };
    const addresses = new Set([...readings.start.keys(), ...readings.end.keys()]);
    if ([...addresses].some((at) => holds('start', at) && holds('end', at))) continue;
    for (const at of addresses) {
      const start = readings.start.get(at);
      const end = readings.end.get(at);
      if (start === undefined || end === undefined) continue;
      const reading: Reading | null = holds('end', at) ? 'end' : holds('start', at) ? 'start' : null;
      if (!reading || namesReading(text, reading)) continue;
      out.push({
        index,
        field: `evaluation_criteria.communicate_info[${index}]`,
        item,
        at,
        reading,
        start,
        end,
        message: `communicate item ${JSON.stringify(item)} is ambiguous: the caller's text does not say whether it means ${at} when the call starts (${start}) or after the reference's writes (${end})`,
      });
      break;
    }
  }
  return out;
}
