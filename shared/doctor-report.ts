/**
 * The doctor's report beyond the seed's layers (issue 11): the companion side, where an `auto` ask would go, the
 * client's declared extensions, deprecated client features, and the report as it may be shared. Pure, so every rule
 * is table-tested apart from any host or hub.
 */
import type { Support } from './doctor-verdict.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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
  via: 'host' | 'extension' | 'none';
  why: string;
}

const HOW_TO_CONNECT =
  'ask the person to open the Elicitly extension in their browser (it connects to the hub by itself; the first time it ' +
  'needs the pairing code from `npx elicitly-companion pair`)';

/**
 * Where an `auto` ask goes now, in one sentence. `route` is the session's own routing decision (ask-routing's
 * autoRoute); `reviewers` is what the hub said, or null when it was not asked. An ask routed to the extension with
 * no extension connected reaches nobody: that is "none", with how to connect one.
 */
export function routeReport(route: { via: 'host' | 'extension'; why: string }, support: Pick<Support, 'elicitation' | 'elicitationForm'>, reviewers: CompanionReport['reviewers']): RouteReport {
  if (route.via === 'host') return { via: 'host', why: `An auto call shows the host's own dialog: ${route.why}.` };
  // A URL-only host has elicitation, just not the form mode a question needs: say which, it is the surprising case.
  const why = support.elicitation && !support.elicitationForm ? 'the host advertises only URL-mode elicitation, whose dialog cannot show a question' : route.why;
  if (reviewers === null) {
    return {
      via: 'extension',
      why: `An auto call goes to the Elicitly extension (${why}); whether an extension is connected is not known until this process joins the hub (checkCompanion: true asks).`,
    };
  }
  if (reviewers.extensionsConnected === 0) {
    return { via: 'none', why: `An auto call would go to the Elicitly extension (${why}), but none is connected: ${HOW_TO_CONNECT}.` };
  }
  const connected = reviewers.extensionsConnected === 1 ? 'one is connected' : `${reviewers.extensionsConnected} are connected`;
  return { via: 'extension', why: `An auto call goes to the Elicitly extension, where ${connected}, because ${why}.` };
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
