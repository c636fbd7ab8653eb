/**
 * The Chrome extension's id is derived from the public key committed in wxt.config.ts (manifest `key`), so it is the
 * same on every machine; the hub trusts exactly this origin without pairing.
 */
export const EXTENSION_ID = 'peagncebbkgcelmlcmjmnpgpgiehcphe';
export const EXTENSION_ORIGIN = `chrome-extension://${EXTENSION_ID}`;
export const EXTENSION_PUBLIC_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEApYvNLa0hDw+0rRCkwYTSrl4vX3Tf9bwLF1KfqQJAgudOaTAGFYl/YOQ00dt/Gof5GXBHYpcD494+diD/QfOO5cOdK0TyMURQAzPpIon3QQn6cUdedrsNrt/aNej/KfjqFp4n0k871U6B+f7enDLTOfLIDfcZ9EE4AAQFCGbSnB+TX9AakDOd7BRsUypbQEHt3XYUGWCO8blfdIpG2w2mku5IPMyqSoSleu5XhBTsyyITstD/oL6mJctom8Wb4fZ2IH8mWNg2K8BdfQFUYuC3AVuhBjL0Kzd0lyesO2CddAUx04i37t3QWZntzTnyoclfQ2fnmp5WtMD65RkafwReZwIDAQAB';
export const DEFAULT_HUB_PORT = 17391;
/** The Firefox build's id (`browser_specific_settings.gecko.id`): its WebAuthn origin is derived from it. */
export const FIREFOX_EXTENSION_ID = 'companion@elicitly.dev';
