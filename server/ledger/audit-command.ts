import { readFileSync } from 'node:fs';
import { ReceiptSchema } from '../../shared/receipt.js';
import type { AuditAction } from '../config.js';
import { publicKeyFrom, type LedgerEntry } from './ledger-format.js';
import { publicKeyPem } from './ledger-key.js';
import type { LedgerKey } from './ledger-store.js';
import { keyIdOf } from './ledger-format.js';
import { verifyLedger, verifyReceipt, type LedgerPlace, type VerifyReport } from './ledger-verify.js';

type Out = (text: string) => void;

function describe(report: VerifyReport): string {
  const pruned = report.pruned > 0 ? ` (the ${report.pruned} before them removed by retention; the first kept starts from a signed checkpoint)` : '';
  const where = report.segments > 0 ? ` in ${report.segments} segment(s)${pruned}` : '';
  if (report.ok) return `ledger ok: ${report.entries} entries${where}, ${report.checkpoints} signed checkpoint(s), ${report.unsigned} after the last checkpoint\n`;
  const at = report.first;
  return `ledger BROKEN: ${at?.file ?? '?'} line ${at?.line ?? '?'}${at?.index === undefined ? '' : ` (entry ${at.index})`}: ${at?.problem ?? 'unknown'}\n`;
}

const CSV_FIELDS = ['index', 'at', 'type', 'id', 'decision', 'decidedVia', 'decidedBy', 'ruleId', 'requestHash', 'decisionHash', 'hash'] as const;
const csvCell = (v: unknown) => (v === undefined || v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));

function csvRow(entry: LedgerEntry): string {
  const e = entry.event as Record<string, unknown>;
  const row: Record<(typeof CSV_FIELDS)[number], unknown> = {
    index: entry.index, at: new Date(entry.at).toISOString(), type: e.type, id: e.id ?? e.ruleId, decision: e.decision, decidedVia: e.decidedVia, decidedBy: e.decidedBy, ruleId: e.ruleId, requestHash: e.requestHash, decisionHash: e.decisionHash, hash: entry.hash,
  };
  return CSV_FIELDS.map((f) => csvCell(row[f])).join(',');
}

/**
 * `elicitly-companion audit`: `verify` walks the ledger (every hash, every signature; with `--receipt`, that receipt's
 * entry), `export` prints the verified entries, `key` the public key to pin. Reads files only: it works with or without
 * a hub running; with a team's database, its ledger and the team's key. Exit 0: verified; 1: not (named); 2: bad arguments or an unreadable receipt.
 */
export async function runAuditCommand(where: { ledger: LedgerPlace; key: LedgerKey }, action: AuditAction, out: Out, err: Out): Promise<number> {
  const { ledger, key: own } = where;
  if (action.kind === 'key') {
    out(`${publicKeyPem(own)}key id ${keyIdOf(own.publicKey)}\n`);
    return 0;
  }
  let publicKey = own.publicKey;
  if (action.kind === 'verify' && action.key !== undefined) {
    const pinned = publicKeyFrom(readFileSync(action.key, 'utf8'));
    if (!pinned) {
      err(`audit verify --key: ${action.key} is not an Ed25519 public key (PEM, as \`audit key\` prints it)\n`);
      return 2;
    }
    publicKey = pinned;
  }
  if (action.kind === 'verify' && action.receipt !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(action.receipt, 'utf8'));
    } catch (error) {
      err(`audit verify --receipt: cannot read ${action.receipt}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
    // A receipt, or the elicit_result that carries one.
    const parsed = ReceiptSchema.safeParse(raw !== null && typeof raw === 'object' && 'receipt' in raw ? raw.receipt : raw);
    if (!parsed.success) {
      err(`audit verify --receipt: ${action.receipt} is not a receipt (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})\n`);
      return 2;
    }
    const checked = await verifyReceipt(ledger, publicKey, parsed.data);
    out(describe(checked.report));
    const signedBy = parsed.data.passkey ? `, approved with the passkey ${parsed.data.passkey.credentialId} (its signature checked)` : '';
    out(checked.ok ? `receipt ok: entry ${parsed.data.ledgerIndex} records this decision, under a signed checkpoint${signedBy}\n` : `receipt NOT verified: ${checked.problem ?? ''}\n`);
    return checked.ok ? 0 : 1;
  }
  if (action.kind === 'export') {
    const since = action.since?.getTime() ?? 0;
    const rows: string[] = action.format === 'csv' ? [CSV_FIELDS.join(',')] : [];
    const report = await verifyLedger(ledger, publicKey, (entry) => {
      if (entry.at >= since) rows.push(action.format === 'csv' ? csvRow(entry) : JSON.stringify(entry));
    });
    if (!report.ok) {
      err(describe(report));
      return 1;
    }
    out(rows.length > 0 ? `${rows.join('\n')}\n` : '');
    return 0;
  }
  const report = await verifyLedger(ledger, publicKey);
  out(describe(report));
  return report.ok ? 0 : 1;
}
