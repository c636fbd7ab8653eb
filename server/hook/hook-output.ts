// What every host's decision says in words: the person's reason for a deny, or who decided. Each host prints it in its
// own JSON (server/hook/hosts/).
import type { PermissionResult } from '../../shared/permission.js';

export function decisionReason(result: PermissionResult): string {
  if (result.message !== undefined) return result.message;
  const who = result.decidedVia === 'rule' ? `a rule in Elicitly${result.ruleId ? ` (${result.ruleId})` : ''}` : 'the person in Elicitly';
  return `${result.behavior === 'allow' ? 'Allowed' : 'Denied'} by ${who}`;
}
