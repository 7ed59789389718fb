/**
 * `switchboard rollout --domain <d> --endpoint <base-url> … --model <m> --policy-version <v>
 * --out rollouts.jsonl`: token-faithful GRPO groups against the trainer's policy endpoints (see
 * src/core/training/policy-rollout.ts). Each finished group is appended to the JSONL file at
 * once (one group per line); `--resume` skips the groups the file already holds, `--force` starts
 * it over, and without either a file that already holds lines is refused. Progress goes to stderr.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { degradedAudioHook } from '../../core/channel/audio-store.ts';
import type { RolloutGroup } from '../../core/training/policy-rollout.ts';
import { DEFAULT_RESAMPLES, RESAMPLE_STRIDE } from '../../core/rollout/batch.ts';
import { RolloutRequest, runRolloutRequest, type RolloutSummary } from '../../adapters/shared/rollout-service.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from '../channel.ts';
import { addDuplexOptions, duplexChannel, duplexFromFlags, type DuplexFlags } from '../duplex.ts';
import { openTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { userFactory, UsageError } from '../participants.ts';
import {
  choiceOption,
  intOption,
  prepareOutFile,
  samplingFromFlags,
  withDomainOptions,
  withSamplingOptions,
  type SamplingFlags,
} from '../options.ts';

interface RolloutOpts extends ChannelFlags, SamplingFlags, DuplexFlags {
  domain: string;
  data?: string;
  split?: string;
  taskIds?: string;
  endpoint: string[];
  model: string;
  lora?: string;
  flavor: 'vllm' | 'vllm-omni' | 'openai';
  k: number;
  seed: number;
  policyVersion: string;
  reward: 'final' | 'shaped';
  endpointConcurrency: number;
  groupsInFlight: number;
  maxSteps?: number;
  user: string;
  out: string;
  resume?: boolean;
  force?: boolean;
  callerInput: 'audio' | 'transcript';
  json?: boolean;
}

/**
 * For `--resume`: the groups already in a rollout JSONL file, and the file's kept lines (a line
 * cut by an interrupted run is dropped, so that group runs again).
 */
export async function finishedGroups(path: string): Promise<{ ids: Set<string>; lines: string[] }> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const ids = new Set<string>();
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const doc = JSON.parse(line) as { group_id?: unknown };
      if (typeof doc.group_id !== 'string') continue;
      ids.add(doc.group_id);
      lines.push(line);
    } catch {
      // a line cut by an interrupted run
    }
  }
  return { ids, lines };
}

/**
 * Without `--resume` or `--force`, an `--out` file that already holds anything is refused rather
 * than overwritten (its groups may be hours of GPU time) or appended to (a second run of the same
 * tasks would write each group twice).
 * @throws UsageError naming the file, its line count and both options; or when both are given.
 */
async function refuseExistingOut(out: string, opts: Pick<RolloutOpts, 'out' | 'resume' | 'force'>): Promise<void> {
  if (opts.resume && opts.force)
    throw new UsageError(
      'rollout: --resume and --force exclude each other (keep the groups in --out, or start it over)',
    );
  if (opts.resume || opts.force) return;
  const text = await readFile(out, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => l.trim()).length;
  if (lines)
    throw new UsageError(
      `rollout: --out ${opts.out} already holds ${lines} line${lines === 1 ? '' : 's'}: add --resume to keep its groups and run only the others, or --force to start it over (its lines are deleted)`,
    );
}

const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;

/** Run the command; returns the summary. */
export async function runRollout(io: CliIo, opts: RolloutOpts): Promise<RolloutSummary & { out: string }> {
  const out = await prepareOutFile(opts.out);
  await refuseExistingOut(out, opts);
  const { runtime, tasks } = await openTasks({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) }, opts);
  const parsed = RolloutRequest.safeParse({
    base_urls: opts.endpoint,
    model: opts.model,
    lora: opts.lora ?? null,
    flavor: opts.flavor,
    sampling: samplingFromFlags(opts),
    k: opts.k,
    task_ids: tasks.map((t) => t.id),
    seed: opts.seed,
    policy_version: opts.policyVersion,
    reward: opts.reward,
    endpoint_concurrency: opts.endpointConcurrency,
    groups_in_flight: opts.groupsInFlight,
    caller_input: opts.callerInput,
    ...(opts.modelTimeout !== undefined ? { timeout_ms: opts.modelTimeout } : {}),
    ...(opts.modelRetries !== undefined ? { retries: opts.modelRetries } : {}),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = { base_urls: '--endpoint' }[String(issue.path[0])] ?? String(issue.path.join('.'));
    throw new UsageError(`rollout: ${flag}: ${issue.message}`);
  }
  const kept = opts.resume ? await finishedGroups(out) : { ids: new Set<string>(), lines: [] };
  const skip = kept.ids;
  await writeFile(out, kept.lines.map((l) => `${l}\n`).join(''));
  // Caller audio goes under audio/ beside the output file (request messages reference it by path).
  const flagged = await channelFromFlags(opts, dirname(out));
  // Issue 17: `--duplex` / `--subset` put every sample on the full-duplex timeline.
  const duplex = duplexFromFlags(opts);
  const channel = duplex ? duplexChannel(flagged, duplex, dirname(out)) : flagged;
  const total = tasks.length;
  let finished = skip.size;
  // vLLM answers with the model it served: a reply naming another model (an adapter not loaded, a
  // base model behind the URL) means the tokens and logprobs are not the policy's being trained.
  const asked = opts.lora ?? opts.model;
  const otherModels = new Map<string, number>();
  if (skip.size) io.err(`resuming: ${skip.size} of ${total} groups already in ${out}`);
  const summary = await runRolloutRequest(parsed.data, {
    runtime,
    user: userFactory(opts.user),
    ...(channel ? { channel } : {}),
    ...(duplex ? { duplex } : {}),
    ...(channel?.store ? { userAudio: degradedAudioHook(channel.store) } : {}),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    ...(process.env.SWITCHBOARD_API_KEY || process.env.OPENAI_API_KEY
      ? { apiKey: (process.env.SWITCHBOARD_API_KEY || process.env.OPENAI_API_KEY)! }
      : {}),
    skip,
    onEpisode: (t) => {
      if (!t.valid) {
        // Attempt a of trial t runs with seed + t + a × RESAMPLE_STRIDE; the batch runner makes 2 resamples.
        const last = Math.floor((t.seed - opts.seed - t.trial) / RESAMPLE_STRIDE) >= DEFAULT_RESAMPLES;
        io.err(
          `  ${t.task_id} sample ${t.trial} (seed ${t.seed}) invalid: ${t.invalid_reason}; ${last ? 'no attempts left' : 'resampling'}`,
        );
      }
    },
    onGroup: async (g: RolloutGroup) => {
      await appendFile(out, `${JSON.stringify(g)}\n`);
      for (const t of g.samples.flatMap((x) => x.turns))
        if (t.model !== null && t.model !== asked) otherModels.set(t.model, (otherModels.get(t.model) ?? 0) + 1);
      finished++;
      io.err(
        `[${finished}/${total}] ${g.group_id}: mean ${g.mean_reward.toFixed(2)}, advantages ${g.samples
          .map((s) => signed(s.advantage))
          .join(' ')}${g.resampled ? `, ${g.resampled} resampled` : ''}`,
      );
    },
    onFailed: (f) => {
      finished++;
      io.err(`[${finished}/${total}] ${f.group_id}: FAILED (${f.valid} valid samples): ${f.reasons.join('; ')}`);
    },
  });
  if (summary.token_warnings)
    io.err(
      `warning: ${summary.token_warnings} agent turns came with token data that does not line up (e.g. fewer logprobs than token ids): their tokens are unavailable; each such turn's token_warning says why`,
    );
  // Only when some completion came back: with none, the failures above say why.
  else if (summary.token_ids !== 'all' && summary.endpoints.some((e) => e.requests > e.failures))
    io.err(
      summary.token_ids === 'none'
        ? 'note: the endpoints returned no token ids (vLLM gives them with return_token_ids; other servers cannot): prompt_token_ids, completion_token_ids and loss_mask are null'
        : 'note: some completions came without token ids: their turns have null prompt_token_ids, completion_token_ids and loss_mask',
    );
  for (const [m, n] of otherModels)
    io.err(
      `warning: ${n} agent turns were answered by model ${m}, not ${asked} as requested: their tokens and logprobs are that model's (each turn's model says which)`,
    );
  return { ...summary, out };
}

/** Add the `rollout` command. */
export function registerRollout(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  const collect = (value: string, previous: string[]) => [...previous, value];
  return withSamplingOptions(withDomainOptions(addDuplexOptions(addChannelOptions(program.command('rollout')))))
    .requiredOption('--endpoint <base-url>', 'policy endpoint, e.g. http://127.0.0.1:8000/v1 (repeatable)', collect, [])
    .requiredOption('--model <name>', 'served base model name')
    .option('--lora <adapter>', 'LoRA adapter name, sent as the model of every request')
    .option(
      '--flavor <f>',
      'vllm | vllm-omni | openai',
      choiceOption('--flavor', ['vllm', 'vllm-omni', 'openai'] as const),
      'vllm',
    )
    .option('--k <n>', 'samples per group', intOption('--k', 2), 4)
    .option('--seed <n>', 'base seed; sample i uses seed + i', intOption('--seed', 0), 0)
    .requiredOption('--policy-version <v>', 'label of the policy weights, recorded on every turn')
    .option(
      '--reward <r>',
      'advantage on final | shaped',
      choiceOption('--reward', ['final', 'shaped'] as const),
      'final',
    )
    .option('--endpoint-concurrency <n>', 'requests in flight per endpoint', intOption('--endpoint-concurrency', 1), 8)
    .option('--groups-in-flight <n>', 'groups run at once', intOption('--groups-in-flight', 1), 1)
    .option(
      '--caller-input <what>',
      'with a channel flag: audio (the degraded WAV) | transcript (the heard words as text, no audio; text policies)',
      choiceOption('--caller-input', ['audio', 'transcript'] as const),
      'audio',
    )
    .option('--max-steps <n>', 'participant turns per episode', intOption('--max-steps', 1))
    .option('--user <spec>', 'simulated caller', 'scripted')
    .requiredOption('--out <file>', 'rollout groups, JSONL (one group per line)')
    .option('--resume', 'keep the groups already in --out and run only the others')
    .option('--force', 'start --out over when it already holds lines (without it, or --resume, such a file is refused)')
    .option('--json', 'print the summary as one JSON document')
    .action(async (opts: RolloutOpts) => {
      const s = await runRollout(io, opts);
      if (opts.json) io.out(JSON.stringify(s, null, 2));
      else
        io.out(
          [
            `${s.groups} groups written to ${s.out}${s.skipped ? ` (${s.skipped} already there)` : ''}, ${s.failed.length} failed; token ids: ${s.token_ids}${s.token_warnings ? ` (${s.token_warnings} turns dropped: token data does not line up)` : ''}`,
            ...s.endpoints.map((e) => `  ${e.endpoint}: ${e.requests} requests, ${e.failures} failed`),
          ].join('\n'),
        );
      setCode(s.failed.length === 0 ? 0 : 1);
    });
}
