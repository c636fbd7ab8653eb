/**
 * The doctor's report beyond the seed's layers (issue 11): the companion side, where an `auto` ask would go, the
 * client's declared extensions, deprecated client features, and the report as it may be shared. Pure, so every rule
 * is table-tested apart from any host or hub.
 */
import type { Support } from './doctor-verdict.js';
import { isObject } from '../../../shared/field-issues.js';


// ---------------------------------------------------------------------------------------------------------------------
// support.extensions

/** The extension names the doctor knows, by the boolean it reports for each. */
export const KNOWN_EXTENSIONS = {
  /** MCP Apps: the host renders a server's own UI. */
  apps: 'io.modelcontextprotocol/ui',
  tasks: 'io.modelcontextprotocol/tasks',
} as const;

/** The names list echoes what the client sent, so it is bounded like everything else that comes from outside. */
const MAX_EXTENSION_NAMES = 100;
const MAX_EXTENSION_NAME_CHARS = 200;

export interface ExtensionsSupport {
  apps: boolean;
  tasks: boolean;
  /** Every name the client declared under `capabilities.extensions`, as sent (at most 100, each clipped to 200 chars). */
  names: string[];
}

/** What the client declared under `capabilities.extensions` (a map of name → settings object, per the schema). */
export function deriveExtensions(capabilities: unknown): ExtensionsSupport {
  const declared = isObject(capabilities) && isObject(capabilities.extensions) ? capabilities.extensions : {};
  const has = (name: string) => Object.hasOwn(declared, name) && isObject(declared[name]);
  return {
    apps: has(KNOWN_EXTENSIONS.apps),
    tasks: has(KNOWN_EXTENSIONS.tasks),
    names: Object.keys(declared)
      .slice(0, MAX_EXTENSION_NAMES)
      .map((name) => name.slice(0, MAX_EXTENSION_NAME_CHARS)),
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// deprecations

export type DeprecatedFeature = 'sampling' | 'roots' | 'logging';

export interface Deprecation {
  feature: DeprecatedFeature;
  message: string;
}

/** The first protocol revision that deprecates these client features (SEP-2577). */
export const SEP_2577_VERSION = '2026-07-28';

/** Wording from the SDK's own deprecation notes (`@modelcontextprotocol/core`, SEP-2577): what to use instead. */
const SEP_2577: Record<DeprecatedFeature, string> = {
  sampling:
    'sampling is deprecated as of protocol 2026-07-28 (SEP-2577) and stays in the specification for at least twelve months; servers are to call LLM provider APIs directly instead.',
  roots:
    'roots is deprecated as of protocol 2026-07-28 (SEP-2577) and stays in the specification for at least twelve months; servers are to take paths from tool parameters, resource URIs or configuration instead.',
  logging:
    'logging is deprecated as of protocol 2026-07-28 (SEP-2577) and stays in the specification for at least twelve months; servers are to log to stderr (stdio) or OpenTelemetry instead.',
};

/**
 * The client features the negotiated protocol deprecates, only those the client declared. Revisions are dates, so
 * a later revision compares greater as text; one that is not a date (or missing) deprecates nothing we know of.
 */
export function deprecations(protocolVersion: unknown, capabilities: unknown): Deprecation[] {
  if (typeof protocolVersion !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(protocolVersion) || protocolVersion < SEP_2577_VERSION) return [];
  const caps = isObject(capabilities) ? capabilities : {};
  const features: DeprecatedFeature[] = ['sampling', 'roots', 'logging'];
  return features.filter((feature) => isObject(caps[feature])).map((feature) => ({ feature, message: SEP_2577[feature] }));
}

// ---------------------------------------------------------------------------------------------------------------------
// companion

export type HubRole = 'hub' | 'relay' | 'none';

/** The hub's own answer to `info` (shared/approval-calls.ts). */
export interface HubInfoView {
  extensionsConnected: number;
  lastSeenAt: number | null;
  pending: number;
}

export interface CompanionReport {
  hub: { role: HubRole; port: number };
  /** null while this process has not joined the hub (role "none") or the hub could not be asked. */
  reviewers: { extensionsConnected: number; lastSeenAt: string | null } | null;
  pending: number | null;
  stateDir: string;
  /** Why reviewers and pending are null. */
  note?: string;
}

export const COMPANION_NOT_JOINED =
  'This process has made no approval call yet, so it has not joined the hub and cannot tell how many extensions are ' +
  'connected; call elicit_doctor with checkCompanion: true to join (or start) the hub and ask it.';

/** `info` is the hub's answer, an error message when asking failed, or null when the hub was not asked (role "none"). */
export function companionReport(input: { role: HubRole; port: number; stateDir: string; info: HubInfoView | { error: string } | null }): CompanionReport {
  const hub = { role: input.role, port: input.port };
  const { info, stateDir } = input;
  if (info === null) return { hub, reviewers: null, pending: null, stateDir, note: COMPANION_NOT_JOINED };
  if ('error' in info) return { hub, reviewers: null, pending: null, stateDir, note: `The hub could not be asked: ${info.error}` };
  return {
    hub,
    reviewers: {
      extensionsConnected: info.extensionsConnected,
      lastSeenAt: info.lastSeenAt === null ? null : new Date(info.lastSeenAt).toISOString(),
    },
    pending: info.pending,
    stateDir,
  };
}

// ---------------------------------------------------------------------------------------------------------------------
// routing

/** The asks whose `auto` route the doctor reports. */
export const ROUTED_TOOLS = ['elicit_confirm', 'elicit_form', 'elicit_selection'] as const;
export type RoutedTool = (typeof ROUTED_TOOLS)[number];

export interface RouteReport {
  /** `app`: shown in the chat (MCP App) only; `app+extension`: in the chat and filed for the extension too. */
  via: 'host' | 'extension' | 'app' | 'app+extension' | 'none';
  why: string;
  /** The row of the table of known hosts that sent the ask to the extension. */
  knownHost?: { id: string; evidence: string };
}

const HOW_TO_CONNECT =
  'ask the person to open the Elicitly extension in their browser (it connects to the hub by itself; the first time it ' +
  'needs the pairing code from `npx elicitly-companion pair`)';

const NOT_JOINED = 'whether an extension is connected is not known until this process joins the hub (checkCompanion: true asks)';

/**
 * Where an `auto` ask goes now, in one sentence. `route` is the session's own routing decision (ask-routing's
 * autoRoute); `reviewers` is what the hub said, or null when it was not asked; `app` is whether the client renders
 * MCP Apps, where a request routed away from the host's dialog is also shown in the chat. An ask routed to the
 * extension with no extension connected and no chat to show it reaches nobody: that is "none", with how to connect one.
 */
export function routeReport(
  route: { via: 'host' | 'extension'; why: string; knownHost?: { id: string; evidence: string } },
  support: Pick<Support, 'elicitation' | 'elicitationForm'>,
  reviewers: CompanionReport['reviewers'],
  app = false,
): RouteReport {
  const known = route.knownHost ? { knownHost: route.knownHost } : {};
  if (route.via === 'host') return { via: 'host', why: `An auto call shows the host's own dialog: ${route.why}.` };
  // A URL-only host has elicitation, just not the form mode a question needs: say which, it is the surprising case.
  const why = support.elicitation && !support.elicitationForm ? 'the host advertises only URL-mode elicitation, whose dialog cannot show a question' : route.why;
  const connected = reviewers === null || reviewers.extensionsConnected === 0 ? '' : reviewers.extensionsConnected === 1 ? 'one is connected' : `${reviewers.extensionsConnected} are connected`;
  if (app) {
    const inChat = 'An auto call is shown in the chat, in the Elicitly review under its result';
    if (reviewers === null) return { via: 'app+extension', why: `${inChat}, and goes to the Elicitly extension too (${why}); ${NOT_JOINED}.`, ...known };
    if (connected === '') return { via: 'app', why: `${inChat} (${why}); no Elicitly extension is connected to show it there too.`, ...known };
    return { via: 'app+extension', why: `${inChat} and in the Elicitly extension, where ${connected}, because ${why}.`, ...known };
  }
  if (reviewers === null) return { via: 'extension', why: `An auto call goes to the Elicitly extension (${why}); ${NOT_JOINED}.`, ...known };
  if (connected === '') return { via: 'none', why: `An auto call would go to the Elicitly extension (${why}), but none is connected: ${HOW_TO_CONNECT}.`, ...known };
  return { via: 'extension', why: `An auto call goes to the Elicitly extension, where ${connected}, because ${why}.`, ...known };
}

// ---------------------------------------------------------------------------------------------------------------------
// share

/** Seed 001's volunteered metadata, bounded. */
export const SHARE_LIMITS = { productName: 100, productVersion: 50, notes: 2000 } as const;

/**
 * The report as it is written for sharing: the seed promises no elicitation payloads, so each probe's `data` (what
 * the person picked) is left out; the rest is the handshake echo, booleans, verdicts and the companion's counts.
 */
export function shareableReport(report: Record<string, unknown>): Record<string, unknown> {
  const probes = report.probes;
  if (!isObject(probes)) return { ...report };
  const stripped = Object.fromEntries(
    Object.entries(probes).map(([name, probe]) => {
      if (!isObject(probe)) return [name, probe];
      const { data: _data, ...rest } = probe;
      return [name, rest];
    }),
  );
  return { ...report, probes: stripped };
}

export interface SharedReportFile {
  kind: 'elicitly-doctor-report';
  version: 1;
  writtenAt: string;
  product: { name: string | null; version: string | null };
  notes: string | null;
  report: Record<string, unknown>;
}

export function sharedReportFile(
  report: Record<string, unknown>,
  meta: { productName?: string; productVersion?: string; notes?: string },
  now: number,
): SharedReportFile {
  return {
    kind: 'elicitly-doctor-report',
    version: 1,
    writtenAt: new Date(now).toISOString(),
    product: { name: meta.productName ?? null, version: meta.productVersion ?? null },
    notes: meta.notes ?? null,
    report: shareableReport(report),
  };
}

/** A file name that sorts by time and never collides (the random part comes from the caller). */
export function reportFileName(now: number, random: string): string {
  return `doctor-${new Date(now).toISOString().replace(/[:.]/g, '-')}-${random}.json`;
}

/** Where a person files a host report: the project's public issue tracker. Nothing is sent there by the server. */
export const REPORT_ISSUES_URL = 'https://github.com/elicitly/elicitly-companion/issues/new';

function at(value: unknown, ...path: string[]): unknown {
  let here = value;
  for (const key of path) here = isObject(here) && Object.hasOwn(here, key) ? here[key] : undefined;
  return here;
}

function shown(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : 'not known';
}

/**
 * The shared report as a ready-to-file issue in Markdown: a title, the facts a reader of the support matrix looks for
 * first, then the written file itself (the same JSON, without payloads). The person files it; nothing leaves this
 * computer on its own.
 */
export function shareText(file: SharedReportFile): string {
  const { report } = file;
  const product = [file.product.name ?? 'an unnamed host', file.product.version].filter((part) => part !== null).join(' ');
  const probe = at(report, 'probes', 'elicitationForm');
  const probeLine =
    at(probe, 'attempted') === true
      ? `${shown(at(probe, 'verdict'))} (action ${shown(at(probe, 'action'))}, ${shown(at(probe, 'latencyMs'))} ms)`
      : at(probe, 'attempted') === false
        ? `not run: ${shown(at(probe, 'reason'))}`
        : 'not run';
  const knownHost = at(report, 'routing', 'elicit_confirm', 'knownHost', 'id');
  const json = JSON.stringify(file, null, 2);
  // The host chose some of these strings: a fence longer than any run of backticks in them cannot be closed early.
  const fence = '`'.repeat(Math.max(3, ...[...json.matchAll(/`+/g)].map((run) => run[0].length + 1)));
  const lines = [
    `## Elicitly host report: ${product}`,
    '',
    `- MCP client: ${shown(at(report, 'initialize', 'request', 'clientInfo', 'name'))} ${shown(at(report, 'initialize', 'request', 'clientInfo', 'version'))} (era ${shown(at(report, 'era'))}, protocol ${shown(at(report, 'initialize', 'response', 'protocolVersion'))})`,
    `- Advertised: form elicitation ${shown(at(report, 'support', 'elicitationForm'))}, URL elicitation ${shown(at(report, 'support', 'elicitationUrl'))}, MCP Apps ${shown(at(report, 'support', 'extensions', 'apps'))}`,
    `- Probe of the form dialog: ${probeLine}`,
    `- An auto ask goes to: ${shown(at(report, 'routing', 'elicit_confirm', 'via'))}${typeof knownHost === 'string' ? ` (known host ${knownHost})` : ''}`,
    `- Notes: ${file.notes ?? 'none'}`,
    '',
    'The report below holds the handshake echo, capability booleans, probe verdicts and counts: no answers, no conversation.',
    '',
    `${fence}json`,
    json,
    fence,
    '',
  ];
  return lines.join('\n');
}
