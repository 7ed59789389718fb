/** A component loaded on first render (its own chunk), with a status line while it loads. */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Wrap a dynamic import of a component. */
export function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  let cached: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [C, setC] = useState<ComponentType<P> | undefined>(() => cached);
    const [error, setError] = useState<string>();
    useEffect(() => {
      if (C) return;
      load().then(
        (c) => {
          cached = c;
          setC(() => c);
        },
        (e: unknown) => setError(String(e)),
      );
    }, []);
    if (error) return <p role="alert">Could not load this view: {error}</p>;
    if (!C) return <p class="muted">Loading…</p>;
    return <C {...props} />;
  };
}
