import { DeviceNameSchema } from '../shared/wire-protocol.js';

/**
 * What to call this phone in `pair --list` until the person types another name: the platform and the browser, read
 * from the user agent ("Android phone (Chrome)", "iPhone (Safari)"). Only a suggestion in a field they can edit.
 */
export function suggestedDeviceName(userAgent: string): string {
  const platform = /iPhone/.test(userAgent) ? 'iPhone'
    : /iPad/.test(userAgent) ? 'iPad'
      : /Android/.test(userAgent) ? (/Mobile/.test(userAgent) ? 'Android phone' : 'Android tablet')
        : /Macintosh|Mac OS X/.test(userAgent) ? 'Mac'
          : /Windows/.test(userAgent) ? 'Windows PC'
            : /Linux|X11/.test(userAgent) ? 'Linux computer' : 'Phone';
  const browser = /EdgA?\//.test(userAgent) ? 'Edge'
    : /Firefox\/|FxiOS\//.test(userAgent) ? 'Firefox'
      : /Chrome\/|CriOS\//.test(userAgent) ? 'Chrome'
        : /Safari\//.test(userAgent) ? 'Safari' : null;
  return browser ? `${platform} (${browser})` : platform;
}

/** The name the person typed, as the hub will take it; null (with why) when it will not. */
export function checkDeviceName(typed: string): { ok: true; name: string } | { ok: false; message: string } {
  const parsed = DeviceNameSchema.safeParse(typed);
  if (parsed.success) return { ok: true, name: parsed.data };
  return { ok: false, message: typed.trim() === '' ? 'Give this device a name.' : 'Use at most 60 characters, without control characters.' };
}
