/** What the app shell hands every view. */
import type { DomainInfo } from '../adapters/browser/rollout-types.ts';
import type { Route } from './share.ts';

/** Props every view gets. */
export interface ViewProps {
  info: DomainInfo;
  route: Route;
  /** A domain was loaded from disk into the main worker: list it and switch to it. */
  onDomainOpened?: (name: string) => void;
  /** A domain built in the page was deleted: drop it from the list (and leave it if it is shown). */
  onDomainRemoved?: (name: string) => void;
}
