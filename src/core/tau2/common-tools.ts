/**
 * Tools that tau2-bench's airline and retail domains share, with the same names, parameters and
 * results: `calculate`, `transfer_to_human_agents` and `think`; and {@link toolJson}, how a
 * tau2 tool's structured result is shown to the agent.
 */
import { z } from 'zod';
import { ToolError, defineTool } from '../schema/domain.ts';
import { PyCalcError, pyCalculate } from './py-calc.ts';
import { pyJsonDumps, type PyJson } from './py-json.ts';

/**
 * The text the agent sees for a structured tool result: Python's `json.dumps` of the record(s)
 * (tau2's `model_dump`, default separators `, ` and `: `, floats as `100.0`).
 */
export function toolJson(value: PyJson): string {
  return pyJsonDumps(value);
}

/** `calculate(expression)` → the result rounded to 2 decimals, as Python prints a float (`"3.0"`). Kind `generic`. */
export const calculateTool = defineTool({
  name: 'calculate',
  kind: 'generic',
  description: 'Evaluate an arithmetic expression and return the result rounded to two decimals.',
  params: z.strictObject({
    expression: z
      .string()
      .describe(
        "The arithmetic expression, e.g. '12 * (3 + 4)'. Only digits, + - * /, parentheses, dots and spaces are allowed.",
      ),
  }),
  async run(_ctx, { expression }) {
    try {
      return pyCalculate(expression);
    } catch (e) {
      if (e instanceof PyCalcError) throw new ToolError(e.message);
      throw e;
    }
  },
});

/** `transfer_to_human_agents(summary)` → `"Transfer successful"`. Kind `generic`; changes nothing. */
export const transferToHumanAgentsTool = defineTool({
  name: 'transfer_to_human_agents',
  kind: 'generic',
  description:
    'Hand the caller over to a human agent together with a summary of their issue. Use it only when the caller asks for a human, or when the policy and your tools cannot resolve the issue.',
  params: z.strictObject({
    summary: z.string().describe("A short summary of the caller's issue."),
  }),
  async run() {
    return 'Transfer successful';
  },
});

/** `think(thought)` → `""`. Kind `think`: a scratchpad that reads and changes nothing. */
export const thinkTool = defineTool({
  name: 'think',
  kind: 'think',
  description:
    'Write down a thought. Nothing is looked up or changed; use it when you need to reason through something or keep a note.',
  params: z.strictObject({
    thought: z.string().describe('The thought to note.'),
  }),
  async run() {
    return '';
  },
});
