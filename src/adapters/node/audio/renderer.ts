/** Node renderer of channel graphs: node-web-audio-api's OfflineAudioContext (Rust, no browser). */
import { OfflineAudioContext } from 'node-web-audio-api';
import { offlineRenderer, type GraphRenderer, type OfflineContextLike } from '../../../core/channel/graph.ts';

/** Renders {@link AudioGraph}s in Node with node-web-audio-api. */
export const nodeGraphRenderer: GraphRenderer = offlineRenderer(
  (channels, length, sampleRate) =>
    new OfflineAudioContext(channels, length, sampleRate) as unknown as OfflineContextLike,
);
