import { useStore } from '../kit/ui/store.js';
import type { PushControl, PushState } from './push-control.js';

function describe(state: PushState): string {
  switch (state.state) {
    case 'unsupported':
      return state.why;
    case 'checking':
      return 'Checking…';
    case 'working':
      return 'Working…';
    case 'on':
      return 'On: a new request shows on this phone\'s lock screen, encrypted to this phone. Short ones have Approve and Deny.';
    case 'blocked':
      return 'Blocked in this browser\'s settings for this site. Allow notifications there, then come back.';
    case 'off':
      return `Off: turn them on to see each new request on this phone's lock screen, with Approve and Deny on short ones.${state.error ? ` ${state.error}` : ''}`;
  }
}

/** "Notifications on this phone": what they are now, and the one button that changes it. */
export function PushSettings({ push, connected }: { push: PushControl; connected: boolean }) {
  const state = useStore(push.state);
  const canAct = connected && (state.state === 'on' || state.state === 'off');
  return (
    <section class="push-settings" aria-labelledby="push-heading">
      <h2 id="push-heading">Notifications on this phone</h2>
      <p role="status" data-push={state.state}>{describe(state)}</p>
      {(state.state === 'on' || state.state === 'off') && (
        <button type="button" class={state.state === 'off' ? 'primary' : undefined} disabled={!canAct} onClick={() => void (state.state === 'on' ? push.turnOff() : push.turnOn())}>
          {state.state === 'on' ? 'Turn off' : 'Turn on'}
        </button>
      )}
    </section>
  );
}
