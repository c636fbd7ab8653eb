/** The doctor's rules, kept pure so they are table-tested apart from any host. */

export type ProbeVerdict =
  | 'working'
  | 'user_declined'
  | 'advertised_but_autocanceled'
  | 'advertised_but_unanswered'
  | 'unsupported';

/** A "no" faster than this never came from a human: a host was measured auto-cancelling at 1.5 s. */
const AUTOCANCEL_THRESHOLD_MS = 2000;
/** Below the ~60 s tool-call limit of common hosts, so the report still comes back in-band. */
export const DEFAULT_PROBE_TIMEOUT_MS = 40_000;

export type ProbeObservation =
  | { kind: 'answered'; action: 'accept' | 'decline' | 'cancel'; latencyMs: number }
  | { kind: 'timed_out'; latencyMs: number }
  | { kind: 'threw'; latencyMs: number };

export function classifyProbe(observation: ProbeObservation): ProbeVerdict {
  switch (observation.kind) {
    case 'timed_out':
      return 'advertised_but_unanswered';
    case 'threw':
      return 'unsupported';
    case 'answered':
      if (observation.action === 'accept') return 'working';
      return observation.latencyMs < AUTOCANCEL_THRESHOLD_MS ? 'advertised_but_autocanceled' : 'user_declined';
  }
}

export interface Support {
  elicitation: boolean;
  elicitationForm: boolean;
  elicitationUrl: boolean;
  sampling: boolean;
  roots: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Applies the spec's reading of advertised capabilities: an empty `elicitation: {}` means form mode only. */
export function deriveSupport(capabilities: unknown): Support {
  const caps = isObject(capabilities) ? capabilities : {};
  const elicitation = caps.elicitation;
  const advertised = isObject(elicitation);
  const form = advertised && ('form' in elicitation ? isObject(elicitation.form) : !('url' in elicitation));
  return {
    elicitation: advertised,
    elicitationForm: form,
    elicitationUrl: advertised && isObject(elicitation.url),
    sampling: isObject(caps.sampling),
    roots: isObject(caps.roots),
  };
}
