import type { Browser } from '@wxt-dev/browser/src/gen/index.js';
import { browser as wxtBrowser } from 'wxt/browser';

/**
 * The extension APIs, typed. `wxt/browser` is untyped under this project's NodeNext resolution: @wxt-dev/browser's
 * declarations import './gen' without an extension, which NodeNext does not resolve, so its `browser` is `any`. The same
 * object is typed here with those declarations, imported by their full path. Only the entrypoints use it (WXT's model:
 * the modules in extension/ are handed what they need); in tests WXT's fake browser stands behind it.
 */
export const browser = wxtBrowser as typeof Browser;
