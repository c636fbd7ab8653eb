// The banner end to end: the server renders the template (escaping context), the extension sanitizes and shows it.
import { render } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../server/approvals/render-template.js';
import { SafeHtml } from '../../kit/ui/review/safe-html.js';

async function banner(template: string, context: unknown): Promise<Element> {
  const rendered = await renderTemplate(template, context);
  if (!rendered.ok) throw new Error(rendered.error);
  return render(<SafeHtml html={rendered.html} />).container;
}

describe('the displayTemplate banner shows agent text literally and keeps the template’s formatting', () => {
  it('an address in angle brackets stays visible', async () => {
    const shown = await banner('<b>To:</b> {{ context.name }}', { name: 'John <john@x.com>' });
    expect(shown.textContent).toBe('To: John <john@x.com>');
    expect(shown.querySelector('b')?.textContent).toBe('To:');
  });

  it('a script in context is text, never an element', async () => {
    const shown = await banner('<p>{{ context.note }}</p>', { note: '<script>alert(1)</script><img src=x onerror=alert(1)>' });
    expect(shown.textContent).toBe('<script>alert(1)</script><img src=x onerror=alert(1)>');
    expect(shown.querySelector('script, img')).toBeNull();
  });
});
