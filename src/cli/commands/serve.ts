/**
 * `switchboard serve --domain <d> [--port 8700] [--protocol openenv|switchboard]`: the environment
 * server for trainers: OpenEnv's protocol by default (src/adapters/node/openenv-server.ts), or
 * the original reset / step / state / close API (src/adapters/node/env-server.ts);
 * src/adapters/node/server-guard.ts decides who may connect. Phone-channel flags as for `run`.
 * Runs until interrupted (Ctrl-C, SIGTERM).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { type EnvServer, startEnvServer } from '../../adapters/node/env-server.ts';
import { type OpenEnvServer, startOpenEnvServer } from '../../adapters/node/openenv-server.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from '../channel.ts';
import { addDuplexOptions, duplexChannel, duplexFromFlags, type DuplexFlags } from '../duplex.ts';
import { checkAllowedEndpoint, createServerGuard, isLoopbackName } from '../../adapters/node/server-guard.ts';
import { checkTaskDefects, openDomain } from '../domains.ts';
import { readWeightsFile, weightsFilePath } from '../../adapters/node/curriculum.ts';
import type { CliIo } from '../io.ts';
import { judgeFromFlags, parseModelSpec, userFactory, UsageError, withJudgeOptions } from '../participants.ts';
import { choiceOption, DATA_HELP, DOMAIN_HELP, intOption } from '../options.ts';

/** A TCP port, 0 to 65535 (0: any free port). */
function portOption(value: string): number {
  const n = intOption('--port', 0)(value);
  if (n > 65535) throw new InvalidArgumentError('--port must be a whole number from 0 to 65535');
  return n;
}

interface ServeOpts extends ChannelFlags, DuplexFlags {
  protocol: 'openenv' | 'switchboard';
  domain: string;
  data?: string;
  port: number;
  host: string;
  user: string;
  judge?: string;
  judgeN?: number;
  maxEpisodes: number;
  idleSeconds: number;
  maxSteps?: number;
  maxEpisodesPerClient?: number;
  allowOrigin: string[];
  allowHost: string[];
  allowEndpoint: string[];
  token: string[];
  /** A sampling-weights file (or an evolve run folder) served at `GET /curriculum`. */
  weights?: string;
}

/** Environment variable holding the bearer token when `--token` is not given (keeps it out of `ps`). */
export const SERVE_TOKEN_ENV = 'SWITCHBOARD_SERVE_TOKEN';

const collect = (value: string, previous: string[]) => [...previous, value];

/** Register `serve` on the program. */
export function registerServe(program: Command, io: CliIo): Command {
  return withJudgeOptions(
    addDuplexOptions(addChannelOptions(program.command('serve'))),
    'NL and unchecked assertions (without one such rewards are partial)',
  )
    .option(
      '--protocol <p>',
      'openenv (OpenEnv routes and messages) | switchboard (the original API)',
      choiceOption('--protocol', ['openenv', 'switchboard'] as const),
      'openenv',
    )
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', DATA_HELP)
    .option('--port <n>', 'TCP port (0: any free port)', portOption, 8700)
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .option('--user <spec>', 'simulated caller', 'scripted')
    .option('--max-episodes <n>', 'live episodes at most', intOption('--max-episodes', 1), 64)
    .option('--idle-seconds <n>', 'close an episode untouched this long', intOption('--idle-seconds', 1), 300)
    .option('--max-steps <n>', 'participant turns per episode', intOption('--max-steps', 1))
    .option(
      '--max-episodes-per-client <n>',
      'live episodes one client (remote address, or token) may hold (default: --max-episodes)',
      intOption('--max-episodes-per-client', 1),
    )
    .option(
      '--allow-origin <origin>',
      'also admit browser pages from this origin, scheme://host[:port] (repeatable; * for any)',
      collect,
      [],
    )
    .option('--allow-host <name>', 'also admit this name in the Host header (repeatable)', collect, [])
    .option(
      '--allow-endpoint <base-url>',
      'POST /rollout may call this policy endpoint (repeatable; * for any); loopback endpoints and those of --user, --judge, --tts, --barge-in-model always may',
      collect,
      [],
    )
    .option(
      '--weights <file>',
      'serve this weights.json (or an evolve --out folder) at GET /curriculum, read afresh on each request',
    )
    .option(
      '--token <token>',
      `require Authorization: Bearer <token> (repeatable; or env ${SERVE_TOKEN_ENV})`,
      collect,
      [],
    )
    .action(async (opts: ServeOpts) => {
      const tokens = opts.token.length
        ? opts.token
        : process.env[SERVE_TOKEN_ENV]
          ? [process.env[SERVE_TOKEN_ENV]]
          : [];
      let allowEndpoints: string[];
      try {
        createServerGuard({ allowOrigins: opts.allowOrigin, allowHosts: opts.allowHost, tokens }); // check before loading the domain
        allowEndpoints = [
          ...opts.allowEndpoint.map(checkAllowedEndpoint),
          ...[opts.user, opts.judge, opts.tts, opts.bargeInModel].flatMap((spec) => {
            const model = spec ? parseModelSpec(spec) : null;
            return model ? [model.baseURL] : [];
          }),
        ];
      } catch (e) {
        throw new UsageError(`serve: ${(e as Error).message}`);
      }
      // The weights file is checked now (exit 2 naming file and field) and read again per request.
      const weights = opts.weights ? await weightsFilePath(opts.weights) : undefined;
      if (weights) await readWeightsFile(weights);
      const user = userFactory(opts.user);
      const judge = judgeFromFlags(opts);
      const open = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
      checkTaskDefects(open, open.domain.tasks);
      const { runtime } = open;
      const settings = {
        runtime,
        user,
        ...(judge ? { judge } : {}),
        maxEpisodes: opts.maxEpisodes,
        idleMs: opts.idleSeconds * 1000,
        guard: {
          allowOrigins: opts.allowOrigin,
          allowHosts: opts.allowHost,
          tokens,
          maxSessionsPerClient: opts.maxEpisodesPerClient ?? opts.maxEpisodes,
        },
        ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
        ...(weights ? { weights } : {}),
      };
      // The channel renders caller audio per episode; observations carry it (no files written).
      const flagged = await channelFromFlags(opts, undefined);
      // Issue 17: `--duplex` / `--subset` put every episode (and POST /rollout) on the timeline.
      const duplex = duplexFromFlags(opts);
      const channel = duplex ? duplexChannel(flagged, duplex, undefined) : flagged;
      if (flagged && !duplex && opts.protocol !== 'openenv')
        throw new UsageError('serve: phone-channel flags need --protocol openenv (or --duplex)');
      let server: EnvServer | OpenEnvServer;
      try {
        server =
          opts.protocol === 'openenv'
            ? await startOpenEnvServer(
                {
                  runtime,
                  user,
                  ...(judge ? { judge } : {}),
                  maxSessions: settings.maxEpisodes,
                  sessionTimeoutS: opts.idleSeconds,
                  guard: settings.guard,
                  ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
                  ...(channel ? { channel } : {}),
                  ...(duplex ? { duplex } : {}),
                  ...(weights ? { weights } : {}),
                  allowEndpoints,
                  ...(process.env.SWITCHBOARD_API_KEY || process.env.OPENAI_API_KEY
                    ? { apiKey: (process.env.SWITCHBOARD_API_KEY || process.env.OPENAI_API_KEY)! }
                    : {}),
                },
                opts.port,
                opts.host,
              )
            : await startEnvServer(
                { ...settings, ...(duplex && channel ? { duplex: { settings: duplex, channel } } : {}) },
                opts.port,
                opts.host,
              );
      } catch (e) {
        throw new UsageError(`cannot listen on ${opts.host}:${opts.port}: ${(e as Error).message}`);
      }
      io.err(
        `serving ${runtime.domain.name} (${opts.protocol}) at ${server.url} (WebSocket ${server.url.replace('http', 'ws')}/ws)` +
          `${tokens.length ? ', bearer token required' : ''}; Ctrl-C stops`,
      );
      if (!tokens.length && !isLoopbackName(opts.host))
        io.err(
          `warning: listening on ${opts.host} without --token: anyone who can reach this address can run episodes`,
        );
      await new Promise<void>((done) => {
        const stop = () => void server.close().then(done);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
