/**
 * loadTau2Domain / taskSplits / tasksInSplit on the real tau2 data folders, the domain metadata
 * and tool schemas, and the errors for missing or malformed files.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTau2Domain, taskSplits, tasksInSplit } from '../../src/adapters/node/tau2-loader.ts';
import { DomainFileError, toolSchema } from '../../src/core/schema/domain.ts';
import { tau2DataDir, tau2Runtime } from './tau2-helpers.ts';
import { openDomain } from '../../src/cli/domains.ts';

const temps: string[] = [];
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

/** A copy of the retail data folder with `change` applied. */
async function retailCopy(change: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tau2-'));
  temps.push(dir);
  for (const f of ['db.json', 'tasks.json', 'policy.md', 'split_tasks.json'])
    await copyFile(join(tau2DataDir('retail'), f), join(dir, f));
  await change(dir);
  return dir;
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

describe('loadTau2Domain', () => {
  it('loads the airline: 50 tasks, the 2024-05-15 15:00 EST clock, 15 tools with tau2 kinds', async () => {
    const { domain } = await tau2Runtime('tau2-airline');
    expect(domain.name).toBe('tau2-airline');
    expect(domain.language).toBe('en-US');
    expect(domain.roles).toEqual(['inbound']);
    expect(domain.now).toBe(Date.UTC(2024, 4, 15, 20, 0, 0));
    expect(domain.tasks).toHaveLength(50);
    expect(domain.rules).toEqual([]); // tau2's policy has no rule ids
    expect(domain.policy).toContain('The current time is 2024-05-15 15:00:00 EST.');
    expect(Object.fromEntries(domain.tools.map((t) => [t.name, t.kind]))).toEqual({
      book_reservation: 'write',
      calculate: 'generic',
      cancel_reservation: 'write',
      get_reservation_details: 'read',
      get_user_details: 'read',
      list_all_airports: 'read',
      search_direct_flight: 'read',
      search_onestop_flight: 'read',
      send_certificate: 'write',
      think: 'think',
      transfer_to_human_agents: 'generic',
      update_reservation_baggages: 'write',
      update_reservation_flights: 'write',
      update_reservation_passengers: 'write',
      get_flight_status: 'read',
    });
    expect(domain.splits.base).toHaveLength(50);
    expect(domain.splits.train).toHaveLength(30);
    expect(domain.splits.test).toHaveLength(20);
  });

  it('loads the retail: 114 tasks, 17 tools with tau2 kinds', async () => {
    const { domain } = await tau2Runtime('tau2-retail');
    expect(domain.name).toBe('tau2-retail');
    expect(domain.tasks).toHaveLength(114);
    expect(domain.tasks.map((t) => t.id).slice(0, 3)).toEqual(['0', '1', '2']);
    expect(Object.fromEntries(domain.tools.map((t) => [t.name, t.kind]))).toEqual({
      calculate: 'generic',
      cancel_pending_order: 'write',
      exchange_delivered_order_items: 'write',
      find_user_id_by_name_zip: 'read',
      find_user_id_by_email: 'read',
      get_order_details: 'read',
      get_product_details: 'read',
      get_item_details: 'read',
      get_user_details: 'read',
      list_all_product_types: 'read',
      modify_pending_order_address: 'write',
      modify_pending_order_items: 'write',
      modify_pending_order_payment: 'write',
      modify_user_address: 'write',
      return_delivered_order_items: 'write',
      think: 'think',
      transfer_to_human_agents: 'generic',
    });
  });

  it('parses tau2 task fields (tau2 keys we do not model are dropped)', async () => {
    const { domain } = await tau2Runtime('tau2-airline');
    const t1 = domain.tasks.find((t) => t.id === '1')!;
    expect(t1.user_scenario.instructions).toMatchObject({
      domain: 'airline',
      known_info: 'You are Raj Sanchez.\nYour user id is raj_sanchez_7340.',
    });
    expect(t1.evaluation_criteria?.actions?.[0]).toEqual({
      action_id: '1_0',
      requestor: 'assistant',
      name: 'get_user_details',
      arguments: { user_id: 'raj_sanchez_7340' },
      info: null,
    });
    expect(t1.evaluation_criteria?.reward_basis).toEqual(['DB', 'COMMUNICATE']);
    expect(t1.initial_state).toBeNull();
    expect('annotations' in t1).toBe(false);
  });

  it('gives models tau2’s parameter names and JSON types', async () => {
    const { domain } = await tau2Runtime('tau2-airline');
    const book = toolSchema(domain.tools.find((t) => t.name === 'book_reservation')!);
    const params = book.function.parameters as {
      properties: Record<string, { type?: string; enum?: string[]; items?: unknown }>;
      required: string[];
    };
    expect(params.required).toEqual([
      'user_id',
      'origin',
      'destination',
      'flight_type',
      'cabin',
      'flights',
      'passengers',
      'payment_methods',
      'total_baggages',
      'nonfree_baggages',
      'insurance',
    ]);
    expect(params.properties.total_baggages!.type).toBe('integer');
    expect(params.properties.cabin!.enum).toEqual(['basic_economy', 'economy', 'business']);
    expect(params.properties.payment_methods!.items).toMatchObject({
      type: 'object',
      properties: { payment_id: { type: 'string' }, amount: { type: 'integer' } },
      required: ['payment_id', 'amount'],
    });
    const { domain: r } = await tau2Runtime('tau2-retail');
    const exchange = toolSchema(r.tools.find((t) => t.name === 'exchange_delivered_order_items')!).function
      .parameters as {
      required: string[];
    };
    expect(exchange.required).toEqual(['order_id', 'item_ids', 'new_item_ids', 'payment_method_id']);
  });

  it('names a missing folder or file', async () => {
    expect((await failure(loadTau2Domain('tau2-retail', '/nonexistent/tau2/retail'))).message).toMatch(
      /^\/nonexistent\/tau2\/retail: no such tau2-bench data folder/,
    );
    const dir = await retailCopy((d) => rm(join(d, 'tasks.json')));
    expect((await failure(loadTau2Domain('tau2-retail', dir))).message).toMatch(
      new RegExp(`^${join(dir, 'tasks.json')}: cannot read \\(no such file\\)`),
    );
  });

  it('names the file of invalid JSON, and the file and field of a bad record', async () => {
    const broken = await retailCopy((d) => writeFile(join(d, 'db.json'), '{"products": {'));
    const e1 = await failure(loadTau2Domain('tau2-retail', broken));
    expect(e1).toBeInstanceOf(DomainFileError);
    expect((e1 as DomainFileError).file).toBe(join(broken, 'db.json'));
    expect(e1.message).toMatch(/not valid JSON/);

    const badTask = await retailCopy(async (d) => {
      await writeFile(join(d, 'tasks.json'), JSON.stringify([{ id: '0', user_scenario: { instructions: 7 } }]));
      await writeFile(join(d, 'split_tasks.json'), JSON.stringify({ base: ['0'], train: [], test: [] }));
    });
    const e2 = (await failure(loadTau2Domain('tau2-retail', badTask))) as DomainFileError;
    expect(e2.file).toBe(join(badTask, 'tasks.json'));
    expect(e2.field).toBe('[0].user_scenario.instructions');

    const badSplit = await retailCopy((d) =>
      writeFile(join(d, 'split_tasks.json'), JSON.stringify({ base: ['0'], train: ['999'], test: [] })),
    );
    const e3 = (await failure(loadTau2Domain('tau2-retail', badSplit))) as DomainFileError;
    expect(e3.file).toBe(join(badSplit, 'split_tasks.json'));
    expect(e3.field).toBe('train[0]');
    expect(e3.message).toMatch(/unknown task id "999"/);
  });
});

describe('a rollout thread on the built database', () => {
  it("seed: false does not import db.json (a broken one loads); openDomain with another runtime's built() uses it: same tasks, same rows", async () => {
    const { domain, runtime } = await tau2Runtime('tau2-retail');
    const broken = await retailCopy((d) => writeFile(join(d, 'db.json'), '{"products": {'));
    await expect(loadTau2Domain('tau2-retail', broken)).rejects.toThrow(/not valid JSON/);
    const bare = await loadTau2Domain('tau2-retail', broken, undefined, { seed: false });
    expect(bare.seed).toEqual({});
    expect(Object.keys(domain.seed).length).toBeGreaterThan(0);
    const { seed: _a, dataDir: _b, files: _c, ...rest } = domain;
    const { seed: _d, dataDir: _e, files: _f, ...bareRest } = bare;
    expect(bareRest).toEqual(rest);
    expect(bare.tasks).toHaveLength(114);
    // As the pool's thread opens it: the domain's seed not imported, the rows those of the image.
    const opened = await openDomain({ domain: 'tau2-retail', data: broken }, runtime.built());
    try {
      expect(opened.domain.seed).toEqual({});
      const env = await opened.runtime.open();
      const mine = await env.exportState();
      await env.close();
      const base = await runtime.open();
      const theirs = await base.exportState();
      await base.close();
      expect(mine).toEqual(theirs);
      expect(mine.users!.length).toBe(domain.seed.users!.length);
      expect(mine.users!.length).toBe(500);
    } finally {
      await opened.runtime.close();
    }
  });
});

describe('task splits', () => {
  it('reads split_tasks.json and filters tasks in file order', async () => {
    const splits = await taskSplits(tau2DataDir('airline'));
    expect(splits.train.slice(0, 5)).toEqual(['0', '1', '3', '4', '5']);
    expect(splits.test.slice(0, 5)).toEqual(['2', '6', '8', '13', '16']);
    const { domain } = await tau2Runtime('tau2-airline');
    const test = tasksInSplit(domain.tasks, splits, 'test');
    expect(test).toHaveLength(20);
    expect(test.map((t) => t.id).slice(0, 5)).toEqual(['2', '6', '8', '13', '16']);
    expect(tasksInSplit(domain.tasks, splits, 'base')).toHaveLength(50);
    expect(() => tasksInSplit(domain.tasks, splits, 'dev')).toThrow(
      /unknown task split "dev"; known splits: train, test, base/,
    );
  });

  it('refuses a splits file without base/train/test', async () => {
    const dir = await retailCopy((d) =>
      writeFile(join(d, 'split_tasks.json'), JSON.stringify({ base: [], train: [] })),
    );
    const e = (await failure(taskSplits(dir))) as DomainFileError;
    expect(e.field).toBe('test');
  });
});
