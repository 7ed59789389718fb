/** Shared setup for the carrier domain tests: one runtime per test file, fresh env per test. */
import { expect } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment, type ToolOutcome } from '../../src/core/env/index.ts';
import type { Domain, Requestor, WriteEntry } from '../../src/core/schema/index.ts';

let cached: Promise<{ domain: Domain; runtime: DomainRuntime }> | undefined;

/** The carrier domain and its runtime, built once per test file. */
export function carrierRuntime(): Promise<{ domain: Domain; runtime: DomainRuntime }> {
  cached ??= (async () => {
    const domain = await loadBuiltinDomain('carrier');
    return { domain, runtime: await DomainRuntime.create(domain, await sqlJsFactory()) };
  })();
  return cached;
}

let callNo = 0;

/** Run one tool call. */
export function call(
  env: Environment,
  name: string,
  args: Record<string, unknown>,
  actor: Requestor = 'assistant',
): Promise<ToolOutcome> {
  callNo += 1;
  return env.call({ id: `call-${callNo}`, name, arguments: args }, actor);
}

/** Run a call that must succeed; returns its parsed JSON content. */
export async function ok(
  env: Environment,
  name: string,
  args: Record<string, unknown>,
  actor: Requestor = 'assistant',
): Promise<unknown> {
  const out = await call(env, name, args, actor);
  expect(out.error, out.content).toBe(false);
  return JSON.parse(out.content);
}

/** Run a call that must fail without writing; returns its content (`Error: …`). */
export async function fails(
  env: Environment,
  name: string,
  args: Record<string, unknown>,
  actor: Requestor = 'assistant',
): Promise<string> {
  const out = await call(env, name, args, actor);
  expect(out.error, out.content).toBe(true);
  expect(out.writes).toEqual([]);
  return out.content;
}

/** One expected write-log entry (turn -1: calls made outside a trajectory). */
export function w(
  seq: number,
  tool: string,
  table: string,
  op: WriteEntry['op'],
  key: WriteEntry['key'],
  column: string,
  before: WriteEntry['before'],
  after: WriteEntry['after'],
  actor: Requestor = 'assistant',
): WriteEntry {
  return { seq, turn: -1, actor, tool, table, op, key, column, before, after };
}

/** The column entries of one inserted row, in column order. */
export function inserted(
  firstSeq: number,
  tool: string,
  table: string,
  key: WriteEntry['key'],
  row: Record<string, string | number | null>,
  actor: Requestor = 'assistant',
): WriteEntry[] {
  return Object.entries(row).map(([column, value], i) =>
    w(firstSeq + i, tool, table, 'insert', key, column, null, value, actor),
  );
}
