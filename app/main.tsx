// First of all: the view's own CSP, in force even when a host wraps the HTML (own-csp.ts).
import './own-csp.js';
// Before anything parses: the page's CSP has no 'unsafe-eval', and zod would probe `new Function` on first use.
import '../kit/zod-config.js';
import { render } from 'preact';
import { HostConnection } from './host-connection.js';
import { applyHostContext } from './host-context.js';
import type { HostContext } from './host-messages.js';
import { ReviewApp, type Incoming, type ToolInput } from './review-app.js';
import { Store } from '../kit/ui/store.js';
import '../kit/ui/styles.css';
import './app.css';

const incoming = new Store<Incoming>({ state: 'waiting' });
const input = new Store<ToolInput>(undefined);
const context = new Store<HostContext | undefined>(undefined);

function hostContextChanged(): void {
  // The connection merges the host's partial updates into getHostContext() before it tells us.
  const ctx = app.getHostContext();
  applyHostContext(ctx);
  context.set(ctx ? { ...ctx } : undefined);
}

// Listeners before connect(): the tool input and result are sent once, right after the handshake.
const app = new HostConnection({ name: 'elicitly-review', version: __ELICITLY_VERSION__ }, { availableDisplayModes: ['inline', 'fullscreen'] }, {
  toolInput: (args) => input.set(args),
  toolResult: (result) => incoming.set({ state: 'result', result }),
  toolCancelled: (reason) => incoming.set({ state: 'cancelled', reason }),
  hostContextChanged,
});

const root = document.getElementById('app');
if (root) render(<ReviewApp app={app} incoming={incoming} input={input} context={context} />, root);

app.connect().then(hostContextChanged, (err: unknown) => {
  incoming.set({ state: 'failed', message: `This review is shown by a chat that renders MCP Apps; none answered (${err instanceof Error ? err.message : String(err)}).` });
});
