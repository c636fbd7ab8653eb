import { browser } from '../../extension/browser.js';

export const SAFETY_ALARM = 'elicitly-safety-net';

/**
 * Every 30 s, in case the worker was stopped with its socket: the alarm wakes it. Created only when missing, because
 * re-creating an alarm on every wake-up would push its first firing back forever.
 */
export async function ensureSafetyAlarm(): Promise<void> {
  if (await browser.alarms.get(SAFETY_ALARM)) return;
  await browser.alarms.create(SAFETY_ALARM, { periodInMinutes: 0.5 });
}

export function onSafetyAlarm(run: () => void): void {
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === SAFETY_ALARM) run();
  });
}
