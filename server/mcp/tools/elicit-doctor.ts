import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { CompanionReport, HubInfoView } from '../doctor/doctor-report.js';
import {
  ROUTED_TOOLS,
  SHARE_LIMITS,
  companionReport,
  deprecations,
  deriveExtensions,
  reportFileName,
  routeReport,
  shareText,
  sharedReportFile,
} from '../doctor/doctor-report.js';
import type { ProbeObservation, ProbeVerdict } from '../doctor/doctor-verdict.js';
import {
  DIALOG_BROKEN_VERDICTS,
  PROBE_FIELD,
  PROBE_SCHEMA,
  classifyProbe,
  deriveSupport,
  probeSkipReason,
} from '../doctor/doctor-verdict.js';
import { clipReason } from '../../../shared/limits.js';
import { autoRoute, automaticNo, markDialogBroken } from '../ask-routing.js';
import { boundedJson } from '../bounded-json.js';
import type { ElicitOutcome } from '../host-elicitation.js';
import { elicitFromHost } from '../host-elicitation.js';
import { log } from '../../log.js';
import { SERVER_INFO } from '../../package-info.js';
import { ensurePrivateDir, writePrivateFile } from '../../private-files.js';
import type { Session } from '../session.js';
import { hostView } from '../session.js';
import { structured } from '../tool-result.js';
import { defineTool } from './tool.js';

const ElicitDoctorInputSchema = z.strictObject({
  probeElicitation: z.boolean().optional().describe('Default false. When true, show the person one real form dialog and record what happened.'),
  probe_elicitation: z.boolean().optional().describe('Alias of probeElicitation (older clients).'),
  checkCompanion: z
    .boolean()
    .optional()
    .describe('Default false. When true and this process has not joined the hub yet, join (or start) it to report the connected extensions and pending requests.'),
  share: z
    .boolean()
    .optional()
    .describe('Default false. When true, also write this report (no answers, no conversation) as a JSON file in the state dir\'s reports/ folder and return it as shareText, ready to file; nothing is sent anywhere.'),
  productName: z.string().max(SHARE_LIMITS.productName).optional().describe('With share: the host product\'s name (e.g. "Claude Code"); at most 100 characters.'),
  productVersion: z.string().max(SHARE_LIMITS.productVersion).optional().describe('With share: the host product\'s version; at most 50 characters.'),
  notes: z.string().max(SHARE_LIMITS.notes).optional().describe('With share: anything unusual about the setup (OS, flags, policy); at most 2000 characters.'),
});

const RouteSchema = z.looseObject({
  via: z.enum(['host', 'extension', 'app', 'app+extension', 'none']),
  why: z.string(),
  knownHost: z.looseObject({ id: z.string(), evidence: z.string() }).optional(),
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
    extensions: z.looseObject({ apps: z.boolean(), tasks: z.boolean(), names: z.array(z.string()) }),
  }),
  probes: z.looseObject({}).optional(),
  companion: z.looseObject({
    hub: z.looseObject({ role: z.enum(['hub', 'relay', 'none']), port: z.number() }),
    reviewers: z.looseObject({ extensionsConnected: z.number(), lastSeenAt: z.string().nullable() }).nullable(),
    pending: z.number().nullable(),
    stateDir: z.string(),
  }),
  routing: z.looseObject(Object.fromEntries(ROUTED_TOOLS.map((tool) => [tool, RouteSchema]))),
  deprecations: z.array(z.looseObject({ feature: z.string(), message: z.string() })),
  shared: z.boolean().optional(),
  sharePath: z.string().optional(),
  shareError: z.string().optional(),
  shareText: z.string().optional(),
});

type ShareInput = Pick<z.infer<typeof ElicitDoctorInputSchema>, 'productName' | 'productVersion' | 'notes'>;

/** The negotiated revision: this request's envelope on 2026-07-28, the initialize handshake's on 2025. */
function protocolVersion(ctx: ServerContext, session: Session): unknown {
  return session.era === '2026-07-28' ? (hostView(ctx, session).protocolVersion ?? '2026-07-28') : (session.negotiatedVersion() ?? null);
}

/**
 * How much of the host's handshake the report echoes. The host chooses its size (a line may be 10 MB) and its depth, and
 * every call answers it and, with share, writes it to disk: 16 KB as written (indented) and 32 levels hold any real
 * client's clientInfo and capabilities.
 */
const ECHO_LIMITS = { maxBytes: 16 * 1024, maxDepth: 32, indent: 2 } as const;
/** The 2026-07-28 protocolVersion comes from the request's envelope: a date, so a few bytes are plenty. */
const VERSION_LIMITS = { maxBytes: 64, maxDepth: 1 } as const;

/** The host's handshake as the report shows it, cut to ECHO_LIMITS with a sentence saying so when it did not fit. */
function echoedRequest(ctx: ServerContext, session: Session): { request: Record<string, unknown>; truncated?: string } {
  const host = hostView(ctx, session);
  const raw: Record<string, unknown> = { clientInfo: host.clientInfo ?? null, capabilities: host.capabilities ?? null };
  if (host.protocolVersion !== undefined) raw.protocolVersion = host.protocolVersion;
  const echo = boundedJson(raw, ECHO_LIMITS);
  const request = typeof echo.value === 'object' && echo.value !== null ? { ...echo.value } : {};
  if (!echo.truncated) return { request };
  return {
    request,
    truncated:
      `The host's initialize request was cut to ${ECHO_LIMITS.maxBytes} bytes and ${ECHO_LIMITS.maxDepth} levels for this ` +
      'report ("…[cut]" marks what was left out); support and routing were read from all of it.',
  };
}

/** The seed's layers (initialize, support) plus the support the client declared under `capabilities.extensions`. */
function handshakeReport(ctx: ServerContext, session: Session): Record<string, unknown> {
  const host = hostView(ctx, session);
  const { request, truncated } = echoedRequest(ctx, session);
  return {
    era: session.era,
    initialize: {
      request,
      response: {
        protocolVersion: boundedJson(protocolVersion(ctx, session), VERSION_LIMITS).value ?? null,
        capabilities: session.serverCapabilities(),
        serverInfo: SERVER_INFO,
      },
      ...(truncated ? { truncated } : {}),
    },
    support: { ...deriveSupport(host.capabilities), extensions: deriveExtensions(host.capabilities) },
  };
}

function observe(outcome: ElicitOutcome): ProbeObservation {
  if (outcome.action === 'accept') return { kind: 'answered', action: 'accept', content: outcome.content, latencyMs: outcome.latencyMs };
  if (outcome.action !== 'error') return { kind: 'answered', action: outcome.action, latencyMs: outcome.latencyMs };
  // An accept whose content failed the schema (host-elicitation reads the SDK's own refusal on 2025 as the same).
  if (outcome.reason === 'invalid_content') {
    return { kind: 'accepted_invalid', latencyMs: outcome.latencyMs };
  }
  return { kind: outcome.reason === 'timed_out' ? 'timed_out' : 'threw', latencyMs: outcome.latencyMs };
}

const AUTOACCEPTED_REASON = `the host answered "accept" without the choice a person must make ("${PROBE_FIELD}" has no default), so nobody saw the dialog`;

/** The sentence the session keeps as the reason later `auto` asks go to the extension. */
function brokenWhy(verdict: ProbeVerdict, probe: Record<string, unknown>, automaticNoMs: number): string {
  switch (verdict) {
    case 'advertised_but_autocanceled':
      return `the doctor's probe was answered "${String(probe.action)}" in ${String(probe.latencyMs)} ms, faster than a person can (< ${automaticNoMs} ms)`;
    case 'advertised_but_unanswered':
      return "the doctor's probe got no answer within its bound";
    case 'advertised_but_autoaccepted':
      return "the doctor's probe was accepted without the choice a person must make";
    default:
      return `the doctor's probe failed: ${String(probe.reason ?? 'an error')}`;
  }
}

/** `probes.elicitationForm`, and the verdict when the probe ran. */
function probeReport(outcome: ElicitOutcome, skipReason: string): { probe: Record<string, unknown>; verdict?: ProbeVerdict } {
  if (outcome.action === 'error' && outcome.reason === 'not_advertised') return { probe: { attempted: false, reason: skipReason } };
  const observation = observe(outcome);
  const verdict = classifyProbe(observation);
  const autoaccepted = verdict === 'advertised_but_autoaccepted';
  // The host's action, even when its content was refused: "accept" is what it said.
  const action = outcome.action === 'error' ? (observation.kind === 'accepted_invalid' ? 'accept' : null) : outcome.action;
  const data = outcome.action === 'accept' && !autoaccepted ? (outcome.content[PROBE_FIELD] ?? null) : null;
  const probe: Record<string, unknown> = { attempted: true, action, latencyMs: outcome.latencyMs, data, verdict };
  // Our own sentence for an auto-accept: the validator's message could quote what the host sent.
  if (autoaccepted) probe.reason = AUTOACCEPTED_REASON;
  else if (outcome.action === 'error') probe.reason = outcome.error;
  return { probe, verdict };
}

/** Asks the hub only when this process already joined it, or the caller asked for it: a report must not elect a hub. */
async function companion(session: Session, mayJoin: boolean): Promise<CompanionReport> {
  const { port, stateDir } = session.companion;
  const base = { port, stateDir };
  if (session.companion.role() === 'none' && !mayJoin) return companionReport({ ...base, role: 'none', info: null });
  let info: HubInfoView | { error: string };
  try {
    const answer = await session.approvals.call('info', {});
    info = answer.ok ? answer.value : { error: answer.error.message };
  } catch (error) {
    info = { error: clipReason(error instanceof Error ? error.message : String(error)) };
  }
  return companionReport({ ...base, role: session.companion.role(), info });
}

type Shared = ({ shared: true; sharePath: string } | { shared: false; shareError: string }) & { shareText: string };

/**
 * Sharing, in the local edition: nothing leaves this computer. The shareable report is written under
 * `<stateDir>/reports/` (0700 dir, 0600 file, never through a symlink) and handed back as a ready-to-file text the
 * person may post themselves; the text comes back even when the file could not be written.
 */
function share(session: Session, report: Record<string, unknown>, meta: ShareInput): Shared {
  const now = Date.now();
  const file = sharedReportFile(report, meta, now);
  const text = shareText(file);
  try {
    const dir = join(session.companion.stateDir, 'reports');
    // The state dir first: it is checked (a real dir of this user's, 0700) before anything is created inside it.
    ensurePrivateDir(session.companion.stateDir);
    ensurePrivateDir(dir);
    const path = join(dir, reportFileName(now, randomBytes(4).toString('hex')));
    writePrivateFile(path, `${JSON.stringify(file, null, 2)}\n`);
    return { shared: true, sharePath: path, shareText: text };
  } catch (error) {
    const message = clipReason(error instanceof Error ? error.message : String(error));
    log('warn', 'could not write the doctor report', { error: message });
    return { shared: false, shareError: message, shareText: text };
  }
}

export const elicitDoctor = defineTool({
  name: 'elicit_doctor',
  config: {
    title: 'Check where questions reach the person',
    description:
      'Report whether this host really supports elicitation (the dialogs behind elicit_confirm, elicit_form and ' +
      'elicit_selection): what it advertised in the handshake, what that means, where an auto ask of each goes now ' +
      '(the host\'s dialog, the Elicitly extension, or nowhere) and why, and the companion side (hub, connected ' +
      'extensions, pending requests). With probeElicitation: true, one real dialog is sent and the report says what ' +
      'happened: some hosts advertise the capability but auto-decline in milliseconds, auto-accept without asking, or ' +
      'never show the dialog. share: true also writes the report (no answers) to the state dir and returns it as a ' +
      'ready-to-file text (shareText) for the person to post; nothing is sent anywhere.',
    inputSchema: ElicitDoctorInputSchema,
    outputSchema: ElicitDoctorOutputSchema,
    // Not read-only: share writes a file, checkCompanion may start the hub, the probe shows the person a dialog.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  async handler(args, ctx, session) {
    const base = handshakeReport(ctx, session);
    const support = deriveSupport(hostView(ctx, session).capabilities);
    let probes: Record<string, unknown> | undefined;
    if (args.probeElicitation ?? args.probe_elicitation ?? false) {
      const step = await elicitFromHost(ctx, session, {
        tool: 'elicit_doctor',
        message: 'Elicitly is checking that this app can show questions from tools. Choose "OK" and submit.',
        requestedSchema: PROBE_SCHEMA,
        timeoutMs: session.probeTimeoutMs,
      });
      // 2026-07-28: the dialog is the host's next step; the rest of the report comes with the answer.
      if (!step.done) return step.result;
      const { probe, verdict } = probeReport(step.outcome, probeSkipReason(support));
      probes = { elicitationForm: probe };
      // Remembered for the session: its later auto asks go to the extension instead of a dialog nobody sees. A "no"
      // is the verdict's under 2000 ms (seed 001) but reroutes only under 250 ms: a person can click that fast.
      const reroutes = verdict === 'advertised_but_autocanceled' ? automaticNo(step.outcome, session.automaticNoMs) : verdict !== undefined && DIALOG_BROKEN_VERDICTS.has(verdict);
      if (verdict && reroutes) {
        markDialogBroken(session, brokenWhy(verdict, probe, session.automaticNoMs));
      }
    }
    const companionPart = await companion(session, args.checkCompanion ?? false);
    // After the probe: a dialog it showed broken already sends this session's auto asks elsewhere.
    const route = routeReport(autoRoute(ctx, session), support, companionPart.reviewers, session.app !== null);
    const report: Record<string, unknown> = {
      ...base,
      ...(probes ? { probes } : {}),
      companion: companionPart,
      routing: Object.fromEntries(ROUTED_TOOLS.map((tool) => [tool, route])),
      deprecations: deprecations(protocolVersion(ctx, session), hostView(ctx, session).capabilities),
    };
    if (!args.share) return structured(report);
    return structured({ ...report, ...share(session, report, args) });
  },
});
