/**
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';

/** The hand-built tau2-bench results file (see tau2-results-airline.md). */
const FIXTURE = fileURLToPath(new URL('../fixtures/tau2-results-airline.json', import.meta.url));
/** tau2-bench's airline data folder (test/fixtures/data.ts). */
const AIRLINE = testData('airline');

interface Msg {
  role: string;
  id?: string;
  content?: string | null;
}
const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { simulations: { id: string; messages: Msg[] }[] };
/** The recorded output of the tool call `id` in the fixture. */
function recorded(id: string): string {
  for (const s of fixture.simulations) {
    const m = s.messages.find((x) => x.role === 'tool' && x.id === id);
    if (m) return m.content!;
  }
  throw new Error(`no tool message ${id}`);
}

interface Db {
  users: Record<string, { payment_methods: Record<string, unknown>; reservations: string[] }>;
  reservations: Record<
    string,
    { insurance: string; payment_history: { payment_id: string; amount: number }[]; flights: { price: number }[] }
  >;
}
let cachedDb: Db | undefined;
/** tau2's airline db.json, read on first use (the file is skipped without the data). */
const airlineDb = (): Db => (cachedDb ??= JSON.parse(readFileSync(join(AIRLINE, 'db.json'), 'utf8')) as Db);

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'sb-replay-'));
  dirs.push(d);
  return d;
}

const SUMMARY_C1 =
  'User wants to change reservation XEWRD9 from ATL to LAX into a nonstop flight from ATL to LAS; origin and destination cannot be modified.';

describe('switchboard replay: tau2-bench results', () => {
  it('--json prints one document: every call, every reward, totals; exit 1 when something differs', async () => {
    const io = capture();
    expect(await main(['replay', FIXTURE, '--domain', 'tau2-airline', '--data', AIRLINE, '--json'], io)).toBe(1);
    expect(io.stderr).toBe('');
    const doc = JSON.parse(io.stdout);
    const same = (
      simulation_id: string,
      index: number,
      name: string,
      args: Record<string, unknown>,
      id: string,
      error = false,
    ) => ({
      simulation_id,
      index,
      requestor: 'assistant',
      name,
      arguments: args,
      recorded: recorded(id),
      ours: recorded(id),
      recorded_error: error,
      ours_error: error,
      equal: true,
    });
    // The recording says PEP4E0 has insurance; db.json says it has none.
    const pepOurs = recorded('call_b2').replace('"insurance": "yes"', '"insurance": "no"');
    expect(pepOurs).not.toBe(recorded('call_b2'));
    expect(doc).toEqual({
      calls: [
        same('sim-a-task19', 0, 'get_user_details', { user_id: 'olivia_gonzalez_2305' }, 'call_a1'),
        same('sim-a-task19', 1, 'get_reservation_details', { reservation_id: 'Z7GOZK' }, 'call_a2'),
        same('sim-a-task19', 2, 'cancel_reservation', { reservation_id: 'Z7GOZK' }, 'call_a3'),
        same('sim-b-task6', 0, 'get_reservation_details', { reservation_id: 'PEP4EO' }, 'call_b1', true),
        {
          simulation_id: 'sim-b-task6',
          index: 1,
          requestor: 'assistant',
          name: 'get_reservation_details',
          arguments: { reservation_id: 'PEP4E0' },
          recorded: recorded('call_b2'),
          ours: pepOurs,
          recorded_error: false,
          ours_error: false,
          equal: false,
        },
        same('sim-b-task6', 2, 'calculate', { expression: '51 + 77' }, 'call_b3'),
        same('sim-c-task13', 0, 'transfer_to_human_agents', { summary: SUMMARY_C1 }, 'call_c1'),
      ],
      rewards: [
        {
          simulation_id: 'sim-a-task19',
          task_id: '19',
          trial: 0,
          termination: 'user_stop',
          recorded: 1,
          ours: 1,
          equal: true,
          partial: false,
          recorded_components: { DB: 1, COMMUNICATE: 1 },
          ours_components: { DB: 1, COMMUNICATE: 1 },
          ours_notes: [],
          calls: 3,
          calls_equal: 3,
          unanswered: 0,
          rule_breaks: [],
        },
        {
          simulation_id: 'sim-b-task6',
          task_id: '6',
          trial: 0,
          termination: 'user_stop',
          recorded: 0,
          ours: 1,
          equal: false,
          partial: false,
          recorded_components: { DB: 0, COMMUNICATE: 1 },
          ours_components: { DB: 1, COMMUNICATE: 1 },
          ours_notes: [],
          calls: 3,
          calls_equal: 2,
          unanswered: 0,
          rule_breaks: [],
        },
        {
          simulation_id: 'sim-c-task13',
          task_id: '13',
          trial: 0,
          termination: 'agent_stop',
          recorded: 1,
          ours: 1,
          equal: true,
          partial: false,
          recorded_components: { DB: 1, COMMUNICATE: 1 },
          ours_components: { DB: 1, COMMUNICATE: 1 },
          ours_notes: [],
          calls: 1,
          calls_equal: 1,
          unanswered: 0,
          rule_breaks: [],
        },
      ],
      summary: {
        file: FIXTURE,
        format: 'tau2-results',
        domain: 'tau2-airline',
        simulations: 3,
        calls: { total: 7, equal: 6, different: 1, percent_equal: 85.71, unanswered: 0 },
        rewards: { compared: 3, equal: 2, different: 1, not_recorded: 0, partial: 0, percent_equal: 66.67 },
        policy: { breaking: 0, breaking_passes: 0 },
        all_equal: false,
      },
    });

    // Our outputs against db.json directly, not against the recording.
    const db = airlineDb();
    const out = (i: number) => JSON.parse(doc.calls[i].ours);
    const olivia = db.users.olivia_gonzalez_2305!;
    expect(Object.keys(out(0).payment_methods)).toEqual(Object.keys(olivia.payment_methods));
    expect(out(0).reservations).toEqual(olivia.reservations);
    const z7 = db.reservations.Z7GOZK!;
    expect(out(1).payment_history).toEqual(z7.payment_history);
    expect(out(1).status).toBe(null);
    expect(out(2).payment_history).toEqual([
      ...z7.payment_history,
      ...z7.payment_history.map((p) => ({ ...p, amount: -p.amount })),
    ]);
    expect(out(2).status).toBe('cancelled');
    expect(out(4).insurance).toBe(db.reservations.PEP4E0!.insurance);
    expect(Number(doc.calls[5].ours)).toBe(db.reservations.PEP4E0!.flights.reduce((n, f) => n + f.price, 0));
  });

  it('prints a readable summary and the first differences without --json', async () => {
    const io = capture();
    expect(await main(['replay', FIXTURE, '--domain', 'tau2-airline', '--data', AIRLINE], io)).toBe(1);
    expect(io.stdout).toBe(
      [
        `Replay: ${FIXTURE} (tau2-bench results) on tau2-airline · 3 simulations`,
        'Tool calls: 6 of 7 equal (85.71%) · 1 different',
        'Rewards:    2 of 3 equal (66.67%) · 1 different',
        'First differences (2 of 2):',
        '  sim-b-task6 call 1: get_reservation_details({"reservation_id":"PEP4E0"})',
        '    insurance: recorded "yes", ours "no"',
        '  sim-b-task6 reward (task 6, user_stop): recorded 0, ours 1',
        'DIFFERENT: 1 call and 1 reward differ',
        '',
      ].join('\n'),
    );
  });

  it('exits 0 when every call and reward is equal', async () => {
    const doc = JSON.parse(await readFile(FIXTURE, 'utf8'));
    doc.simulations = doc.simulations.filter((s: { id: string }) => s.id !== 'sim-b-task6');
    const file = join(await tempDir(), 'results.json');
    await writeFile(file, JSON.stringify(doc));
    const io = capture();
    expect(await main(['replay', file, '--domain', 'tau2-airline', '--data', AIRLINE], io)).toBe(0);
    expect(io.stdout).toContain('Tool calls: 4 of 4 equal (100%) · 0 different\n');
    expect(io.stdout).toContain('\nALL EQUAL: 4 calls and 2 rewards\n');
  });
});

describe('switchboard replay: tau2-bench directory format', () => {
  /** The fixture saved the way tau2-bench saves voice runs: results.json + simulations/<id>.json. */
  async function dirFormat(): Promise<string> {
    const dir = await tempDir();
    const doc = JSON.parse(await readFile(FIXTURE, 'utf8'));
    const sims = doc.simulations as { id: string; task_id: string; trial: number }[];
    delete doc.simulations;
    doc.simulation_index = sims.map((s) => ({ id: s.id, task_id: s.task_id, trial: s.trial }));
    await writeFile(join(dir, 'results.json'), JSON.stringify(doc));
    await mkdir(join(dir, 'simulations'));
    for (const s of sims) await writeFile(join(dir, 'simulations', `${s.id}.json`), JSON.stringify(s));
    return dir;
  }

  it('reads the folder, or its results.json, like the single file', async () => {
    const dir = await dirFormat();
    const io = capture();
    expect(await main(['replay', FIXTURE, '--domain', 'tau2-airline', '--data', AIRLINE, '--json'], io)).toBe(1);
    const single = JSON.parse(io.stdout);
    for (const given of [dir, join(dir, 'results.json')]) {
      const io2 = capture();
      expect(await main(['replay', given, '--domain', 'tau2-airline', '--data', AIRLINE, '--json'], io2)).toBe(1);
      const doc = JSON.parse(io2.stdout);
      expect(doc.calls).toEqual(single.calls);
      expect(doc.rewards).toEqual(single.rewards);
      expect(doc.summary).toEqual({ ...single.summary, file: given, format: 'tau2-results-dir' });
    }
  });

  it('names the simulation file of a bad field, and refuses a results.json without its simulations', async () => {
    const dir = await dirFormat();
    const simFile = join(dir, 'simulations', 'sim-b-task6.json');
    const sim = JSON.parse(await readFile(simFile, 'utf8'));
    sim.messages[3].error = 'yes';
    await writeFile(simFile, JSON.stringify(sim));
    const io = capture();
    expect(await main(['replay', dir, '--domain', 'tau2-airline', '--data', AIRLINE], io)).toBe(2);
    expect(io.stderr).toBe(
      `switchboard: ${simFile}: messages[3].error: Invalid input: expected boolean, received string\n`,
    );

    const alone = join(await tempDir(), 'results.json');
    await writeFile(alone, await readFile(join(dir, 'results.json'), 'utf8'));
    const io2 = capture();
    expect(await main(['replay', alone, '--domain', 'tau2-airline', '--data', AIRLINE], io2)).toBe(2);
    expect(io2.stderr).toBe(
      `switchboard: ${alone}: simulations: missing: this looks like the results.json of tau2-bench's directory format; pass the folder, or keep its simulations/ folder next to it\n`,
    );
  });
});

describe('switchboard replay: our trajectories', () => {
  it('replays the JSONL of run --out 100% equal, user-side calls included', async () => {
    const out = await tempDir();
    const ids = 'carrier-pay-balance-1,carrier-wallet-pay-1';
    expect(await main(['run', '--domain', 'carrier', '--task-ids', ids, '--out', out, '--json'], capture())).toBe(0);
    const file = join(out, 'trajectories.jsonl');
    const io = capture();
    expect(await main(['replay', file, '--domain', 'carrier', '--json'], io)).toBe(0);
    const doc = JSON.parse(io.stdout);
    expect(doc.summary).toEqual({
      file,
      format: 'switchboard-trajectories',
      domain: 'carrier',
      simulations: 2,
      calls: { total: 8, equal: 8, different: 0, percent_equal: 100, unanswered: 0 },
      rewards: { compared: 2, equal: 2, different: 0, not_recorded: 0, partial: 0, percent_equal: 100 },
      policy: { breaking: 0, breaking_passes: 0 },
      all_equal: true,
    });
    // The reference solutions, in order; the caller pays from the wallet with user tools.
    expect(
      doc.calls.map((c: { requestor: string; name: string; equal: boolean }) => `${c.requestor}:${c.name}:${c.equal}`),
    ).toEqual([
      'assistant:find_customer_by_phone:true',
      'assistant:get_bills:true',
      'assistant:pay_bill_from_balance:true',
      'assistant:find_customer_by_phone:true',
      'assistant:get_bills:true',
      'user:check_wallet_balance:true',
      'user:pay_bill_with_wallet:true',
      'assistant:get_bills:true',
    ]);
    expect(doc.calls.every((c: { recorded: string; ours: string }) => c.recorded === c.ours)).toBe(true);
    expect(
      doc.rewards.map((r: { recorded: number; ours: number; equal: boolean }) => [r.recorded, r.ours, r.equal]),
    ).toEqual([
      [1, 1, true],
      [1, 1, true],
    ]);

    // Tamper with one recorded output: the replay notices (exit 1) and says where.
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const t = JSON.parse(lines[1]!);
    const walletTurn = t.turns.find((x: { name?: string }) => x.name === 'check_wallet_balance');
    walletTurn.content = walletTurn.content.replace(/\d+(\.\d+)?/, '999');
    lines[1] = JSON.stringify(t);
    const tampered = join(out, 'tampered.jsonl');
    await writeFile(tampered, `${lines.join('\n')}\n`);
    const io2 = capture();
    expect(await main(['replay', tampered, '--domain', 'carrier', '--json'], io2)).toBe(1);
    const doc2 = JSON.parse(io2.stdout);
    expect(
      doc2.calls
        .filter((c: { equal: boolean }) => !c.equal)
        .map((c: { simulation_id: string; index: number }) => [c.simulation_id, c.index]),
    ).toEqual([['carrier/carrier-wallet-pay-1/0/0', 2]]);
    expect(doc2.summary.calls).toEqual({ total: 8, equal: 7, different: 1, percent_equal: 87.5, unanswered: 0 });
  });
});

describe('switchboard replay: bad input exits 2 naming the file and the field', () => {
  const fail = async (args: string[]) => {
    const io = capture();
    const code = await main(['replay', ...args], io);
    return { code, stderr: io.stderr };
  };

  it('a tau2 results file with a malformed field', async () => {
    const doc = JSON.parse(await readFile(FIXTURE, 'utf8'));
    doc.simulations[1].messages[2].tool_calls[0].name = 42;
    const file = join(await tempDir(), 'bad-results.json');
    await writeFile(file, JSON.stringify(doc));
    expect(await fail([file, '--domain', 'tau2-airline', '--data', AIRLINE])).toEqual({
      code: 2,
      stderr: `switchboard: ${file}: simulations[1].messages[2].tool_calls[0].name: Invalid input: expected string, received number\n`,
    });
  });

  it('a JSONL line that is not a trajectory, or not JSON', async () => {
    const dir = await tempDir();
    const out = join(dir, 'run');
    await main(
      [
        'run',
        '--domain',
        'carrier',
        '--task-ids',
        'carrier-pay-balance-1,carrier-bill-inquiry-1',
        '--out',
        out,
        '--json',
      ],
      capture(),
    );
    const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
    const t = JSON.parse(lines[1]!);
    delete t.turns;
    const file = join(dir, 'bad.jsonl');
    await writeFile(file, `${lines[0]}\n\n${JSON.stringify(t)}\n`);
    expect(await fail([file, '--domain', 'carrier'])).toEqual({
      code: 2,
      stderr: `switchboard: ${file}: line 3: turns: Invalid input: expected array, received undefined\n`,
    });
    await writeFile(file, `${lines[0]}\n{"schema_version": 1,\n`);
    expect((await fail([file, '--domain', 'carrier'])).stderr).toMatch(
      new RegExp(`^switchboard: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: line 2: not valid JSON \\(`),
    );
  });

  it('a file that is neither format, is missing, or names a task or domain we do not have', async () => {
    const dir = await tempDir();
    const other = join(dir, 'other.json');
    await writeFile(other, '{"hello": "world"}');
    expect(await fail([other, '--domain', 'carrier'])).toEqual({
      code: 2,
      stderr: `switchboard: ${other}: no "simulations" (tau2-bench results) and no "schema_version" (trajectory): expected a tau2-bench results file or Switchboard trajectories (JSON, or JSONL with one trajectory per line)\n`,
    });
    const missing = join(dir, 'missing.json');
    expect(await fail([missing, '--domain', 'carrier'])).toEqual({
      code: 2,
      stderr: `switchboard: ${missing}: cannot read (no such file)\n`,
    });

    const doc = JSON.parse(await readFile(FIXTURE, 'utf8'));
    doc.simulations[2].task_id = '404';
    const unknown = join(dir, 'unknown-task.json');
    await writeFile(unknown, JSON.stringify(doc));
    expect(await fail([unknown, '--domain', 'tau2-airline', '--data', AIRLINE])).toEqual({
      code: 2,
      stderr: `switchboard: ${unknown}: simulations[2].task_id: unknown task "404" in domain tau2-airline\n`,
    });
    // An airline results file replayed on carrier: the file says which domain it ran in.
    expect(await fail([FIXTURE, '--domain', 'carrier'])).toEqual({
      code: 2,
      stderr: `switchboard: ${FIXTURE}: info.environment_info.domain_name: recorded in domain "airline", not carrier\n`,
    });
  });
});
