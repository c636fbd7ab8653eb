import { browser } from '../../extension/browser.js';
import { mountApp } from '../../extension/ui/mount-app.js';

mountApp('tab', {
  sendMessage: (message) => browser.runtime.sendMessage(message),
  openTab: (path) => browser.tabs.create({ url: browser.runtime.getURL(path) }),
  grantOrigins: (origins) => browser.permissions.request({ origins }),
});
