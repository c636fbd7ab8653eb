import { useNow } from './use-now.js';

/** When the connection tries the hub again, counted down: the same words in the extension's header and the phone's. */
export function RetryCountdown({ retryAt }: { retryAt: number }) {
  const now = useNow();
  const seconds = Math.max(0, Math.ceil((retryAt - now) / 1000));
  return <span class="retry">{seconds > 0 ? ` Next try in ${seconds} s.` : ' Trying now…'}</span>;
}
