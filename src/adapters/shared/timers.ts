/** {@link Timers} on the platform's own timer (`setTimeout`, in Node and the page alike). */
import type { Timers } from '../../core/ports/clock.ts';

/** Real wall-clock timers. */
export const realTimers: Timers = {
  after(ms, fire) {
    const handle = setTimeout(fire, ms);
    return () => clearTimeout(handle);
  },
};
