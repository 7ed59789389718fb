/**
 * Drop an API description on the page (issue 19 item 5): an OpenAPI 3.x JSON/YAML file or an MCP
 * tool list becomes a domain in this tab through the same scaffold and gate as
 * `switchboard build-domain` (run in the main worker, {@link RolloutService.buildFromSpec}). The
 * admitted domain joins the domain list for the session; a bad spec or a refusal shows the
 * scaffold's own message (naming the file and the path in the spec).
 */
import { useState } from 'preact/hooks';
import type { RolloutService } from '../../adapters/browser/rollout-service.ts';
import { errorText, mainWorker } from '../runtime.ts';

let lastBuilt: string | undefined; // survives the view's remount when the domain switches

/** The drop zone and file picker, with the CLI's `--name`, `--language`, `--tasks` and `--seed`. */
export function BuildFromSpec({ onBuilt }: { onBuilt?: (name: string) => void }) {
  const [state, setState] = useState<{ busy?: boolean; error?: string; done?: string }>(() =>
    lastBuilt ? { done: lastBuilt } : {},
  );
  const [over, setOver] = useState(false);
  const [name, setName] = useState('');
  const [options, setOptions] = useState<{ language: 'zh' | 'en'; tasks: number; seed: number }>({
    language: 'en',
    tasks: 12,
    seed: 0,
  });
  const build = async (file: File | undefined) => {
    if (!file) return;
    setState({ busy: true });
    try {
      const service: RolloutService = mainWorker().service;
      const r = await service.buildFromSpec(file.name, await file.text(), {
        ...options,
        ...(name.trim() ? { name: name.trim() } : {}),
      });
      const skipped = r.skipped.length ? `; ${r.skipped.length} parts skipped` : '';
      lastBuilt = `${file.name} built as ${r.name} (${r.tables} tables, ${r.tools} tools, ${r.tasks} tasks; admitted by the gate${skipped})`;
      setState({ done: lastBuilt });
      onBuilt?.(r.name);
    } catch (e) {
      setState({ error: errorText(e) });
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
        void build(e.dataTransfer?.files[0]);
      }}
    >
      <label>
        Drop an OpenAPI 3 (JSON/YAML) or MCP tool list here, or pick one{' '}
        <input
          id="spec-file"
          type="file"
          accept=".json,.yaml,.yml,.snap,application/json"
          disabled={state.busy}
          onChange={(e) => void build(e.currentTarget.files?.[0])}
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
          onChange={(e) => setOptions({ ...options, tasks: Math.max(1, Number(e.currentTarget.value) || 12) })}
        />
      </label>{' '}
      <label>
        seed{' '}
        <input
          id="spec-seed"
          type="number"
          value={options.seed}
          onChange={(e) => setOptions({ ...options, seed: Math.trunc(Number(e.currentTarget.value) || 0) })}
        />
      </label>{' '}
      <span class="muted" id="spec-status" aria-live="polite">
        {state.busy
          ? 'building and gating…'
          : (state.done ??
            'the same scaffold and gate as switchboard build-domain; the domain stays in this tab for the session')}
      </span>
      {state.error && (
        <p role="alert" class="error" id="spec-error">
          {state.error}
        </p>
      )}
    </section>
  );
}
