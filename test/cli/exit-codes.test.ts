import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeFor } from '../../src/cli/exit-codes.ts';
import { UsageError } from '../../src/cli/participants.ts';
import { LocalModelError } from '../../src/adapters/shared/local-model-manifest.ts';
import {
  DomainFileError,
  FileFieldError,
  InfrastructureError,
  InputError,
  ModelBehaviourError,
  SwitchboardError,
  TeacherGuidanceError,
  ToolError,
} from '../../src/core/errors.ts';
import { ReplayInputError } from '../../src/core/replay/episode.ts';
import { ModelEndpointError } from '../../src/core/participants/model-errors.ts';
import { ToolError as ToolErrorFromDomain } from '../../src/core/schema/domain.ts';
import { InfrastructureError as InfraFromTypes } from '../../src/core/participants/types.ts';

describe('error family', () => {
  it('file errors name the file and the field path', () => {
    const e = new DomainFileError('tasks.json', '[3].user_scenario.instructions', 'Required');
    expect(e.message).toBe('tasks.json: [3].user_scenario.instructions: Required');
    expect([e.file, e.field, e.name]).toEqual(['tasks.json', '[3].user_scenario.instructions', 'DomainFileError']);
    expect(new ReplayInputError('results.json', '', 'not JSON').message).toBe('results.json: not JSON');
    expect(e).toBeInstanceOf(FileFieldError);
    expect(e).toBeInstanceOf(InputError);
    expect(e).toBeInstanceOf(SwitchboardError);
  });

  it('keeps the old import paths pointing at the same classes', () => {
    expect(ToolErrorFromDomain).toBe(ToolError);
    expect(InfraFromTypes).toBe(InfrastructureError);
    expect(new ModelEndpointError('down', 503, true, 3)).toBeInstanceOf(InfrastructureError);
  });

  it('maps to the CLI exit codes in one place', () => {
    const cases: [unknown, number][] = [
      [new UsageError('--trials must be a whole number from 1 to 1000'), 2],
      [new DomainFileError('seed.json', 'plans[0].price', 'Expected number'), 2],
      [new ReplayInputError('run.jsonl', 'line 2', 'not JSON'), 2],
      [new TeacherGuidanceError('trajectory t1 was made with teacher guidance'), 2],
      [new LocalModelError('unknown model id "x"'), 2],
      [new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'"), 2],
      [new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'), 0],
      [new ToolError('User not found'), 3],
      [new InfrastructureError('worker crashed'), 3],
      [new ModelBehaviourError('judge reply is not JSON'), 3],
      [new TypeError('x is undefined'), 3],
      ['a thrown string', 3],
    ];
    expect(cases.map(([e]) => exitCodeFor(e))).toEqual(cases.map(([, code]) => code));
    expect(EXIT).toEqual({ ok: 0, refused: 1, usage: 2, internal: 3, interrupted: 130 });
  });
});
