/** A write tool for environment tests: runs one SQL statement; an SQLite error becomes a ToolError (the call is rolled back). */
import { z } from 'zod';
import { ToolError, defineTool } from '../../../src/core/schema/domain.ts';

export const execTool = defineTool({
  name: 'exec',
  kind: 'write',
  description: 'Run one statement (test fixture).',
  params: z.object({ sql: z.string(), params: z.array(z.union([z.string(), z.number(), z.null()])) }),
  async run({ db }, { sql, params }) {
    try {
      return { changed: await db.run(sql, params) };
    } catch (e) {
      throw new ToolError((e as Error).message);
    }
  },
});
