import { RuleSchema, type Rule } from '../../shared/rules.js';
import type { ElicitlyDb } from './database.js';

/** A rule the hub listed that does not fit the schema is left out (and named), never stored half-understood. */
function validRules(raws: readonly unknown[]): { rules: Rule[]; skipped: number } {
  const rules: Rule[] = [];
  let skipped = 0;
  for (const raw of raws) {
    const parsed = RuleSchema.safeParse(raw);
    if (parsed.success) rules.push(parsed.data);
    else skipped++;
  }
  return { rules, skipped };
}

/**
 * The hub's whole list replaces ours (a welcome, or a `rules` frame after any change): the hub is the one writer of
 * rules, so a rule missing from its list is gone. One transaction, so a page never reads half a list.
 */
export async function replaceRules(db: ElicitlyDb, raws: readonly unknown[]): Promise<{ stored: number; skipped: number }> {
  const { rules, skipped } = validRules(raws);
  await db.transaction('rw', db.rules, async () => {
    await db.rules.clear();
    await db.rules.bulkPut(rules);
  });
  return { stored: rules.length, skipped };
}

/** Every stored rule, checked like every stored row, newest first. */
export async function listRules(db: ElicitlyDb): Promise<Rule[]> {
  const { rules } = validRules(await db.rules.toArray());
  return rules.sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
}

/** The rules by id, for the history's "by your rule" lines. */
export async function rulesById(db: ElicitlyDb): Promise<ReadonlyMap<string, Rule>> {
  return new Map((await listRules(db)).map((r) => [r.id, r]));
}
