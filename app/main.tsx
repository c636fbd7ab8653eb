// First of all: the view's own CSP, in force even when a host wraps the HTML (own-csp.ts).
import './own-csp.js';
// Before anything parses: the page's CSP has no 'unsafe-eval', and zod would probe `new Function` on first use.
import '../extension/zod-config.js';
import { App, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import { render } from 'preact';
import { applyHostContext } from './host-context.js';
import { ReviewApp, type Incoming, type ToolInput } from './review-app.js';
import { Store } from './store.js';
import '../extension/ui/styles.css';
import './app.css';

const app = new App({ name: 'elicitly-review', version: __ELICITLY_VERSION__ }, { availableDisplayModes: ['inline', 'fullscreen'] });
const incoming = new Store<Incoming>({ state: 'waiting' });
const input = new Store<ToolInput>(undefined);
const context = new Store<McpUiHostContext | undefined>(undefined);

function hostContextChanged(): void {
  // The SDK merges the host's partial updates into getHostContext() before it tells us.
  const ctx = app.getHostContext();
  applyHostContext(ctx);
  context.set(ctx ? { ...ctx } : undefined);
}

// Listeners before connect(): the tool input and result are sent once, right after the handshake.
app.addEventListener('toolinput', (params) => input.set(params.arguments));
app.addEventListener('toolresult', (result) => incoming.set({ state: 'result', result }));
app.addEventListener('toolcancelled', ({ reason }) => incoming.set({ state: 'cancelled', reason }));
app.addEventListener('hostcontextchanged', hostContextChanged);

const root = document.getElementById('app');
if (root) render(<ReviewApp app={app} incoming={incoming} input={input} context={context} />, root);

app.connect().then(hostContextChanged, (err: unknown) => {
  incoming.set({ state: 'failed', message: `This review is shown by a chat that renders MCP Apps; none answered (${err instanceof Error ? err.message : String(err)}).` });
});
