/**
 * A task-bank folder on disk (see `core/evolution/bank.ts`): `tasks.json`, `versions.jsonl`,
 * `manifest.json`. Reading checks every file against its schema and names the file and field of
 * the first problem ({@link DomainFileError}).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bankManifest, BankManifest, type TaskBank } from '../../core/evolution/bank.ts';
import { DomainFileError, fieldPath, parseTasks } from '../../core/schema/domain.ts';
import { Task } from '../../core/schema/task.ts';

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new DomainFileError(
      path,
      '',
      `cannot read the task bank file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
}

/**
 * Read a bank folder.
 * @throws DomainFileError naming the file and field of the first problem (a missing file, bad
 *   JSON, a task or manifest field that fails its schema, a manifest for another domain)
 */
export async function readBank(dir: string, domain: string): Promise<{ bank: TaskBank; manifest: BankManifest }> {
  const tasksFile = join(dir, 'tasks.json');
  const versionsFile = join(dir, 'versions.jsonl');
  const manifestFile = join(dir, 'manifest.json');
  const tasks = parseTasks(tasksFile, await readText(tasksFile));
  const versions: Task[] = [];
  for (const [i, line] of (await readText(versionsFile)).split('\n').entries()) {
    if (!line.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new DomainFileError(versionsFile, `line ${i + 1}`, `not JSON (${(e as Error).message})`);
    }
    const r = Task.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw new DomainFileError(versionsFile, `line ${i + 1}.${fieldPath(issue.path)}`, issue.message);
    }
    versions.push(r.data);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readText(manifestFile));
  } catch (e) {
    if (e instanceof DomainFileError) throw e;
    throw new DomainFileError(manifestFile, '', `not JSON (${(e as Error).message})`);
  }
  const m = BankManifest.safeParse(raw);
  if (!m.success) {
    const issue = m.error.issues[0]!;
    throw new DomainFileError(manifestFile, fieldPath(issue.path), issue.message);
  }
  if (m.data.domain !== domain)
    throw new DomainFileError(manifestFile, 'domain', `the bank is for domain "${m.data.domain}", not "${domain}"`);
  return { bank: { domain, tasks, versions }, manifest: m.data };
}

/** Write a bank folder (created when missing); returns the manifest written. */
export async function writeBank(dir: string, base: readonly Task[], bank: TaskBank): Promise<BankManifest> {
  await mkdir(dir, { recursive: true });
  const manifest = bankManifest(bank.domain, base, bank);
  await writeFile(join(dir, 'tasks.json'), `${JSON.stringify(bank.tasks, null, 2)}\n`);
  await writeFile(join(dir, 'versions.jsonl'), bank.versions.map((t) => `${JSON.stringify(t)}\n`).join(''));
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
