/** Page/Worker-less renderer of channel graphs: the browser's own OfflineAudioContext. */
import { offlineRenderer, type GraphRenderer, type OfflineContextLike } from '../../../core/channel/graph.ts';

/** Renders {@link AudioGraph}s in the page with the browser's `OfflineAudioContext`. */
export const browserGraphRenderer: GraphRenderer = offlineRenderer(
  (channels, length, sampleRate) =>
    new OfflineAudioContext(channels, length, sampleRate) as unknown as OfflineContextLike,
);
