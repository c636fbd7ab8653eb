import type { ComponentChildren } from 'preact';
import type { RuleDraft } from '../../shared/rules.js';
import type { RuleSlotProps } from '../../kit/ui/review/permission-review.js';
import { RuleEditor } from './rule-editor.js';
import { draftFor } from '../../kit/ui/rule-words.js';

/**
 * "Always allow…" / "Always deny…" in the extension: the rule drafted from the prompt, shown in words and editable,
 * tried on the person's history (`dryRun`) before it is saved. Handed to the review by the extension alone (loaded
 * when first opened), the only surface whose decisions can carry a rule: the phone's page and the chat's view carry
 * none of it.
 */
export function PermissionRuleEditor({ dryRun, ...slot }: RuleSlotProps & { dryRun?: (draft: RuleDraft) => ComponentChildren }) {
  return (
    <RuleEditor
      key={slot.effect}
      initial={draftFor(slot.source, slot.effect, slot.scope, Date.now())}
      scopeOf={slot.scopeOf}
      initialScope={slot.scope}
      saveLabel={slot.effect === 'allow' ? 'Allow and save the rule' : 'Deny and save the rule'}
      busy={slot.busy}
      dryRun={dryRun}
      onSave={slot.onSave}
      onCancel={slot.onCancel}
    />
  );
}
