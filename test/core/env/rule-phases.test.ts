/**
 * Which rule checks a tool call runs: those whose `tools` name the tool (or that name none), split
 * by `when` (`after` when absent), each phase in the domain's order; `before` checks only for write
 * tools, `after` checks only once the call wrote something; none for the caller's calls or with
 * `checks: false`. A refused call carries its `before` violations marked `refused`. Every check
 * records what it saw, so a check that ran when it should not (or the other way) fails the test.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import { ToolError, buildDomain, defineDomain, defineTool, type RuleCheck } from '../../../src/core/schema/domain.ts';

/** Checks that ran, as `rule:tool:writes seen`, in order. */
const ran: string[] = [];

function check(rule: string, opts: Pick<RuleCheck, 'tools' | 'when'>): RuleCheck {
  return {
    rule,
    description: `${rule}.`,
    ...opts,
    async check({ tool, writes, db }) {
      const row = await db.one('SELECT n FROM counters WHERE id = ?', ['a']);
      ran.push(`${rule}:${tool}:${writes.length}`);
      return `${rule} saw n=${String(row?.n)}`;
    },
  };
}

const counterTool = (name: string, kind: 'write' | 'generic' | 'read', step: number) =>
  defineTool({
    name,
    kind,
    description: `Add ${step} to counter a (fails above 100).`,
    params: z.object({ fail: z.boolean().optional() }),
    async run({ db }, { fail }) {
      if (step !== 0) await db.run('UPDATE counters SET n = n + ? WHERE id = ?', [step, 'a']);
      if (fail) throw new ToolError('refused');
      return 'ok';
    },
  });

const domain = buildDomain(
  defineDomain({
    name: 'phases',
    language: 'en-US',
    roles: ['inbound'],
    now: Date.UTC(2025, 0, 15, 12),
    tools: [counterTool('bump', 'write', 1), counterTool('touch', 'generic', 1), counterTool('noop', 'write', 0)],
    userTools: [counterTool('user_bump', 'write', 1)],
    ruleChecks: [
      check('every-after', {}),
      check('bump-before', { tools: ['bump'], when: 'before' }),
      check('touch-after', { tools: ['touch'], when: 'after' }),
      check('every-before', { when: 'before' }),
      check('bump-after', { tools: ['bump', 'other'] }),
    ],
    greeting: 'Hello.',
  }),
  {
    policy: '# Policy\n',
    schema: 'CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL);',
    seed: JSON.stringify({ counters: [{ id: 'a', n: 5 }] }),
    tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'Bump.' } }]),
  },
);

describe('rule checks of a call, by tool and phase', () => {
  let runtime: DomainRuntime;
  let env: Environment;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  });
  beforeEach(async () => {
    await env?.close();
    env = await runtime.open();
    ran.length = 0;
  });
  afterAll(async () => {
    await env.close();
    await runtime.close();
  });

  it('a write tool runs its before checks, then its after checks, each phase in domain order', async () => {
    const out = await env.call({ id: 'c', name: 'bump', arguments: {} });
    expect(ran).toEqual(['bump-before:bump:0', 'every-before:bump:0', 'every-after:bump:1', 'bump-after:bump:1']);
    expect(out.violations).toEqual([
      { rule: 'bump-before', message: 'bump-before saw n=5' },
      { rule: 'every-before', message: 'every-before saw n=5' },
      { rule: 'every-after', message: 'every-after saw n=6' },
      { rule: 'bump-after', message: 'bump-after saw n=6' },
    ]);
  });

  it('a refused call keeps only its before violations, marked refused', async () => {
    const out = await env.call({ id: 'c', name: 'bump', arguments: { fail: true } });
    expect(out.error).toBe(true);
    expect(ran).toEqual(['bump-before:bump:0', 'every-before:bump:0']);
    expect(out.violations.map((v) => [v.rule, v.refused])).toEqual([
      ['bump-before', true],
      ['every-before', true],
    ]);
  });

  it('a generic tool runs no before checks; its after checks are the untargeted ones and its own', async () => {
    const out = await env.call({ id: 'c', name: 'touch', arguments: {} });
    expect(ran).toEqual(['every-after:touch:1', 'touch-after:touch:1']);
    expect(out.violations.map((v) => v.rule)).toEqual(['every-after', 'touch-after']);
  });

  it('a call that wrote nothing runs no after checks', async () => {
    const out = await env.call({ id: 'c', name: 'noop', arguments: {} });
    expect(ran).toEqual(['every-before:noop:0']);
    expect(out.violations.map((v) => v.rule)).toEqual(['every-before']);
  });

  it("the caller's calls and calls with checks off run none", async () => {
    const user = await env.call({ id: 'c', name: 'user_bump', arguments: {} }, 'user');
    const off = await env.call({ id: 'd', name: 'bump', arguments: {} }, 'assistant', -1, { checks: false });
    expect(ran).toEqual([]);
    expect([user.violations, off.violations, off.writes.length]).toEqual([[], [], 1]);
  });
});

describe('rule checks that answer at once', () => {
  /** Checks that ran or answered, in order. */
  const seen: string[] = [];
  let failing = false;
  const at = (rule: string, when: RuleCheck['when'], f: RuleCheck['check'], policy?: string): RuleCheck => ({
    rule,
    description: `${rule}.`,
    when,
    ...(policy ? { policy } : {}),
    check: f,
  });
  const syncDomain = buildDomain(
    defineDomain({
      name: 'sync-phases',
      language: 'en-US',
      roles: ['inbound'],
      now: Date.UTC(2025, 0, 15, 12),
      tools: [counterTool('bump', 'write', 1)],
      ruleChecks: [
        at('before-null', 'before', () => (seen.push('before-null'), null)),
        at('before-found', 'before', ({ writes }) => (seen.push('before-found'), `before saw ${writes.length} writes`)),
        at('after-null', 'after', () => {
          seen.push('after-null');
          if (failing) throw new Error('check broke');
          return null;
        }),
        at(
          'after-found',
          'after',
          ({ writes }) => (seen.push('after-found'), `after saw ${writes.length} writes`),
          'Quoted policy.',
        ),
        at('after-read', 'after', async ({ db }) => {
          const row = await db.one('SELECT n FROM counters WHERE id = ?', ['a']);
          seen.push('after-read answered');
          return `after-read saw n=${String(row?.n)}`;
        }),
        at('after-sync-again', 'after', () => (seen.push('after-sync-again'), 'after the read')),
        at('after-null-again', 'after', () => (seen.push('after-null-again'), null)),
      ],
      greeting: 'Hello.',
    }),
    {
      policy: '# Policy\nQuoted policy.\n',
      schema: 'CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL);',
      seed: JSON.stringify({ counters: [{ id: 'a', n: 5 }] }),
      tasks: JSON.stringify([{ id: 't', user_scenario: { instructions: 'Bump.' } }]),
    },
  );

  it('are taken without an await, in domain order with those that read, and with the same violations', async () => {
    const runtime = await DomainRuntime.create(syncDomain, await sqlJsFactory());
    const env = await runtime.open();
    seen.length = 0;
    const out = await env.call({ id: 'c', name: 'bump', arguments: {} });
    // A check after one that returned a promise runs only once that promise has settled.
    expect(seen).toEqual([
      'before-null',
      'before-found',
      'after-null',
      'after-found',
      'after-read answered',
      'after-sync-again',
      'after-null-again',
    ]);
    expect(out.violations).toEqual([
      { rule: 'before-found', message: 'before saw 0 writes' },
      { rule: 'after-found', message: 'after saw 1 writes', policy: 'Quoted policy.' },
      { rule: 'after-read', message: 'after-read saw n=6' },
      { rule: 'after-sync-again', message: 'after the read' },
    ]);
    // A check that throws at once fails the call, as one whose promise rejects does.
    failing = true;
    await expect(env.call({ id: 'd', name: 'bump', arguments: {} })).rejects.toThrow('check broke');
    failing = false;
    await env.close();
    await runtime.close();
  });
});
