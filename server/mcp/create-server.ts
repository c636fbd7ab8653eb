import { randomBytes } from 'node:crypto';
import type { McpRequestContext } from '@modelcontextprotocol/server';
import { McpServer, createRequestStateCodec } from '@modelcontextprotocol/server';
import { SERVER_INFO } from '../package-info.js';
import type { ApprovalService } from '../../shared/approval-calls.js';
import type { Companion, RoundState, Session } from './session.js';
import type { InitializeCapture } from './stdio-tap-transport.js';
import { TOOLS } from './tools/registry.js';

interface ServerDeps {
  handshake: () => InitializeCapture | undefined;
  approvals: ApprovalService;
  minTimeoutSeconds: number;
  retentionDays: number;
  probeTimeoutMs: number;
  companion: Companion;
}

/** Longest form timeout (3600 s) plus slack: a sealed round must outlive the wait it measures. */
const ROUND_STATE_TTL_SECONDS = 3660;

/** One process serves one stdio connection, so a per-process key verifies every round it minted. */
const stateCodec = createRequestStateCodec<RoundState>({ key: randomBytes(32), ttlSeconds: ROUND_STATE_TTL_SECONDS });

export function createServer(factory: Pick<McpRequestContext, 'era'>, deps: ServerDeps): McpServer {
  const server: McpServer = new McpServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    requestState: { verify: stateCodec.verify },
  });
  const session: Session = {
    era: factory.era === 'modern' ? '2026-07-28' : '2025',
    handshake: deps.handshake,
    negotiatedVersion: () => server.server.getNegotiatedProtocolVersion(),
    serverCapabilities: () => server.server.getCapabilities() as Record<string, unknown>,
    stateCodec,
    probeTimeoutMs: deps.probeTimeoutMs,
    approvals: deps.approvals,
    minTimeoutSeconds: deps.minTimeoutSeconds,
    retentionDays: deps.retentionDays,
    companion: deps.companion,
    dialog: { broken: null },
  };
  for (const tool of TOOLS) tool.register(server, session);
  return server;
}
