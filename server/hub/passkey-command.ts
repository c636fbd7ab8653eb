import type { ApprovalService } from '../../shared/peer-calls.js';
import type { PasskeyInfo } from '../../shared/passkey-wire.js';
import type { PasskeyAction } from '../config.js';
import { throughHub, type HubCommandOptions } from './role-election.js';

interface PasskeyCommandOptions extends HubCommandOptions {
  action: PasskeyAction;
  json: boolean;
}

/**
 * `elicitly-companion passkey`: lists the person's passkeys and what needs one, removes one, or sets what needs one,
 * through the hub (the one writer of `passkeys.json`). The terminal needs no passkey to do it: it is where a person who
 * lost theirs starts again (docs/security.md "A lost passkey"), and every change it makes is in the ledger.
 */
export function runPasskeyCommand(options: PasskeyCommandOptions, out: (text: string) => void): Promise<number> {
  return throughHub(options, (service) => passkeyCommand(service, options, out));
}

async function passkeyCommand(service: ApprovalService, { action, json }: PasskeyCommandOptions, out: (text: string) => void): Promise<number> {
  const fail = (what: string, message: string) => {
    out(json ? `${JSON.stringify({ error: message })}\n` : `${what}: ${message}\n`);
    return 1;
  };
  if (action.kind === 'remove') {
    const answer = await service.call('passkey.remove', { id: action.id });
    if (!answer.ok) return fail(`Could not remove ${action.id}`, answer.error.message);
    if (!answer.value.ok) return fail(`Could not remove ${action.id}`, answer.value.issues?.map((i) => i.message).join('; ') ?? 'refused');
    const removed = answer.value.removed === true;
    out(json ? `${JSON.stringify({ id: action.id, removed })}\n` : removed ? `Removed the passkey ${action.id}. Its receipts still verify: the ledger keeps its public key.\n` : `No passkey ${action.id}. Nothing changed.\n`);
    return removed ? 0 : 1;
  }
  if (action.kind === 'require') {
    const answer = await service.call('passkey.require', { require: action.require });
    if (!answer.ok) return fail('Could not change the setting', answer.error.message);
    if (!answer.value.ok) return fail('Could not change the setting', answer.value.issues?.map((i) => i.message).join('; ') ?? 'refused');
    out(json ? `${JSON.stringify({ require: action.require })}\n` : action.require.length === 0 ? 'No request needs a passkey now (unless its agent asks for one).\n' : `A passkey is now needed for: ${action.require.join(', ')}.\n`);
    return 0;
  }
  const answer = await service.call('passkey.info', {});
  if (!answer.ok) return fail('Could not read the passkeys', answer.error.message);
  out(json ? `${JSON.stringify({ require: answer.value.require, passkeys: answer.value.passkeys })}\n` : formatPasskeys(answer.value));
  return 0;
}

/** One passkey a line, with the id `--remove` takes and the fingerprint a person pins to check receipts. */
export function formatPasskeys(info: Pick<PasskeyInfo, 'passkeys' | 'require'>): string {
  const needed = info.require.length === 0 ? 'Nothing needs a passkey unless its agent asks for one.' : `A passkey is needed for: ${info.require.join(', ')}.`;
  if (info.passkeys.length === 0) return `No passkeys. Add one in the Elicitly extension's Settings under "Passkeys".\n${needed}\n`;
  const lines = info.passkeys.map((p) => `${p.id}  ${p.label}  (${p.rpId}, added ${new Date(p.createdAt).toISOString()}, key sha256 ${p.fingerprint})`);
  return `${lines.length} passkey${lines.length === 1 ? '' : 's'}:\n${lines.join('\n')}\n${needed}\nRemove a lost one with: elicitly-companion passkey --remove <id>\n`;
}
