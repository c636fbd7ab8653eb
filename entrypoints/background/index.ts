import { defineBackground } from 'wxt/utils/define-background';

export default defineBackground(() => {
  // The hub connection and the request store are built in the extension issue.
});
