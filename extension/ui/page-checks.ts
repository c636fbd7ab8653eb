// The checks a page runs on what it reads from the store and on the background's replies: zod's classic API and every
// stored shape (the shared request schemas). Its own chunk, loaded by page-reads.ts: it is most of what the popup
// would otherwise load before its first paint.
export { readRow, readRows } from '../db/requests-repo.js';
export { parseConnection, parseSettings } from '../db/settings-repo.js';
export { DecideReplySchema, PasskeyReplySchema, RuleReplySchema } from '../../kit/messages.js';
