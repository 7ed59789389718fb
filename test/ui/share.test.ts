import { describe, expect, it } from 'vitest';
import { PRESET_NAMES } from '../../src/core/channel/presets.ts';
import {
  PRESETS,
  formatHash,
  linkedSpeech,
  paramsSpec,
  parseHash,
  publicEndpoint,
  shareLink,
  specParams,
} from '../../src/ui/share.ts';
import type { CallSpec } from '../../src/adapters/browser/rollout-types.ts';

describe('share links', () => {
  it('lists the core presets', () => {
    expect(PRESETS).toEqual(PRESET_NAMES);
  });

  it('round-trips a scripted call', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 'carrier-pay-balance-1',
      seed: 7,
      preset: 'harsh',
      agent: { kind: 'noop' },
      user: { kind: 'scripted' },
      paceMs: 400,
    };
    const link = shareLink('http://127.0.0.1:5173/#/browse', spec);
    expect(link).toBe(
      'http://127.0.0.1:5173/#/watch?domain=carrier&task=carrier-pay-balance-1&seed=7&preset=harsh&agent=noop&user=scripted&run=1',
    );
    const route = parseHash(link.slice(link.indexOf('#')));
    expect(route.view).toBe('watch');
    expect(paramsSpec(route.params)).toEqual({
      domain: 'carrier',
      taskId: 'carrier-pay-balance-1',
      seed: 7,
      preset: 'harsh',
      agent: { kind: 'noop' },
      user: { kind: 'scripted' },
    });
  });

  it('round-trips channel audio settings and an on-device agent', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 3,
      preset: 'regular',
      agent: { kind: 'local', id: 'whisper-base+qwen3-0.6b' },
      user: { kind: 'scripted' },
      channel: { dropout: 0.3, bargeIn: 0.2 },
    };
    const p = specParams(spec);
    expect(p.toString()).toBe(
      'domain=carrier&task=t&seed=3&preset=regular&agent=local&local=whisper-base%2Bqwen3-0.6b&user=scripted&audio=1&dropout=0.3&barge_in=0.2',
    );
    const { paceMs: _, ...rest } = { ...spec, paceMs: 0 };
    expect(paramsSpec(p)).toEqual(rest);
    // Out-of-range probabilities are clamped; a bad local id is ignored.
    expect(paramsSpec(new URLSearchParams('audio=1&dropout=7&barge_in=-1')).channel).toEqual({
      dropout: 1,
      bargeIn: 0,
    });
    expect(paramsSpec(new URLSearchParams('agent=local&local=../x')).agent).toBeUndefined();
  });

  it('a full-duplex call (issue 17) round-trips as duplex=1', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 3,
      preset: 'clean',
      agent: { kind: 'reference' },
      user: { kind: 'scripted' },
      channel: { dropout: 0, bargeIn: 0.5, duplex: true },
    };
    const p = specParams(spec);
    expect(p.get('duplex')).toBe('1');
    expect(paramsSpec(p).channel).toEqual({ dropout: 0, bargeIn: 0.5, duplex: true });
    expect(paramsSpec(new URLSearchParams('audio=1&duplex=0')).channel).toEqual({ dropout: 0, bargeIn: 0 });
  });

  it('never carries a key or endpoint credentials', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 0,
      preset: 'clean',
      agent: {
        kind: 'remote',
        flavor: 'vllm',
        model: 'Qwen/Qwen3-8B',
        baseURL: 'https://user:pw@llm.example/v1?token=abc',
        apiKey: 'sk-secret',
        temperature: 0.7,
      },
      user: { kind: 'human' },
    };
    const p = specParams(spec);
    expect(p.toString()).not.toMatch(/sk-secret|pw|token|user%3A/);
    expect(p.get('base')).toBe('https://llm.example/v1');
    expect(paramsSpec(p).agent).toEqual({
      kind: 'remote',
      flavor: 'vllm',
      model: 'Qwen/Qwen3-8B',
      baseURL: 'https://llm.example/v1',
      temperature: 0.7,
    });
    expect(shareLink('http://h/', spec)).toMatch(/^http:\/\/h\/#\/call\?/);
  });

  it('names a realtime agent by kind only: no URL, no model, no key (issue 17)', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 0,
      preset: 'clean',
      agent: { kind: 'realtime', url: 'wss://rt.example:8443/v1/realtime?model=m1', dialect: 'beta', apiKey: 'ek-1' },
      user: { kind: 'scripted' },
    };
    const p = specParams(spec);
    expect([...p.keys()].filter((k) => k !== 'task' && k !== 'seed' && k !== 'preset' && k !== 'domain')).toEqual([
      'agent',
      'user',
    ]);
    expect(p.get('agent')).toBe('realtime');
    expect(p.toString()).not.toMatch(/rt\.example|8443|m1|ek-1|beta/);
    // The opening page fills the URL from its own saved settings.
    expect(paramsSpec(p).agent).toEqual({ kind: 'realtime', url: '' });
  });

  it('round-trips a model-backed caller without its key or endpoint credentials', () => {
    const spec: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 2,
      preset: 'clean',
      agent: {
        kind: 'remote',
        flavor: 'vllm',
        model: 'agent-m',
        baseURL: 'https://llm.example/v1',
        apiKey: 'sk-agent',
      },
      user: {
        kind: 'remote',
        flavor: 'vllm-omni',
        model: 'caller-m',
        baseURL: 'https://me:pw@sim.example/v1?key=abc#x',
        apiKey: 'sk-caller',
        temperature: 0.4,
      },
    };
    const link = shareLink('http://h/', spec);
    expect(link).toMatch(/^http:\/\/h\/#\/watch\?/);
    expect(link).not.toMatch(/sk-caller|sk-agent|pw|abc|me%3A|me:/);
    const p = parseHash(link.slice(link.indexOf('#'))).params;
    expect(p.get('user_base')).toBe('https://sim.example/v1');
    expect(paramsSpec(p)).toEqual({
      domain: 'carrier',
      taskId: 't',
      seed: 2,
      preset: 'clean',
      agent: { kind: 'remote', flavor: 'vllm', model: 'agent-m', baseURL: 'https://llm.example/v1' },
      user: {
        kind: 'remote',
        flavor: 'vllm-omni',
        model: 'caller-m',
        baseURL: 'https://sim.example/v1',
        temperature: 0.4,
      },
    });
    // A caller flavor the page does not know falls back to openai; the agent's settings stay apart.
    expect(paramsSpec(new URLSearchParams('user=remote&user_flavor=x&user_model=m&flavor=vllm')).user).toEqual({
      kind: 'remote',
      flavor: 'openai',
      model: 'm',
      baseURL: '',
    });
  });

  it('ignores bad values and parses empty hashes as the start view', () => {
    expect(parseHash('').view).toBe('home');
    expect(formatHash('batch')).toBe('#/batch');
    expect(paramsSpec(new URLSearchParams('seed=-1&preset=loud&agent=x&user=y'))).toEqual({});
    expect(publicEndpoint('not a url')).toBe('');
  });

  describe('speech settings', () => {
    const RECOGNIZERS = [
      { id: 'whisper-base', revision: 'a'.repeat(40) },
      { id: 'moonshine-base', revision: 'b'.repeat(40) },
    ];
    const call: CallSpec = {
      domain: 'carrier',
      taskId: 't',
      seed: 1,
      preset: 'clean',
      agent: { kind: 'remote', flavor: 'openai', model: 'm', baseURL: 'https://llm.example/v1', apiKey: 'sk-saved' },
      user: { kind: 'human' },
      channel: { dropout: 0, bargeIn: 0 },
      speakAgent: true,
    };

    it('a call link carries agent speech and the recognizer at its revision, and opening it restores them', () => {
      const link = shareLink('http://h/', call, RECOGNIZERS[1]);
      expect(link).toBe(
        `http://h/#/call?domain=carrier&task=t&seed=1&preset=clean&agent=remote&flavor=openai&model=m&base=https%3A%2F%2Fllm.example%2Fv1&user=human&audio=1&speak=1&asr=moonshine-base&asr_rev=${'b'.repeat(40)}&run=1`,
      );
      expect(link).not.toContain('sk-saved');
      const p = parseHash(link.slice(link.indexOf('#'))).params;
      expect(paramsSpec(p).speakAgent).toBe(true);
      expect(linkedSpeech(p, RECOGNIZERS)).toEqual({ asrId: 'moonshine-base', errors: [] });
      // A watched call has no caller voice to recognize: the recognizer stays out of its link.
      const watched = specParams({ ...call, user: { kind: 'scripted' } }, RECOGNIZERS[1]);
      expect(watched.has('asr')).toBe(false);
      expect(watched.get('speak')).toBe('1');
      expect(specParams({ ...call, speakAgent: false }).has('speak')).toBe(false);
    });

    it('bad speech values in a crafted link are named, nothing is preselected, and no saved key appears', () => {
      const check = (q: string) => linkedSpeech(new URLSearchParams(q), RECOGNIZERS);
      expect(check('asr=whisper-large&asr_rev=main')).toEqual({
        errors: [
          `The link's speech recognizer "whisper-large" is not in this page's model manifest (it has: whisper-base, moonshine-base); pick one below.`,
        ],
      });
      expect(check(`asr=whisper-base&asr_rev=${'c'.repeat(40)}`)).toEqual({
        errors: [
          `The link's speech recognizer whisper-base is at revision "${'c'.repeat(40)}"; this page pins ${'a'.repeat(40)}, whose words may differ. Pick it below to use this page's.`,
        ],
      });
      expect(check('asr=whisper-base')).toEqual({
        errors: [
          `The link names speech recognizer whisper-base without its revision (asr_rev); this page pins ${'a'.repeat(40)}. Pick it below to use this page's.`,
        ],
      });
      expect(check('asr_rev=x&speak=yes')).toEqual({
        errors: [
          `The link's speak="yes" is not 1 or 0: the agent's replies are not spoken.`,
          'The link gives asr_rev without asr: no speech recognizer is chosen.',
        ],
      });
      expect(paramsSpec(new URLSearchParams('speak=yes')).speakAgent).toBeUndefined();
      // A huge or markup-laden value is quoted and cut, never echoed whole.
      const long = `<img src=x onerror=alert(1)>${'k'.repeat(500)}`;
      const [msg] = check(`asr=${encodeURIComponent(long)}`).errors;
      expect(msg).toBe(
        `The link's speech recognizer ${JSON.stringify(`${long.slice(0, 60)}…`)} is not in this page's model manifest (it has: whisper-base, moonshine-base); pick one below.`,
      );
      expect(linkedSpeech(new URLSearchParams('asr=x&asr_rev=y'), []).errors).toEqual([
        `The link's speech recognizer "x" is not in this page's model manifest (it has: none); pick one below.`,
      ]);
    });
  });
});
