/**
 * The write log over every reference solution of tau2-airline and tau2-retail: each call's
 * outcome (content, column writes, violations), the episode's changes and snapshot log, and a
 * restore of the snapshot on a fresh environment (its changes and writes), hashed per domain.
 * The hashes were recorded with the JSON-image triggers of 6669501: any other capture must give
 * exactly the same values. Most of tau2-retail's tables are WITHOUT ROWID since
 * session 15 (schema.sql), so its snapshot log records no rowid (`rid` null) for them: the
 * recorded hash is held by the same capture on the schema with those tables as rowid tables, and
 * the capture on the real schema must equal it but for those `rid`s (and give its own hash).
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import type { Tau2DomainName } from '../../src/adapters/node/tau2-loader.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { tau2Runtime } from './tau2-helpers.ts';

async function captured(name: Tau2DomainName, rowidTables = false): Promise<string> {
  let { domain, runtime } = await tau2Runtime(name);
  if (rowidTables) {
    domain = { ...domain, schema: domain.schema.replace(/\) WITHOUT ROWID;/g, ');') };
    runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  }
  const out: unknown[] = [];
  for (const task of domain.tasks) {
    const actions = task.evaluation_criteria?.actions ?? [];
    if (actions.length === 0) continue;
    const env = await runtime.open(task);
    for (const [i, a] of actions.entries()) {
      const r = await env.call({ id: `a${i}`, name: a.name, arguments: a.arguments }, a.requestor ?? 'assistant', i);
      out.push({ task: task.id, i, content: r.content, error: r.error, writes: r.writes, violations: r.violations });
    }
    const snap = await env.snapshot();
    out.push({ task: task.id, changes: await env.changes(), log: snap.log });
    await env.close();
    const again = await runtime.open(task);
    await again.restore(snap);
    out.push({ task: task.id, restored: await again.changes(), writes: again.writes });
    await again.close();
  }
  if (rowidTables) await runtime.close();
  return JSON.stringify(out);
}

/** A capture's text with every snapshot log's rowids dropped. */
function withoutRids(text: string): string {
  const out = JSON.parse(text) as { log?: { rid?: unknown }[] }[];
  for (const x of out) for (const w of x.log ?? []) delete w.rid;
  return JSON.stringify(out);
}

const HASHES: Record<string, string> = {
  'tau2-airline': process.env.SB_EQ_AIRLINE ?? 'a4f5b1d6f9763e4a30288df89fdf278fd5b2679afba9b04a1e5564cd2172e19a',
  'tau2-retail': process.env.SB_EQ_RETAIL ?? 'c960bf00597f8d1b73b231e8c761ed02cbf0d16e505834627cb25f10f0e2f931',
};

/** tau2-retail's hash recorded at 6669501, before any of its tables was WITHOUT ROWID. */
const RETAIL_ROWID_TABLES = '0f1ce9af8867f548540cc615e2e6ff19e505c3f3097a42256b11909bf807334e';

describe('tau2 write log: equal to the JSON-image triggers of 6669501', () => {
  for (const name of ['tau2-airline', 'tau2-retail'] as const) {
    it(`${name}: every reference solution's writes, changes, snapshot log and restore`, async () => {
      const text = await captured(name);
      if (process.env.SB_EQ_DUMP) (await import('node:fs')).writeFileSync(`${process.env.SB_EQ_DUMP}.${name}`, text);
      expect(createHash('sha256').update(text).digest('hex')).toBe(HASHES[name]);
    }, 120_000);
  }

  it('tau2-retail: its WITHOUT ROWID tables change nothing but the snapshot log’s rowids', async () => {
    const rowid = await captured('tau2-retail', true);
    expect(createHash('sha256').update(rowid).digest('hex')).toBe(RETAIL_ROWID_TABLES);
    const real = await captured('tau2-retail');
    expect(real).not.toBe(rowid);
    expect(withoutRids(real)).toBe(withoutRids(rowid));
  }, 120_000);
});
