/**
 * A replayed update sets only the columns the logged update changed (`replayStatement`): which
 * columns those are is read from the two row images' element texts (`arrayElements`), so a
 * change of storage class alone (7 to '7') still counts, and text holding commas, quotes,
 * brackets or escapes splits where `json_array` put the elements. A restore of such updates
 * gives back every value with its storage class.
 */
import { describe, expect, it } from 'vitest';
import { inProcessSqlDbFactory } from '../../../src/adapters/node/worker-db.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { arrayElements, replayStatement, type TableInfo } from '../../../src/core/env/write-log.ts';
import { buildDomain, defineDomain } from '../../../src/core/schema/domain.ts';
import { execTool } from './exec-tool.ts';

const ITEMS: TableInfo = { name: 'items', columns: ['id', 'qty', 'note', 'v'], primaryKey: ['id'], rowid: 'rowid' };

describe('replayStatement: a logged update', () => {
  it('splits json_array texts into their element texts', () => {
    expect(arrayElements('["a",1,0.1,null]')).toEqual(['"a"', '1', '0.1', 'null']);
    expect(arrayElements('["x,\\"y\\"]\\\\",[]')).toBeNull();
    expect(arrayElements('["x,\\"y\\"]\\\\",2]')).toEqual(['"x,\\"y\\"]\\\\"', '2']);
    expect(arrayElements('[]')).toEqual([]);
    expect(arrayElements('{"a":1}')).toBeNull();
    expect(arrayElements('["open')).toBeNull();
  });

  it('sets only the columns whose element text changed', () => {
    const w = { tbl: 'items', op: 'update' as const, old: '["a",1,"n,1",7]', new: '["a",2,"n,1","7"]', rid: 3 };
    expect(replayStatement(ITEMS, w)).toEqual({
      sql: `UPDATE "items" SET "qty" = json_extract(:new, '$[1]'), "v" = json_extract(:new, '$[3]') WHERE rowid = :rid`,
      params: { ':new': w.new, ':old': w.old, ':rid': 3 },
    });
  });

  it('sets every column when an image does not split into one element per column', () => {
    const w = { tbl: 'items', op: 'update' as const, old: '["a",1,"n"]', new: '["a",2,"n"]', rid: 3 };
    expect(replayStatement(ITEMS, w).sql).toBe(
      `UPDATE "items" SET "id" = json_extract(:new, '$[0]'), "qty" = json_extract(:new, '$[1]'), "note" = json_extract(:new, '$[2]'), "v" = json_extract(:new, '$[3]') WHERE rowid = :rid`,
    );
  });

  it('a restore of such updates gives back every value with its storage class', async () => {
    const domain = buildDomain(
      defineDomain({
        name: 'replay-set',
        language: 'en-US',
        roles: ['inbound'],
        now: 0,
        tools: [execTool],
        greeting: 'hi',
      }),
      {
        policy: '- **R1** x',
        schema: 'CREATE TABLE items (id TEXT PRIMARY KEY, qty INTEGER NOT NULL, note TEXT, v);',
        seed: JSON.stringify({ items: [{ id: 'a', qty: 1, note: 'n,1', v: 7 }] }),
        tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'x' } }]),
      },
    );
    const runtime = await DomainRuntime.create(domain, await inProcessSqlDbFactory());
    const updates: [string, unknown[]][] = [
      ["UPDATE items SET v = '7' WHERE id = 'a'", []],
      ['UPDATE items SET note = ?, qty = 2 WHERE id = ?', ['x,"y"]\\', 'a']],
      ['UPDATE items SET v = 7.5, id = ? WHERE id = ?', ['b', 'a']],
    ];
    const source = await runtime.open();
    for (const [i, [sql, params]] of updates.entries())
      await source.call({ id: `u${i}`, name: 'exec', arguments: { sql, params } }, 'assistant', i);
    const snap = await source.snapshot();
    const fresh = await runtime.open();
    await fresh.restore(snap);
    const rows =
      'SELECT quote(rowid) AS r, quote(id) AS id, quote(qty) AS qty, quote(note) AS note, quote(v) AS v FROM items';
    const log = 'SELECT seq, tbl, op, old, new, rid FROM _sb_write_log ORDER BY seq';
    expect(await fresh.query(rows)).toEqual([{ r: '1', id: "'b'", qty: '2', note: `'x,"y"]\\'`, v: '7.5' }]);
    expect(await fresh.query(log)).toEqual(await source.query(log));
    expect((await fresh.query(log)).map((l) => l.new)).toEqual([
      '["a",1,"n,1","7"]',
      '["a",2,"x,\\"y\\"]\\\\","7"]',
      '["b",2,"x,\\"y\\"]\\\\",7.5]',
    ]);
    await fresh.close();
    await source.close();
    await runtime.close();
  });
});
