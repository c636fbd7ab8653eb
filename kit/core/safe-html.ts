// What survives of a rendered displayTemplate. LiquidJS output is built from agent-supplied text, so it is
// untrusted HTML: only inert formatting elements are rebuilt, never an attribute (no href, src, style, on*).
type ElementPolicy = 'keep' | 'unwrap' | 'drop';

const KEEP = new Set([
  'b', 'strong', 'i', 'em', 'u', 's', 'del', 'ins', 'mark', 'small', 'sub', 'sup', 'code', 'pre', 'kbd',
  'p', 'br', 'hr', 'ul', 'ol', 'li', 'blockquote', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'table', 'thead', 'tbody', 'tr', 'th', 'td', 'caption', 'dl', 'dt', 'dd',
]);

// Their content is code, a resource, or form controls: shown as text it would be noise at best, bait at worst.
const DROP = new Set([
  'script', 'style', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet',
  'form', 'input', 'button', 'select', 'textarea', 'option', 'noscript',
  'img', 'picture', 'video', 'audio', 'source', 'track', 'svg', 'math', 'canvas',
  'link', 'meta', 'base', 'title', 'head',
]);

/** keep: rebuilt without attributes; drop: the element and everything in it vanish; unwrap: only its children stay. */
export function elementPolicy(tagName: string): ElementPolicy {
  const tag = tagName.toLowerCase();
  if (KEEP.has(tag)) return 'keep';
  if (DROP.has(tag)) return 'drop';
  return 'unwrap';
}
