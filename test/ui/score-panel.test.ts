/** How the live score panel words an assertion verdict while a call runs and after it. */
import { describe, expect, it } from 'vitest';
import { shownState } from '../../src/ui/components/score-panel.tsx';

describe('assertion states in the score panel', () => {
  it('shows a failure that points at no turn as pending while the call runs (the agent may still act)', () => {
    expect(shownState({ status: 'failed', turn: null }, true)).toBe('pending');
    expect(shownState({ status: 'failed', turn: null }, false)).toBe('failed');
  });
  it('shows a failure at a turn as failed so far, and the final verdict once the call ended', () => {
    expect(shownState({ status: 'failed', turn: 7 }, true)).toBe('failed so far');
    expect(shownState({ status: 'passed', turn: 3 }, true)).toBe('passed so far');
    expect(shownState({ status: 'passed', turn: 3 }, false)).toBe('passed');
    expect(shownState({ status: 'skipped', turn: null }, true)).toBe('pending');
    expect(shownState({ status: 'not_judged', turn: null }, false)).toBe('not judged');
  });
});
