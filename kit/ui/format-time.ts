const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** How long ago a request arrived, coarse on purpose: the inbox re-renders every second. */
export function age(createdAt: number, now: number): string {
  const elapsed = now - createdAt;
  if (elapsed < MINUTE) return 'just now';
  if (elapsed < HOUR) return `${Math.floor(elapsed / MINUTE)} min ago`;
  if (elapsed < DAY) return `${Math.floor(elapsed / HOUR)} h ago`;
  return `${Math.floor(elapsed / DAY)} d ago`;
}

/** Time until a request's deadline, rounded down so it never promises more time than there is. */
export function timeLeft(expiresAt: number, now: number): string {
  const left = expiresAt - now;
  if (left <= 0) return 'expired';
  if (left < MINUTE) return `expires in ${Math.max(1, Math.floor(left / 1000))} s`;
  if (left < HOUR) return `expires in ${Math.floor(left / MINUTE)} min`;
  if (left < DAY) return `expires in ${Math.floor(left / HOUR)} h`;
  return `expires in ${Math.floor(left / DAY)} d`;
}

let dateTimeFormat: Intl.DateTimeFormat | undefined;

/** A date and time in the person's locale; one formatter for all rows, as building one per call is what costs. */
export function dateTime(ms: number): string {
  dateTimeFormat ??= new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return dateTimeFormat.format(ms);
}
