import type { ApprovalService } from '../../shared/peer-calls.js';
import { describeRule, type Rule } from '../../shared/rules.js';

/** How much a rule is used: whether it earns its keep. */
function answered(rule: Rule): string {
  if (!rule.hits) return ' (not used yet)';
  return ` (answered ${rule.hits} time${rule.hits === 1 ? '' : 's'}, last ${new Date(rule.lastHitAt ?? 0).toISOString()})`;
}
import type { RulesAction } from '../config.js';
import { throughHub, type HubCommandOptions } from './role-election.js';

/** `elicitly-companion rules` exit codes (README "Command line"). */
export const RULES_EXIT = { ok: 0, failed: 1 } as const;

interface RulesCommandOptions extends HubCommandOptions {
  action: RulesAction;
  json: boolean;
}

/**
 * Lists or removes the person's rules through the hub, the one writer of `rules.json`: a running hub is asked as a
 * relay would (the install key, proved both ways); with none running this command is the hub for the moment it takes,
 * exactly as an agent's first approval call would be. It never writes the file itself. It can remove a rule but never
 * make one: removing only brings a question back to the person.
 */
export function runRulesCommand(options: RulesCommandOptions, out: (text: string) => void): Promise<number> {
  return throughHub(options, (service) => rulesCommand(service, options, out));
}

async function rulesCommand(service: ApprovalService, options: RulesCommandOptions, out: (text: string) => void): Promise<number> {
  const { action, json } = options;
  if (action.kind === 'remove') {
    const answer = await service.call('rule.delete', { id: action.id });
    if (!answer.ok) {
      out(json ? `${JSON.stringify({ error: answer.error })}\n` : `Could not remove ${action.id}: ${answer.error.message}\n`);
      return RULES_EXIT.failed;
    }
    const { removed } = answer.value;
    out(json ? `${JSON.stringify({ id: action.id, removed })}\n` : removed ? `Removed ${action.id}: the questions it answered go to the person again.\n` : `No rule ${action.id} (already removed, or expired). Nothing changed.\n`);
    return removed ? RULES_EXIT.ok : RULES_EXIT.failed;
  }
  const answer = await service.call('rules', {});
  if (!answer.ok) {
    out(json ? `${JSON.stringify({ error: answer.error })}\n` : `Could not read the rules: ${answer.error.message}\n`);
    return RULES_EXIT.failed;
  }
  out(json ? `${JSON.stringify({ rules: answer.value.rules })}\n` : formatRules(answer.value.rules));
  return RULES_EXIT.ok;
}

/** What a person reads: one rule a line, with the id `rules --remove` takes. */
export function formatRules(rules: readonly Rule[], now = Date.now()): string {
  if (rules.length === 0) return 'No rules. Make one in the Elicitly extension: "Always allow" or "Always deny" when you decide a request.\n';
  const lines = rules.map((rule) => `${rule.id}  ${describeRule(rule, now)}${answered(rule)}`);
  return `${rules.length} ${rules.length === 1 ? 'rule' : 'rules'}:\n${lines.join('\n')}\nRemove one with: elicitly-companion rules --remove <id>\n`;
}
