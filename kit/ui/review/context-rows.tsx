import { VisibleText } from '../visible-text.js';
import { ContextJson } from './context-json.js';

/**
 * An approval's context as a person reads it: one label and value per key, in the agent's order (a string as itself,
 * anything else as its JSON in code type, so "812" and 812 never look alike), and the exact JSON one tap away. A
 * context that is not an object (a list, a string) is its JSON alone. Named "Context" either way.
 */
export function ContextRows({ context, json }: { context: unknown; json: string }) {
  if (!context || typeof context !== 'object' || Array.isArray(context) || Object.keys(context).length === 0) return <ContextJson text={json} />;
  return (
    <section class="context-rows" role="region" aria-label="Context">
      <dl>
        {Object.entries(context).map(([key, value]) => [
          <dt key={`k${key}`}><VisibleText text={key} /></dt>,
          // Parsed from JSON, so it stringifies.
          <dd key={`v${key}`}>{typeof value === 'string' ? <VisibleText text={value} /> : <code><VisibleText text={JSON.stringify(value, null, 2)} /></code>}</dd>,
        ])}
      </dl>
      <details>
        <summary>Raw JSON</summary>
        <pre class="context-json" aria-label="Context as JSON" tabIndex={0}><VisibleText text={json} /></pre>
      </details>
    </section>
  );
}
