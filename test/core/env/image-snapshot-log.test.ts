/**
 * A domain whose schema has a trigger of its own is not replayable: its snapshots are database
 * images, and after one (or after restoring one) the environment goes on in a transaction the
 * write log joins again. A call that fails there, by a ToolError after a write or by a statement
 * refused part-way, leaves no write in the log, the next call's writes or the episode's changes.
 * A schema with a generated column is refused, naming the file and the column.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { buildDomain, DomainFileError, defineDomain, defineTool, ToolError } from '../../../src/core/schema/domain.ts';
import { execTool } from './exec-tool.ts';

const SCHEMA = `
CREATE TABLE items (id TEXT PRIMARY KEY, qty INTEGER NOT NULL CHECK (qty < 100));
CREATE TABLE audit (id INTEGER PRIMARY KEY, qty INTEGER);
CREATE TRIGGER audit_items AFTER INSERT ON items BEGIN INSERT INTO audit (qty) VALUES (NEW.qty); END;
`;

const writeThenRefuse = defineTool({
  name: 'write_then_refuse',
  kind: 'write',
  description: 'inserts an item, then refuses the call',
  params: z.object({ id: z.string() }),
  async run({ db }, { id }) {
    await db.run('INSERT INTO items (id, qty) VALUES (?, 1)', [id]);
    throw new ToolError('refused after writing');
  },
});

function domain(schema = SCHEMA) {
  return buildDomain(
    defineDomain({
      name: 'image-log',
      language: 'en-US',
      roles: ['inbound'],
      now: 0,
      tools: [execTool, writeThenRefuse],
      greeting: 'hi',
    }),
    {
      policy: '- **R1** x',
      schema,
      seed: JSON.stringify({ items: [{ id: 'a', qty: 1 }] }),
      tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'x' } }]),
    },
  );
}

const exec = (sql: string) => ({ name: 'exec', arguments: { sql, params: [] } });

describe('writes after an image snapshot', () => {
  for (const where of ['after the snapshot', 'after a restore'] as const)
    it(`a failed call leaves no write behind (${where})`, async () => {
      const rt = await DomainRuntime.create(domain(), await inProcessSqlDbFactory());
      try {
        expect(rt.replayable).toBe(false);
        const env = await rt.open();
        await env.call({ id: 'c0', ...exec(`UPDATE items SET qty = 2 WHERE id = 'a'`) }, 'assistant', 0);
        const snap = await env.snapshot();
        expect(snap.image).toBeInstanceOf(Uint8Array);
        const target = where === 'after the snapshot' ? env : await rt.open();
        if (target !== env) await target.restore(snap);
        const refused = await target.call(
          { id: 'c1', name: 'write_then_refuse', arguments: { id: 'x' } },
          'assistant',
          1,
        );
        expect(refused).toMatchObject({ error: true, content: 'Error: refused after writing' });
        const partWay = await target.call(
          { id: 'c2', ...exec(`INSERT INTO items (id, qty) VALUES ('y', 5), ('z', 500)`) },
          'assistant',
          2,
        );
        expect(partWay.error).toBe(true);
        const ok = await target.call({ id: 'c3', ...exec(`UPDATE items SET qty = 3 WHERE id = 'a'`) }, 'assistant', 3);
        expect(ok.writes.map((w) => [w.table, w.key, w.column, w.before, w.after])).toEqual([
          ['items', { id: 'a' }, 'qty', 2, 3],
        ]);
        expect(await target.query('SELECT id, qty FROM items')).toEqual([{ id: 'a', qty: 3 }]);
        const { rows } = await target.changes();
        expect(Object.keys(rows)).toEqual(['items']);
        expect(rows.items).toEqual({
          '["a"]': { key: ['a'], before: { id: 'a', qty: 1 }, after: { id: 'a', qty: 3 } },
        });
        if (target !== env) await target.close();
        await env.close();
      } finally {
        await rt.close();
      }
    });
});

describe('generated columns', () => {
  for (const kind of ['VIRTUAL', 'STORED'])
    it(`a ${kind} generated column is refused, naming schema.sql and the column`, async () => {
      const schema = `CREATE TABLE items (id TEXT PRIMARY KEY, qty INTEGER NOT NULL, twice INTEGER AS (qty * 2) ${kind});`;
      const err = await DomainRuntime.create(domain(schema), await inProcessSqlDbFactory()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainFileError);
      expect(String(err)).toContain('schema.sql');
      expect(String(err)).toContain('items.twice');
      expect(String(err)).toContain('generated columns are not supported');
    });
});
