/**
 * A request is pending until a reviewer decides (approved / rejected), the agent withdraws it (canceled) or its
 * deadline passes (expired, fail closed); a decided request becomes consumed once the agent read the result.
 *
 * Without zod: `lifecycle.ts` makes them `StatusSchema`, and the extension's database checks a stored status against
 * them with zod/mini, so its pages open without zod's classic API.
 */
export const STATUSES = ['pending', 'approved', 'rejected', 'canceled', 'expired', 'consumed'] as const;
