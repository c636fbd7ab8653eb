import { h, type ComponentChild } from 'preact';
import { useMemo } from 'preact/hooks';
import { elementPolicy } from '../../core/safe-html.js';
import { visibleChildren } from '../visible-text.js';

// A template deep or large enough to hit these is either broken or hostile; what fits is still shown.
const MAX_DEPTH = 32;
const MAX_NODES = 5000;

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

interface Budget { nodes: number }

function convert(nodes: NodeListOf<ChildNode>, depth: number, budget: Budget): ComponentChild[] {
  const out: ComponentChild[] = [];
  if (depth > MAX_DEPTH) return out;
  for (const node of Array.from(nodes)) {
    if (budget.nodes >= MAX_NODES) break;
    budget.nodes += 1;
    if (node.nodeType === TEXT_NODE) {
      // A string child is a text node to Preact: the browser never parses it as markup. Characters that would not show
      // (a bidi override, a zero-width space) become visible tokens.
      out.push(...visibleChildren(node.textContent ?? ''));
      continue;
    }
    // Comments, processing instructions and the like carry nothing a reviewer needs.
    if (node.nodeType !== ELEMENT_NODE) continue;
    const tag = (node as Element).localName;
    const policy = elementPolicy(tag);
    if (policy === 'drop') continue;
    const children = convert(node.childNodes, depth + 1, budget);
    // Attributes are never copied: no href, src, style or on* handler survives.
    if (policy === 'keep') out.push(h(tag, null, ...children));
    else out.push(...children);
  }
  return out;
}

/** Builds the kept elements from scratch, so nothing of the source markup reaches the DOM but text and bare tags. */
function sanitizeHtml(html: string): ComponentChild[] {
  // DOMParser documents are inert: scripts do not run and images do not load while we walk it.
  const doc = new DOMParser().parseFromString(html, 'text/html');
  return convert(doc.body.childNodes, 0, { nodes: 0 });
}

export function SafeHtml({ html }: { html: string }) {
  const children = useMemo(() => sanitizeHtml(html), [html]);
  return <div class="template">{children}</div>;
}
