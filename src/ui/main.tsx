/**
 * Page entry: the app shell. Views load on demand (separate chunks); the core, the domains and
 * sql.js run in Web Workers (`workers/rollout.worker.ts`), so first paint needs only Preact.
 */
import { render } from 'preact';
import './styles.css';
import { App } from './app.tsx';

render(<App />, document.getElementById('app')!);
