/**
 * Where the page gets on-device models: the Hugging Face Hub (`https://huggingface.co/`, files at
 * `<repo>/resolve/<revision>/<path>`), with the models and agents of `models/manifest.json`,
 * bundled into the page. Its own module so that a test build can point the page at a local
 * server with the Hub's URL layout and a manifest of generated tiny models.
 */
import manifest from '../../../models/manifest.json';

/** The Hub host (absolute, or relative to the page's origin). */
export const MODEL_HUB = 'https://huggingface.co/';

/** The on-device model manifest the page offers. */
export const MODEL_MANIFEST: unknown = manifest;
