/** The doctor's rules, kept pure so they are table-tested apart from any host. */
import type { RequestedSchema } from '../../../shared/requested-schema.js';
import { isObject } from '../../../shared/field-issues.js';

/** Seed 001's five verdicts, plus `advertised_but_autoaccepted` (issue 11): an accept no person could have given. */
export type ProbeVerdict =
  | 'working'
  | 'user_declined'
  | 'advertised_but_autocanceled'
  | 'advertised_but_unanswered'
  | 'unsupported'
  | 'advertised_but_autoaccepted';

/** The verdicts that show the host's dialog does not reach a person: later `auto` asks of the session go elsewhere. */
export const DIALOG_BROKEN_VERDICTS: ReadonlySet<ProbeVerdict> = new Set([
  'advertised_but_autocanceled',
  'advertised_but_unanswered',
  'unsupported',
  'advertised_but_autoaccepted',
]);

/** A "no" faster than this never came from a human: a host was measured auto-cancelling at 1.5 s. */
export const AUTOCANCEL_THRESHOLD_MS = 2000;

export const PROBE_FIELD = 'probe';
const PROBE_CHOICE = 'ok';

/**
 * The probe's form: one required choice with no default. A person has to pick it before the host's form lets them
 * submit; a host that accepts on its own (auto-approve modes answer `accept` with `{}`) sends content without it.
 */
export const PROBE_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    [PROBE_FIELD]: {
      type: 'string',
      title: 'Elicitly check',
      description: 'Pick "OK" and submit: this checks that your app can show questions from tools.',
      oneOf: [{ const: PROBE_CHOICE, title: 'OK' }],
    },
  },
  required: [PROBE_FIELD],
};

/** Whether accepted content carries the choice only a person makes. */
export function probeChoiceMade(content: unknown): boolean {
  return isObject(content) && Object.hasOwn(content, PROBE_FIELD) && content[PROBE_FIELD] === PROBE_CHOICE;
}

export type ProbeObservation =
  | { kind: 'answered'; action: 'accept'; content: unknown; latencyMs: number }
  | { kind: 'answered'; action: 'decline' | 'cancel'; latencyMs: number }
  /** The host answered `accept`, but its content failed the probe's schema before the doctor saw it. */
  | { kind: 'accepted_invalid'; latencyMs: number }
  | { kind: 'timed_out'; latencyMs: number }
  | { kind: 'threw'; latencyMs: number };

export function classifyProbe(observation: ProbeObservation): ProbeVerdict {
  switch (observation.kind) {
    case 'timed_out':
      return 'advertised_but_unanswered';
    case 'threw':
      return 'unsupported';
    case 'accepted_invalid':
      return 'advertised_but_autoaccepted';
    case 'answered':
      if (observation.action === 'accept') return probeChoiceMade(observation.content) ? 'working' : 'advertised_but_autoaccepted';
      return observation.latencyMs < AUTOCANCEL_THRESHOLD_MS ? 'advertised_but_autocanceled' : 'user_declined';
  }
}

/** The probe's `reason` when it was not attempted: a URL-only host has elicitation, but not the form the probe needs. */
export function probeSkipReason(support: Pick<Support, 'elicitation' | 'elicitationForm'>): string {
  return support.elicitation ? 'client did not advertise form elicitation' : 'client did not advertise elicitation';
}

export interface Support {
  elicitation: boolean;
  elicitationForm: boolean;
  elicitationUrl: boolean;
  sampling: boolean;
  roots: boolean;
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
