import type { ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { ProbeObservation } from '../../../shared/doctor-verdict.js';
import { classifyProbe, deriveSupport } from '../../../shared/doctor-verdict.js';
import type { RequestedSchema } from '../../../shared/requested-schema.js';
import type { ElicitOutcome } from '../host-elicitation.js';
import { elicitFromHost } from '../host-elicitation.js';
import { SERVER_INFO } from '../../package-info.js';
import type { Session } from '../session.js';
import { hostView } from '../session.js';
import { structured } from '../tool-result.js';
import type { ToolDefinition } from './tool.js';

const ElicitDoctorInputSchema = z.strictObject({
  probeElicitation: z.boolean().optional().describe('Default false. When true, show the person one real form dialog and record what happened.'),
  probe_elicitation: z.boolean().optional().describe('Alias of probeElicitation (older clients).'),
});

const ElicitDoctorOutputSchema = z.looseObject({
  era: z.enum(['2025', '2026-07-28']),
  initialize: z.looseObject({ request: z.looseObject({}), response: z.looseObject({}) }),
  support: z.looseObject({
    elicitation: z.boolean(),
    elicitationForm: z.boolean(),
    elicitationUrl: z.boolean(),
    sampling: z.boolean(),
    roots: z.boolean(),
  }),
  probes: z.looseObject({}).optional(),
});

const PROBE_FIELD = 'probe';
const PROBE_SCHEMA: RequestedSchema = {
  type: 'object',
  properties: {
    [PROBE_FIELD]: {
      type: 'string',
      title: 'Elicitly check',
      description: 'Pick "OK" and submit: this checks that your app can show questions from tools.',
      oneOf: [{ const: 'ok', title: 'OK' }],
      default: 'ok',
    },
  },
  required: [PROBE_FIELD],
};

function report(ctx: ServerContext, session: Session): Record<string, unknown> {
  const host = hostView(ctx, session);
  const request: Record<string, unknown> = { clientInfo: host.clientInfo ?? null, capabilities: host.capabilities ?? null };
  if (host.protocolVersion !== undefined) request.protocolVersion = host.protocolVersion;
  return {
    era: session.era,
    initialize: {
      request,
      response: {
        protocolVersion: session.era === '2026-07-28' ? (host.protocolVersion ?? '2026-07-28') : (session.negotiatedVersion() ?? null),
        capabilities: session.serverCapabilities(),
        serverInfo: SERVER_INFO,
      },
    },
    support: deriveSupport(host.capabilities),
  };
}

function observe(outcome: ElicitOutcome): ProbeObservation {
  if (outcome.action === 'error') return { kind: outcome.reason === 'timed_out' ? 'timed_out' : 'threw', latencyMs: outcome.latencyMs };
  return { kind: 'answered', action: outcome.action, latencyMs: outcome.latencyMs };
}

function probeReport(outcome: ElicitOutcome): Record<string, unknown> {
  if (outcome.action === 'error' && outcome.reason === 'not_advertised') return { attempted: false, reason: outcome.error };
  const verdict = classifyProbe(observe(outcome));
  const data = outcome.action === 'accept' ? (outcome.content[PROBE_FIELD] ?? null) : null;
  const probe: Record<string, unknown> = {
    attempted: true,
    action: outcome.action === 'error' ? null : outcome.action,
    latencyMs: outcome.latencyMs,
    data,
    verdict,
  };
  if (outcome.action === 'error') probe.reason = outcome.error;
  return probe;
}

export const elicitDoctor: ToolDefinition = {
  name: 'elicit_doctor',
  register(server, session) {
    server.registerTool(
      'elicit_doctor',
      {
        title: 'Check the host’s dialog support',
        description:
          'Report whether this host really supports elicitation (the dialogs behind elicit_confirm and elicit_form): what it ' +
          'advertised in the handshake, what that means, and — with probeElicitation: true — what happened when one real ' +
          'dialog was sent. Use it before relying on elicit_confirm or elicit_form in an unfamiliar host: some hosts advertise ' +
          'the capability but auto-decline in milliseconds or never show the dialog.',
        inputSchema: ElicitDoctorInputSchema,
        outputSchema: ElicitDoctorOutputSchema,
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (args, ctx) => {
        const base = report(ctx, session);
        if (!(args.probeElicitation ?? args.probe_elicitation ?? false)) return structured(base);
        const step = await elicitFromHost(ctx, session, {
          tool: 'elicit_doctor',
          message: 'Elicitly is checking that this app can show questions from tools. Choose "OK" and submit.',
          requestedSchema: PROBE_SCHEMA,
          timeoutMs: session.probeTimeoutMs,
        });
        if (!step.done) return step.result;
        return structured({ ...base, probes: { elicitationForm: probeReport(step.outcome) } });
      },
    );
  },
};
