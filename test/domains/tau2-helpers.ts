/**
 * Shared setup of the tau2 domain tests: the data folder (found by test/fixtures/data.ts:
 * `$SWITCHBOARD_TAU2_DATA`, the `switchboard data tau2` cache, or `../shared/tau2`), one runtime
 * per domain and test file, and a call helper that parses JSON results. Test files using them
 * carry `@module-tag tau2-data`.
 */
import { readFileSync } from 'node:fs';
import { testData } from '../fixtures/data.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadTau2Domain, type Tau2Domain, type Tau2DomainName } from '../../src/adapters/node/tau2-loader.ts';
import { DomainRuntime, type Environment, type ToolOutcome } from '../../src/core/env/environment.ts';

/** Absolute path of the tau2-bench data folder of `domain` (`airline` or `retail`). */
export function tau2DataDir(domain: 'airline' | 'retail'): string {
  return testData(domain);
}

/** Text of a file of the tau2 data folder. */
export function tau2File(domain: 'airline' | 'retail', file: string): string {
  return readFileSync(`${tau2DataDir(domain)}${file}`, 'utf8');
}

const runtimes = new Map<Tau2DomainName, Promise<{ domain: Tau2Domain; runtime: DomainRuntime }>>();

/** The loaded domain and its runtime, built once per test file. */
export function tau2Runtime(name: Tau2DomainName): Promise<{ domain: Tau2Domain; runtime: DomainRuntime }> {
  let p = runtimes.get(name);
  if (!p) {
    p = (async () => {
      const domain = await loadTau2Domain(name, tau2DataDir(name === 'tau2-airline' ? 'airline' : 'retail'));
      const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
      return { domain, runtime };
    })();
    runtimes.set(name, p);
  }
  return p;
}

let callSeq = 0;

/** Call an agent tool. */
export function call(env: Environment, name: string, args: Record<string, unknown> = {}): Promise<ToolOutcome> {
  callSeq += 1;
  return env.call({ id: `t${callSeq}`, name, arguments: args } as Parameters<Environment['call']>[0]);
}

/** Call an agent tool that must succeed; returns its content parsed as JSON. */
export async function callJson(env: Environment, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const out = await call(env, name, args);
  if (out.error) throw new Error(`${name} failed: ${out.content}`);
  return JSON.parse(out.content);
}

/** Call an agent tool that must fail; returns the message after `Error: `. */
export async function callError(env: Environment, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const out = await call(env, name, args);
  if (!out.error) throw new Error(`${name} succeeded but should fail: ${out.content.slice(0, 200)}`);
  return out.content.replace(/^Error: /, '');
}
