import { sameReviewer, type Reviewer } from '../shared/reviewers.js';
import type { Config } from './config.js';
import { theirs, type Directory } from './directory.js';

type ReviewerState = Pick<Directory, 'reviewers' | 'putReviewer' | 'removeReviewer' | 'pairedExtensions' | 'pairedDevices'>;

interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Whose browser or phone a new pairing code is for. On a single person's hub (no reviewer) a code is for nobody, as
 * before; once the team has reviewers every code names one, and only one the hub knows: a decision made with the key
 * it gives is recorded as theirs.
 */
export function pairingReviewer(state: Pick<Directory, 'reviewers'>, named: string | undefined): { ok: true; reviewer: string | undefined } | { ok: false; message: string } {
  const all = state.reviewers();
  if (named === undefined) {
    if (all.length === 0) return { ok: true, reviewer: undefined };
    return { ok: false, message: `this hub has reviewers: name the one this browser or phone belongs to with --reviewer <name> (${all.map((r) => r.name).join(', ')})` };
  }
  const known = all.find((r) => sameReviewer(r.name, named));
  if (!known) return { ok: false, message: `--reviewer: no reviewer named ${JSON.stringify(named)}; add them first with \`elicitly-companion reviewer add ${JSON.stringify(named)}\`` };
  return { ok: true, reviewer: known.name };
}

const line = (r: Reviewer, extensions: number, devices: number) =>
  `${r.name}\t${r.groups.length > 0 ? r.groups.join(',') : '-'}\t${extensions} extension(s), ${devices} device(s)\tadded ${new Date(r.addedAt).toISOString()}\n`;

/** `elicitly-companion reviewer add <name> [--group G]… | list [--json] | remove <name>`. */
export async function runReviewerCommand(state: ReviewerState, action: NonNullable<Config['reviewer']>, json: boolean, io: Io): Promise<number> {
  if (action.kind === 'add') {
    const { reviewer, added } = await state.putReviewer(action.name, action.groups);
    io.stderr(
      `${added ? 'Added' : 'Updated'} the reviewer ${JSON.stringify(reviewer.name)}${reviewer.groups.length > 0 ? ` (groups: ${reviewer.groups.join(', ')})` : ''}. ` +
        `Pair their browser with \`elicitly-companion pair --reviewer ${JSON.stringify(reviewer.name)}\`, or their phone with \`elicitly-companion remote pair --reviewer ${JSON.stringify(reviewer.name)}\`.\n`,
    );
    return 0;
  }
  if (action.kind === 'remove') {
    const removed = await state.removeReviewer(action.name);
    if (!removed) {
      io.stderr(`No reviewer is named ${JSON.stringify(action.name)} (see \`elicitly-companion reviewer list\`).\n`);
      return 1;
    }
    io.stderr(`Removed ${JSON.stringify(action.name)} and forgot the ${removed.extensions} browser extension(s) and ${removed.devices} device(s) paired for them: their open sockets are cut off.\n`);
    return 0;
  }
  const reviewers = state.reviewers();
  const extensions = state.pairedExtensions();
  const devices = state.pairedDevices();
  const count = (list: { reviewer?: string | undefined }[], name: string) => list.filter(theirs(name)).length;
  if (json) {
    io.stdout(`${JSON.stringify({ reviewers: reviewers.map((r) => ({ ...r, extensions: count(extensions, r.name), devices: count(devices, r.name) })) })}\n`);
    return 0;
  }
  if (reviewers.length === 0) io.stderr('No reviewer yet: this hub is one person\'s. Add one with `elicitly-companion reviewer add <name> [--group G]`.\n');
  for (const r of reviewers) io.stdout(line(r, count(extensions, r.name), count(devices, r.name)));
  return 0;
}
