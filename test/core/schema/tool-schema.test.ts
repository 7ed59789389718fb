import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, toolSchema } from '../../../src/core/schema/domain.ts';
import { parsePolicy } from '../../../src/core/schema/policy.ts';
import { miniDefinition } from '../../fixtures/mini-domain.ts';

describe('toolSchema', () => {
  it('exports zod params as an OpenAI tools entry', () => {
    const find = miniDefinition.tools.find((t) => t.name === 'find_account')!;
    expect(toolSchema(find)).toEqual({
      type: 'function',
      function: {
        name: 'find_account',
        description: 'Find an account by phone number.',
        parameters: { type: 'object', properties: { phone: { type: 'string' } }, required: ['phone'] },
      },
    });
  });

  it('keeps descriptions, enums and optional parameters', () => {
    const tool = defineTool({
      name: 'file',
      kind: 'write',
      description: 'File it.',
      params: z.object({
        reason: z.enum(['a', 'b']).describe('Why'),
        note: z.string().optional(),
      }),
      run: async () => 'ok',
    });
    expect(toolSchema(tool).function.parameters).toEqual({
      type: 'object',
      properties: { reason: { type: 'string', enum: ['a', 'b'], description: 'Why' }, note: { type: 'string' } },
      required: ['reason'],
    });
  });

  it('rejects a tool name that is not an identifier', () => {
    expect(() =>
      defineTool({ name: 'pay bill', kind: 'write', description: '', params: z.object({}), run: async () => '' }),
    ).toThrow('tool name "pay bill" must be an identifier');
  });
});

describe('parsePolicy', () => {
  it('reads rule ids in bold, brackets or with a colon', () => {
    expect(parsePolicy('# P\n- **R1** One.\n- [R2] Two.\nR3: Three.\nR4 is not a rule line\n')).toEqual([
      { id: 'R1', text: 'One.' },
      { id: 'R2', text: 'Two.' },
      { id: 'R3', text: 'Three.' },
    ]);
  });
});
