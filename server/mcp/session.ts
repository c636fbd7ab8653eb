import type { RequestStateCodec, ServerContext } from '@modelcontextprotocol/server';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import type { ApprovalService } from '../../shared/peer-calls.js';
import type { AppKeys } from './app/app-keys.js';
import type { InitializeCapture } from './stdio-tap-transport.js';

type Era = '2025' | '2026-07-28';

/** What every tool of one connection shares: its era, the raw handshake, the sealed multi-round-trip state. */
export interface Session {
  era: Era;
  handshake: () => InitializeCapture | undefined;
  negotiatedVersion: () => string | undefined;
  serverCapabilities: () => Record<string, unknown>;
  stateCodec: RequestStateCodec<RoundState>;
  probeTimeoutMs: number;
  /** A host's "no" faster than this is automatic, not a person's (`ELICITLY_AUTOMATIC_NO_MS`, default 250). */
  automaticNoMs: number;
  approvals: ApprovalService;
  /** Lower clamp of approval timeouts: 60 s, lowered only by ELICITLY_MIN_TIMEOUT_SECONDS (tests, demos). */
  minTimeoutSeconds: number;
  /** How long ended requests are kept, for the hints that say so. */
  retentionDays: number;
  /** What the doctor reports of the companion side: this process's part, the hub's port, the state dir. */
  companion: Companion;
  /** Why the host's dialog is known not to reach the person in this session (null while nothing showed it): `auto` asks then go to the extension. */
  dialog: { broken: string | null };
  /** Set when the client renders MCP Apps: the review inside the chat and the keys it decides with. Null otherwise. */
  app: { keys: AppKeys; html: () => Promise<string> } | null;
}

export interface Companion {
  port: number;
  stateDir: string;
  /** 'none' until this process made its first approval call (asking would elect a hub, which a report must not do). */
  role(): 'hub' | 'relay' | 'none';
}

/** Sealed into `requestState` between the rounds of a 2026-07-28 call. */
export interface RoundState {
  tool: string;
  startedAt: number;
  timeoutMs: number;
}

interface HostView {
  protocolVersion: unknown;
  clientInfo: unknown;
  capabilities: unknown;
}

/** The host's own name (`clientInfo.name`, clipped), for the reviewer to see who asks; null when it gave none. */
export function hostName(ctx: ServerContext, session: Session): string | null {
  const info = hostView(ctx, session).clientInfo;
  if (typeof info !== 'object' || info === null) return null;
  const name = (info as Record<string, unknown>).name;
  return typeof name === 'string' ? name.slice(0, 100) : null;
}

/** The host as it described itself: the initialize params (2025) or this request's envelope (2026-07-28). */
export function hostView(ctx: ServerContext, session: Session): HostView {
  if (session.era === '2026-07-28') {
    const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
    return {
      protocolVersion: envelope[PROTOCOL_VERSION_META_KEY],
      clientInfo: envelope[CLIENT_INFO_META_KEY],
      capabilities: envelope[CLIENT_CAPABILITIES_META_KEY],
    };
  }
  const init = session.handshake();
  return { protocolVersion: init?.protocolVersion, clientInfo: init?.clientInfo, capabilities: init?.capabilities };
}
