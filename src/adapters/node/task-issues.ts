/**
 * The task issues file of a task bank on disk (`<bank>/issues.json`, see
 * `core/evolution/issues.ts`): read with a clear error naming the file and field, written beside
 * the bank's tasks.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskIssuesFile, taskIssuesFile, type TaskIssue } from '../../core/evolution/issues.ts';
import { DomainFileError, fieldPath } from '../../core/schema/domain.ts';

/** The file name inside a bank folder. */
export const ISSUES_FILE = 'issues.json';

/**
 * Read the issues of a bank folder, or null when it has no issues file.
 * @throws DomainFileError naming the file and the field of the first problem (bad JSON, a field
 *   that fails the schema, issues of another domain)
 */
export async function readTaskIssues(bankDir: string, domain: string): Promise<TaskIssue[] | null> {
  const file = join(bankDir, ISSUES_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new DomainFileError(file, '', `cannot read the task issues (${(e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new DomainFileError(file, '', `not JSON (${(e as Error).message})`);
  }
  const r = TaskIssuesFile.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  if (r.data.domain !== domain)
    throw new DomainFileError(file, 'domain', `the issues are for domain "${r.data.domain}", not "${domain}"`);
  return r.data.issues;
}

/** Write the issues of `domain` into a bank folder (created when missing); returns the file's path. */
export async function writeTaskIssues(bankDir: string, domain: string, issues: readonly TaskIssue[]): Promise<string> {
  await mkdir(bankDir, { recursive: true });
  const file = join(bankDir, ISSUES_FILE);
  await writeFile(file, `${JSON.stringify(taskIssuesFile(domain, issues), null, 2)}\n`);
  return file;
}
