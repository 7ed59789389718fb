/**
 * The tau2-bench data set the page downloads: the core's pinned manifest
 * (`src/core/tau2/data-manifest.ts`). Its own module so that a test build can point the page at
 * another pin of the same shape.
 */
import { TAU2_DATA_MANIFEST, type Tau2DataManifest } from '../../core/tau2/data-manifest.ts';

/** The manifest of the page's tau2-bench downloads. */
export const TAU2_PIN: Tau2DataManifest = TAU2_DATA_MANIFEST;
