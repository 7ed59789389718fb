/**
 * Placeholder page: names the product and proves that the in-browser database path works
 * (comlink → module Web Worker → sql.js wasm) by showing SQLite's version.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { workerSqlDbFactory } from '../adapters/browser/worker-db.ts';

/** State of the live database check. */
type Check = { state: 'pending' } | { state: 'ok'; version: string } | { state: 'error'; message: string };

/** Open a database in the worker, ask for `sqlite_version()`, and stop the worker. */
async function sqliteVersion(): Promise<string> {
  const factory = await workerSqlDbFactory();
  try {
    const db = await factory();
    const [row] = await db.all('SELECT sqlite_version() AS version');
    await db.close();
    return String(row?.version);
  } finally {
    await factory.terminate();
  }
}

function DatabaseCheck() {
  const [check, setCheck] = useState<Check>({ state: 'pending' });
  useEffect(() => {
    sqliteVersion().then(
      (version) => setCheck({ state: 'ok', version }),
      (e: unknown) => setCheck({ state: 'error', message: e instanceof Error ? e.message : String(e) }),
    );
  }, []);
  return (
    <p class="check" id="db-check" data-state={check.state} aria-live="polite">
      {check.state === 'pending' && 'Opening an in-browser database…'}
      {check.state === 'ok' && `In-browser database ready: SQLite ${check.version} (sql.js in a Web Worker).`}
      {check.state === 'error' && `In-browser database failed: ${check.message}`}
    </p>
  );
}

function App() {
  return (
    <main>
      <h1>Switchboard</h1>
      <p>
        A sandbox for voice agents: simulated phone calls in executable domains, every tool call changing a real
        database, every call scored automatically.
      </p>
      <DatabaseCheck />
    </main>
  );
}

render(<App />, document.getElementById('app')!);
