import { readFileSync } from 'node:fs';
import { readRoutingPolicy } from '../shared/routing.js';
import type { RoutingAction } from './config.js';
import type { Directory } from './directory.js';

interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * `elicitly-companion routing set <policy.json> | routing show`: the team's routing policy, checked whole before it
 * replaces the one in force (a refusal names the field and the rule, and changes nothing). With ELICITLY_DATABASE_URL
 * it is the database's, so every hub of the team routes alike; else the hub's own `routing.json`. A hub reads it at
 * the next request: nothing restarts.
 */
export async function runRoutingCommand(directory: Pick<Directory, 'routing' | 'setRouting'>, action: RoutingAction, where: string, io: Io): Promise<number> {
  if (action.kind === 'show') {
    const read = directory.routing();
    if (!read.ok) {
      io.stderr(`The routing policy in ${where} does not parse, and no request is filed until it is fixed: ${read.problem}\n`);
      return 1;
    }
    if (read.policy === null) io.stderr(`No routing policy in ${where}: every request reaches every reviewer and needs one approval.\n`);
    else io.stdout(`${JSON.stringify(read.policy, null, 2)}\n`);
    return 0;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(action.file, 'utf8'));
  } catch (error) {
    io.stderr(`elicitly-companion routing set: cannot read ${action.file} as JSON: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const read = readRoutingPolicy(raw);
  if (!read.ok || read.policy === null) {
    io.stderr(`elicitly-companion routing set: ${action.file} is not a routing policy, nothing changed: ${read.ok ? 'it is empty' : read.problem}\n`);
    return 2;
  }
  await directory.setRouting(read.policy);
  const routes = read.policy.routes;
  io.stderr(
    `The routing policy in ${where} now has ${routes.length} route(s)${routes.length > 0 ? ` (${routes.map((r) => r.name).join(', ')})` : ''}; ` +
      'every hub reading it applies it from its next request.\n',
  );
  return 0;
}
