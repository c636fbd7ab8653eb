/**
 * Puts the view's own Content-Security-Policy in force, in <head>, before any other module runs (main.tsx imports this
 * first). index.html carries the policy's text in `<meta name="elicitly-csp">` rather than as an http-equiv pragma:
 * a host that wraps the HTML in a document of its own moves the view's <head> into its <body>, where a pragma is
 * ignored with a console error; an http-equiv <meta> inserted into <head> is enforced from that moment. The view loads
 * nothing and its one script is this bundle, so a policy from the first statement on guards what a policy from the
 * parse would. A host that stripped the element left no policy to restore; the host's own CSP still applies.
 */
export function putOwnCspInForce(doc: Document = document): void {
  const own = doc.querySelector('meta[name="elicitly-csp"]');
  if (!(own instanceof HTMLMetaElement) || !own.content) return;
  const pragma = doc.createElement('meta');
  pragma.httpEquiv = 'Content-Security-Policy';
  pragma.content = own.content;
  doc.head.prepend(pragma);
}

putOwnCspInForce();
