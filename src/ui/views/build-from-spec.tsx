/**
 * Drop an API description on the page (issue 19 item 5): an OpenAPI 3.x JSON/YAML file, an MCP
 * tool list, or a folder of MCP tool files (dropped, or picked) becomes a domain in this tab
 * through the same scaffold, code agent (optional: a model at a remote endpoint, the page's
 * endpoint form and key ring) and gate as `switchboard build-domain` (run in the main worker,
 * {@link RolloutService.buildFromSpec}). The admitted domain joins the domain list and is kept in
 * IndexedDB (`built-domains.ts`), so it is there after a reload until deleted here; a bad spec or
 * a refusal shows the scaffold's own message (naming the file and the path in the spec).
 */
import { useEffect, useState } from 'preact/hooks';
import type { EndpointSettings } from '../../adapters/browser/rollout-types.ts';
import type { SpecBuild } from '../../adapters/browser/rollout-service.ts';
import { listStoredBuilt, type StoredBuilt, type StoredProblem } from '../../adapters/browser/built-domain-store.ts';
import { EndpointForm, endpointSpec } from '../components/endpoint-form.tsx';
import { proxy } from '../../adapters/browser/rollout-client.ts';
import { errorText, loadEndpoint, mainWorker } from '../runtime.ts';
import { keepBuilt, removeBuilt } from '../built-domains.ts';

/** Where the code agent's endpoint settings are kept (its key is in the key ring, by origin). */
const BUILDER_ENDPOINT_KEY = 'switchboard.builder-endpoint';

/** What the last build said; survives the view's remount when the domain switches. */
let lastBuilt: { done: string; build: SpecBuild } | undefined;
/** The form's settings as last set (language, tasks, seed as typed; the code agent on or off), likewise. */
let lastOptions: { language: 'zh' | 'en'; tasks: string; seed: string; agent: boolean } = {
  language: 'en',
  tasks: '12',
  seed: '0',
  agent: false,
};

/** A dropped or picked spec: one file's text, or the MCP tool files of a folder (path in it → text). */
type Dropped = { file: string; spec: string | { name: string; text: string }[] };

/** Every file under a dropped directory entry, with its path inside the dropped folder. */
async function entryFiles(entry: FileSystemEntry, prefix = ''): Promise<{ name: string; file: File }[]> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    return [{ name: `${prefix}${entry.name}`, file }];
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const children: FileSystemEntry[] = [];
  // readEntries answers in batches (Chromium: 100 at a time) until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    children.push(...batch);
  }
  const nested = await Promise.all(children.map((c) => entryFiles(c, `${prefix}${entry.name}/`)));
  return nested.flat();
}

/** Texts of several files as one folder spec (`name` is the path inside the folder). */
async function folderSpec(folder: string, files: { name: string; file: File }[]): Promise<Dropped> {
  return {
    file: folder,
    spec: await Promise.all(files.map(async (f) => ({ name: f.name, text: await f.file.text() }))),
  };
}

/**
 * What a drop holds: one file; several files (a folder of MCP tools named `mcp-tools`); or a
 * dropped directory (read through `webkitGetAsEntry`; its files named by their path below it).
 * The entries are taken synchronously: a DataTransfer's items are gone once the event returns.
 */
function fromDrop(dt: DataTransfer | null): Promise<Dropped | undefined> {
  if (!dt) return Promise.resolve(undefined);
  const entries = [...dt.items]
    .filter((i) => i.kind === 'file')
    .map((i) => ({ entry: i.webkitGetAsEntry?.() ?? null, file: i.getAsFile() }));
  const dir = entries.find((e) => e.entry?.isDirectory)?.entry;
  if (dir) {
    return entryFiles(dir).then((files) =>
      folderSpec(
        dir.name,
        files.map((f) => ({ ...f, name: f.name.slice(dir.name.length + 1) })),
      ),
    );
  }
  const files = entries.map((e) => e.file).filter((f): f is File => !!f);
  if (files.length === 0) return Promise.resolve(undefined);
  if (files.length === 1) return files[0]!.text().then((text) => ({ file: files[0]!.name, spec: text }));
  return folderSpec(
    'mcp-tools',
    files.map((file) => ({ name: file.name, file })),
  );
}

/** The files of a folder picked with the folder input: named by their path below the folder. */
function fromFolderPick(list: FileList | null): Promise<Dropped | undefined> {
  const files = [...(list ?? [])];
  if (files.length === 0) return Promise.resolve(undefined);
  const folder = (files[0]!.webkitRelativePath || files[0]!.name).split('/')[0] ?? 'folder';
  return folderSpec(
    folder,
    files.map((file) => ({ name: (file.webkitRelativePath || file.name).split('/').slice(1).join('/'), file })),
  );
}

/** The status line of an admitted build. */
function builtLine(source: string, r: SpecBuild): string {
  const skipped = r.skipped.length ? `; ${r.skipped.length} parts skipped` : '';
  return `${source} built as ${r.name} (${r.tables} tables, ${r.tools} tools, ${r.tasks} tasks; admitted by the gate${skipped})`;
}

/** One stage of the code agent's domain stages (rule texts, business rules, harder tasks): proposals by id. */
interface StageView {
  admitted: { id: string; detail: string }[];
  rejected: { id: string; status: string; detail: string }[];
}

/** The domain stages in a report: every field shaped as a stage, in the report's order (new stages show too). */
function stagesOf(report: object): [string, StageView][] {
  return Object.entries(report).filter(
    (e): e is [string, StageView] =>
      !!e[1] && typeof e[1] === 'object' && Array.isArray(e[1].admitted) && Array.isArray(e[1].rejected),
  );
}

/**
 * What the code agent did: the caller-text refinements per task (admitted with the model's
 * reason, rejected with status and reason), then each domain stage's proposals likewise.
 */
function AgentReportView({ build }: { build: SpecBuild }) {
  const a = build.agent;
  if (!a) return null;
  const { admitted, rejected, ...rest } = a;
  return (
    <div id="spec-agent" class="spec-agent">
      <p>
        Code agent <code>{a.model}</code> ({a.prompt_version}), caller text:{' '}
        <span id="spec-admitted">{admitted.length}</span> admitted,{' '}
        <span id="spec-rejected-count">{rejected.length}</span> rejected
      </p>
      {admitted.length > 0 && (
        <ul id="spec-admitted-list">
          {admitted.map((r) => (
            <li key={r.task_id} data-task={r.task_id}>
              <code>{r.task_id}</code> admitted: {r.reason}
            </li>
          ))}
        </ul>
      )}
      {rejected.length > 0 && (
        <ul id="spec-rejected">
          {rejected.map((r) => (
            <li key={r.task_id} data-task={r.task_id} data-status={r.status}>
              <code>{r.task_id}</code> {r.status}: {r.detail}
            </li>
          ))}
        </ul>
      )}
      {stagesOf(rest).map(([stage, r]) => (
        <div key={stage} class="spec-stage" data-stage={stage}>
          <p>
            {stage.replace(/_/g, ' ')}: {r.admitted.length} admitted, {r.rejected.length} rejected
          </p>
          {r.admitted.length + r.rejected.length > 0 && (
            <ul>
              {r.admitted.map((p, i) => (
                <li key={`a${i}`} data-status="admitted">
                  <code>{p.id}</code> admitted: {p.detail}
                </li>
              ))}
              {r.rejected.map((p, i) => (
                <li key={`r${i}`} data-status={p.status}>
                  <code>{p.id}</code> {p.status}: {p.detail}
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </div>
  );
}

/**
 * The domains kept in this browser, each with Delete; records that could not be read are listed
 * with the reason and can be deleted too.
 */
function KeptDomains({
  version,
  onOpen,
  onRemoved,
}: {
  version: number;
  onOpen?: (name: string) => void;
  onRemoved?: (name: string) => void;
}) {
  const [kept, setKept] = useState<{ built: StoredBuilt[]; problems: StoredProblem[] }>();
  const [error, setError] = useState<string>();
  const [reread, setReread] = useState(0);
  useEffect(() => {
    void listStoredBuilt().then(setKept);
  }, [version, reread]);
  if (!kept || (kept.built.length === 0 && kept.problems.length === 0)) return null;
  const remove = async (name: string) => {
    try {
      await removeBuilt(name);
      onRemoved?.(name);
      setReread((n) => n + 1);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <div id="built-domains" class="built-domains">
      Kept in this browser:
      <ul>
        {kept.built.map((b) => (
          <li key={b.name} data-name={b.name}>
            <strong>{b.name}</strong> <span class="muted">from {b.source}</span>{' '}
            {onOpen && (
              <>
                <button type="button" class="open-built" onClick={() => onOpen(b.name)}>
                  Open
                </button>{' '}
              </>
            )}
            <button type="button" class="delete-built" onClick={() => void remove(b.name)}>
              Delete
            </button>
          </li>
        ))}
        {kept.problems.map((p) => (
          <li key={p.name} data-name={p.name} class="error" data-problem>
            <strong>{p.name}</strong>: {p.reason}{' '}
            <button type="button" class="delete-built" onClick={() => void remove(p.name)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * The drop zone, file and folder pickers, with the CLI's `--name`, `--language`, `--tasks`,
 * `--seed` and `--agent` (the code agent's remote endpoint).
 */
export function BuildFromSpec({
  onBuilt,
  onRemoved,
}: {
  onBuilt?: (name: string) => void;
  onRemoved?: (name: string) => void;
}) {
  const [state, setState] = useState<{
    busy?: boolean;
    progress?: { done: number; total: number };
    error?: string;
    done?: string;
    build?: SpecBuild;
    notKept?: string;
  }>(() => (lastBuilt ? { ...lastBuilt } : {}));
  const [over, setOver] = useState(false);
  const [name, setName] = useState('');
  // As typed: read when a build starts (an empty or bad field takes the CLI's default).
  const [options, setOptionsState] = useState(lastOptions);
  const setOptions = (next: typeof options) => {
    lastOptions = next;
    setOptionsState(next);
  };
  const useAgent = options.agent;
  const setUseAgent = (agent: boolean) => setOptions({ ...options, agent });
  const [endpoint, setEndpoint] = useState<EndpointSettings>(() => loadEndpoint(BUILDER_ENDPOINT_KEY));
  const [kept, setKept] = useState(0);
  const build = async (dropped: Promise<Dropped | undefined>) => {
    setState({ busy: true });
    try {
      const d = await dropped;
      if (!d) {
        setState({});
        return;
      }
      const r = await mainWorker().service.buildFromSpec(
        d.file,
        d.spec,
        {
          language: options.language,
          tasks: Math.min(200, Math.max(1, Math.floor(Number(options.tasks) || 12))),
          seed: Math.trunc(Number(options.seed) || 0),
          ...(name.trim() ? { name: name.trim() } : {}),
          ...(useAgent ? { agent: endpointSpec(endpoint) } : {}),
        },
        proxy((progress: { done: number; total: number }) => setState({ busy: true, progress })),
      );
      const notKept = await keepBuilt({ name: r.name, source: d.file, savedAt: Date.now(), files: r.files });
      lastBuilt = { done: builtLine(d.file, r), build: r };
      setState({ ...lastBuilt, ...(notKept ? { notKept } : {}) });
      setKept((n) => n + 1);
      onBuilt?.(r.name);
    } catch (e) {
      const text = errorText(e);
      // The browser says only "Connection error" for an endpoint that is down and for one that
      // does not allow this page's origin (CORS).
      setState({
        error: /Connection error/.test(text)
          ? `${text} (is the endpoint running, and does it allow requests from ${location.origin} (CORS)?)`
          : text,
      });
    }
  };
  return (
    <section
      id="spec-drop"
      class={`spec-drop${over ? ' over' : ''}`}
      aria-label="Build a domain from an API description"
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        if (!state.busy) void build(fromDrop(e.dataTransfer));
      }}
    >
      <label>
        Drop an OpenAPI 3 (JSON/YAML) or MCP tool list, or a folder of MCP tool files, here; or pick a file{' '}
        <input
          id="spec-file"
          type="file"
          accept=".json,.yaml,.yml,.snap,application/json"
          disabled={state.busy}
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            e.currentTarget.value = ''; // picking the same file again (other options) builds again
            void build(f ? f.text().then((text) => ({ file: f.name, spec: text })) : Promise.resolve(undefined));
          }}
        />
      </label>{' '}
      <label>
        or a folder{' '}
        <input
          id="spec-folder"
          type="file"
          // Non-standard but everywhere (Chromium, Firefox, Safari); a boolean DOM property.
          {...{ webkitdirectory: true }}
          multiple
          disabled={state.busy}
          onChange={(e) => {
            const picked = fromFolderPick(e.currentTarget.files);
            e.currentTarget.value = '';
            void build(picked);
          }}
        />
      </label>{' '}
      <label>
        name{' '}
        <input
          id="spec-name"
          size={12}
          placeholder="file name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>{' '}
      <label>
        language{' '}
        <select
          id="spec-language"
          value={options.language}
          onChange={(e) => setOptions({ ...options, language: e.currentTarget.value as 'zh' | 'en' })}
        >
          <option value="en">en</option>
          <option value="zh">zh</option>
        </select>
      </label>{' '}
      <label>
        tasks{' '}
        <input
          id="spec-tasks"
          type="number"
          min={1}
          max={200}
          value={options.tasks}
          onInput={(e) => setOptions({ ...options, tasks: e.currentTarget.value })}
        />
      </label>{' '}
      <label>
        seed{' '}
        <input
          id="spec-seed"
          type="number"
          value={options.seed}
          onInput={(e) => setOptions({ ...options, seed: e.currentTarget.value })}
        />
      </label>{' '}
      <label>
        <input
          id="spec-agent-on"
          type="checkbox"
          checked={useAgent}
          disabled={state.busy}
          onChange={(e) => setUseAgent(e.currentTarget.checked)}
        />{' '}
        code agent (a model rewrites each task's caller text; every proposal checked and gated)
      </label>
      {useAgent && (
        <EndpointForm value={endpoint} onChange={setEndpoint} storageKey={BUILDER_ENDPOINT_KEY} who="code agent" />
      )}
      <p class="muted" id="spec-status" aria-live="polite">
        {state.busy
          ? state.progress
            ? state.progress.done < state.progress.total
              ? `code agent: ${state.progress.done} of ${state.progress.total} tasks answered…`
              : `code agent: the ${state.progress.total} tasks answered; domain stages (rule texts, business rules, harder tasks)…`
            : 'building and gating…'
          : (state.done ??
            'the same scaffold, code agent and gate as switchboard build-domain; the domain is kept in this browser until you delete it')}
        {state.busy && state.progress && (
          <>
            {' '}
            <button type="button" id="spec-stop" onClick={() => void mainWorker().service.cancel()}>
              Stop
            </button>
          </>
        )}
      </p>
      {state.notKept && (
        <p role="alert" class="error" id="spec-not-kept">
          kept for this page load only (not saved in this browser): {state.notKept}
        </p>
      )}
      {state.build && !state.busy && <AgentReportView build={state.build} />}
      {state.error && (
        <p role="alert" class="error" id="spec-error">
          {state.error}
        </p>
      )}
      <KeptDomains version={kept} {...(onBuilt ? { onOpen: onBuilt } : {})} {...(onRemoved ? { onRemoved } : {})} />
    </section>
  );
}
