import type { McpServer } from '@modelcontextprotocol/server';
import { APP_MIME_TYPE, REVIEW_APP_URI } from '../../../shared/app-capability.js';

/**
 * The one review resource every app-enabled tool points at: a self-contained HTML file (inlined script and styles) that
 * loads nothing from anywhere, so its declared CSP allows no outside domain.
 */
export function registerReviewResource(server: McpServer, html: () => Promise<string>): void {
  server.registerResource(
    'Elicitly review',
    REVIEW_APP_URI,
    { mimeType: APP_MIME_TYPE, description: 'Review and decide an Elicitly request (approval, proposal diff grid, question) inside the chat.' },
    async () => ({
      contents: [{
        uri: REVIEW_APP_URI,
        mimeType: APP_MIME_TYPE,
        text: await html(),
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true } },
      }],
    }),
  );
}
