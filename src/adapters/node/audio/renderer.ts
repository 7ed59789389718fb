/** Node renderer of channel graphs: node-web-audio-api's OfflineAudioContext (Rust, no browser). */
import { offlineRenderer, type GraphRenderer, type OfflineContextLike } from '../../../core/channel/graph.ts';

let loaded: Promise<GraphRenderer> | null = null;

/**
 * Renders {@link AudioGraph}s in Node with node-web-audio-api. Its native addon is imported on the
 * first render (dynamic `import()`), so commands that render no audio start without it.
 */
export const nodeGraphRenderer: GraphRenderer = {
  async render(graph) {
    loaded ??= import('node-web-audio-api').then(({ OfflineAudioContext }) =>
      offlineRenderer(
        (channels, length, sampleRate) =>
          new OfflineAudioContext(channels, length, sampleRate) as unknown as OfflineContextLike,
      ),
    );
    return (await loaded).render(graph);
  },
};
