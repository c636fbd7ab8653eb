import { randomBytes } from 'node:crypto';
import type { McpRequestContext } from '@modelcontextprotocol/server';
import { McpServer, createRequestStateCodec } from '@modelcontextprotocol/server';
import { SERVER_INFO } from '../package-info.js';
import type { ApprovalService } from '../../shared/peer-calls.js';
import type { Companion, RoundState, Session } from './session.js';
import type { InitializeCapture } from './stdio-tap-transport.js';
import { declaresAppUi } from '../../shared/app-capability.js';
import { AppKeys } from './app/app-keys.js';
import { FormAnswerValidator } from './form-answer-validator.js';
import { registerReviewResource } from './app/review-resource.js';
import { registerContributeFingerprint } from './prompts/contribute-fingerprint.js';
import { registerTools } from './tools/registry.js';

interface ServerDeps {
  handshake: () => InitializeCapture | undefined;
  /** What the client declared, once its first message arrived (both eras): decides whether the app is declared. */
  clientCapabilities: () => unknown;
  /** The review app's single HTML file, read when a host asks for it. */
  appHtml: () => Promise<string>;
  /** Whether this process may offer the review inside the chat at all (not with an exported relay key: it cannot decide). */
  appSurface: boolean;
  approvals: ApprovalService;
  minTimeoutSeconds: number;
  retentionDays: number;
  probeTimeoutMs: number;
  automaticNoMs: number;
  companion: Companion;
}

/** Longest form timeout (3600 s) plus slack: a sealed round must outlive the wait it measures. */
const ROUND_STATE_TTL_SECONDS = 3660;

/** One process serves one stdio connection, so a per-process key verifies every round it minted. */
const stateCodec = createRequestStateCodec<RoundState>({ key: randomBytes(32), ttlSeconds: ROUND_STATE_TTL_SECONDS });

export function createServer(factory: Pick<McpRequestContext, 'era'>, deps: ServerDeps): McpServer {
  const apps = deps.appSurface && declaresAppUi(deps.clientCapabilities());
  const server: McpServer = new McpServer(SERVER_INFO, {
    // Registering the review resource adds `resources`; none of the lists changes during a connection, so it says so.
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, ...(apps ? { resources: { listChanged: false } } : {}) },
    requestState: { verify: stateCodec.verify },
    jsonSchemaValidator: new FormAnswerValidator(),
  });
  const session: Session = {
    era: factory.era === 'modern' ? '2026-07-28' : '2025',
    handshake: deps.handshake,
    negotiatedVersion: () => server.server.getNegotiatedProtocolVersion(),
    serverCapabilities: () => server.server.getCapabilities() as Record<string, unknown>,
    stateCodec,
    probeTimeoutMs: deps.probeTimeoutMs,
    automaticNoMs: deps.automaticNoMs,
    approvals: deps.approvals,
    minTimeoutSeconds: deps.minTimeoutSeconds,
    retentionDays: deps.retentionDays,
    companion: deps.companion,
    dialog: { broken: null },
    app: apps ? { keys: new AppKeys(), html: deps.appHtml } : null,
  };
  // A host that renders no apps sees exactly the tools and capabilities it always did: no app-only tools, no resource.
  registerTools(server, session);
  if (session.app) registerReviewResource(server, session.app.html);
  registerContributeFingerprint(server);
  return server;
}
