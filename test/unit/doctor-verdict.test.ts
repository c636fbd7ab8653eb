import { describe, expect, it } from 'vitest';
import type { ProbeObservation, ProbeVerdict } from '../../shared/doctor-verdict.js';
import { classifyProbe, deriveSupport } from '../../shared/doctor-verdict.js';

describe('classifyProbe', () => {
  const rows: [string, ProbeObservation, ProbeVerdict][] = [
    ['accept, fast', { kind: 'answered', action: 'accept', latencyMs: 50 }, 'working'],
    ['accept, slow', { kind: 'answered', action: 'accept', latencyMs: 30_000 }, 'working'],
    ['decline in 5 ms', { kind: 'answered', action: 'decline', latencyMs: 5 }, 'advertised_but_autocanceled'],
    ['cancel in 8 ms', { kind: 'answered', action: 'cancel', latencyMs: 8 }, 'advertised_but_autocanceled'],
    ['cancel at 1500 ms (a measured host)', { kind: 'answered', action: 'cancel', latencyMs: 1500 }, 'advertised_but_autocanceled'],
    ['decline at 1999 ms', { kind: 'answered', action: 'decline', latencyMs: 1999 }, 'advertised_but_autocanceled'],
    ['decline at exactly 2000 ms', { kind: 'answered', action: 'decline', latencyMs: 2000 }, 'user_declined'],
    ['decline after 2.5 s', { kind: 'answered', action: 'decline', latencyMs: 2500 }, 'user_declined'],
    ['cancel after 10 s', { kind: 'answered', action: 'cancel', latencyMs: 10_000 }, 'user_declined'],
    ['no answer', { kind: 'timed_out', latencyMs: 40_000 }, 'advertised_but_unanswered'],
    ['threw', { kind: 'threw', latencyMs: 3 }, 'unsupported'],
  ];
  it.each(rows)('%s → verdict', (_name, observation, verdict) => {
    expect(classifyProbe(observation)).toBe(verdict);
  });
});

describe('deriveSupport', () => {
  const none = { elicitation: false, elicitationForm: false, elicitationUrl: false, sampling: false, roots: false };
  const rows: [string, unknown, Partial<typeof none>][] = [
    ['nothing advertised', {}, {}],
    ['not an object', null, {}],
    ['empty elicitation means form only', { elicitation: {} }, { elicitation: true, elicitationForm: true }],
    ['form and url', { elicitation: { form: {}, url: {} } }, { elicitation: true, elicitationForm: true, elicitationUrl: true }],
    ['url only', { elicitation: { url: {} } }, { elicitation: true, elicitationUrl: true }],
    ['form only, explicit', { elicitation: { form: {} } }, { elicitation: true, elicitationForm: true }],
    ['elicitation: true is not an object', { elicitation: true }, {}],
    ['sampling and roots', { sampling: {}, roots: { listChanged: true } }, { sampling: true, roots: true }],
  ];
  it.each(rows)('%s', (_name, capabilities, expected) => {
    expect(deriveSupport(capabilities)).toEqual({ ...none, ...expected });
  });
});
