import { describe, expect, it } from 'vitest';
import { elementPolicy } from '../../kit/core/safe-html.js';

describe('elementPolicy', () => {
  const keep = ['b', 'strong', 'i', 'em', 'u', 's', 'del', 'ins', 'mark', 'small', 'sub', 'sup', 'code', 'pre', 'kbd', 'p', 'br', 'hr',
    'ul', 'ol', 'li', 'blockquote', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'caption', 'dl', 'dt', 'dd'];
  const drop = ['script', 'style', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'form', 'input', 'button',
    'select', 'textarea', 'option', 'noscript', 'img', 'picture', 'video', 'audio', 'source', 'track', 'svg', 'math', 'canvas',
    'link', 'meta', 'base', 'title', 'head'];
  const unwrap = ['div', 'span', 'a', 'section', 'font', 'body', 'html', 'x-custom', 'blink', ''];

  it.each(keep)('keeps formatting element <%s>', (tag) => expect(elementPolicy(tag)).toBe('keep'));
  it.each(drop)('drops <%s> with its content', (tag) => expect(elementPolicy(tag)).toBe('drop'));
  it.each(unwrap)('unwraps <%s> to its children', (tag) => expect(elementPolicy(tag)).toBe('unwrap'));

  it('ignores case, as DOM tagName is upper case for HTML', () => {
    expect(elementPolicy('SCRIPT')).toBe('drop');
    expect(elementPolicy('B')).toBe('keep');
    expect(elementPolicy('Div')).toBe('unwrap');
  });
});
