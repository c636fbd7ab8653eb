import { DEFAULT_HUB_PORT } from '../shared/extension-id.js';
import { packageInfo } from './package-info.js';
import { HOOK_HOSTS } from './hook/hosts/registry.js';

const HOSTS = HOOK_HOSTS.map((host) => host.id).join('|');
const DEFAULTS = HOOK_HOSTS.map((host) => `${host.name} ${host.withCompanions(host.defaultEvents).join(',')}`).join('; ');

/** `elicitly-companion --help`: for a person at a terminal, so it says what each command is for, not only its flags. */
export function helpText(): string {
  return `elicitly-companion ${packageInfo.version}: MCP tools that let AI agents ask a person.

Usage:
  elicitly-companion [--port N]
      Run the MCP server on stdio. This is what a host (Claude Code, Cursor, VS Code…) starts;
      register it with e.g. \`claude mcp add elicitly -- npx -y elicitly-companion\`.
  elicitly-companion pair [--reviewer <name> | --list | --remove <origin|keyId>]
      Print a one-time code to pair the Elicitly browser extension (Settings → Pairing code;
      on a team's hub, --reviewer names whose browser it is, and is required),
      list the paired extensions and phones (kind, origin or name, key id, when), or forget one:
      an extension by its origin, a phone by its key id (its open pages are cut off at once).
  elicitly-companion status [--json]
      Whether a hub is running on the port, its pid, the extensions connected and the pending
      requests, asked of the hub itself. Exit code 0: running; 1: no hub; 3: the port is held by
      something that is not this install's hub.
  elicitly-companion rules [--list [--json] | --remove <id>]
      List your rules ("Always allow" / "Always deny", made in the extension), or remove one so its
      questions come to you again. Through the running hub (or as the hub, when none runs). Rules
      are made only in the extension, never here. Exit code 0: done; 1: no such rule, or no hub.
  elicitly-companion passkey [--list [--json] | --remove <id> | --require <permission,proposal,everything|none>]
      Your passkeys (added in the extension's Settings) with the fingerprint to pin, and what needs
      one. --remove a lost passkey, or --require none to stop needing one, from this terminal: no
      passkey is asked here, and the ledger records the change. Exit code 0: done; 1: refused.
  elicitly-companion audit verify [--receipt F] [--key F] | audit export [--since T] [--format jsonl|csv] | audit key
      The ledger of every decision: verify checks each line's hash, the chain and every signed
      checkpoint (with --receipt, that receipt's entry; with --key, against a public key you pinned)
      and names the first bad entry; export prints the verified entries; key prints the hub's public
      key to pin. Reads the state dir's files, or with ELICITLY_DATABASE_URL the team's ledger and key
      in its database; no hub needs to run. Exit code 0: verified; 1: not (named); 2: a bad argument.
  elicitly-companion hooks install ${HOSTS} [--scope user|project] [--events E,E] [--wait S]
      Send an agent host's own permission prompts (and Claude Code's MCP dialogs) to the
      extension: writes this install's hook command into the host's settings (merged, a backup first;
      running it again changes nothing). Default events: ${DEFAULTS}.
      --wait: how long a prompt waits for you (default 110 s; the host's hook
      timeout is set 10 s longer). A symlinked settings file is written through, the link kept. Exit
      code 1, the file untouched: it cannot be parsed or merged, or (--scope project) it leads out of
      the project. Then: hooks uninstall ${HOSTS} [--scope …], hooks status.
  elicitly-companion hook --host ${HOSTS} [--wait S] <event>
      The hook itself (the host runs it): asks you in the extension and prints the host's decision.
      No extension connected, or no answer in time: it prints nothing and the host asks as usual.
      Its question lives as long as the hook: ended by the host (you answered in the terminal, its
      timeout, Ctrl-C) or by any signal, it is withdrawn from the inbox. PostToolUse and
      PostToolUseFailure (Claude Code) withdraw the question of a tool call you answered there.
  elicitly-companion hub [--idle-seconds N] [--database URL]
      Run the hub in the foreground (a hook starts one when none runs); it stops after 30 min
      (--idle-seconds) with no pending request and no agent connected, or at SIGTERM/SIGINT.
      --database (or ELICITLY_DATABASE_URL): keep the requests, the rules, the reviewers and every
      key in a team's PostgreSQL, shared by every hub of that database.
  elicitly-companion reviewer add <name> [--group G]… | reviewer list [--json] | reviewer remove <name>
      A team's reviewers: their paired browsers and phones (pair --reviewer, remote pair --reviewer)
      record each decision with their name (decidedBy); remove forgets that person's browsers and phones.
  elicitly-companion routing set <policy.json> | routing show
      The team's routing policy (groups and quorum per agent, directory, kind and tool), checked
      whole before it replaces the one in force. With ELICITLY_DATABASE_URL, the database's: the
      reviewer, pair, key and routing commands then change what every hub of the team reads.
  elicitly-companion remote enable [--origin <https origin>]…
      Decide from your phone: turn on the reviewer page the hub serves at /phone/ and print a
      pairing link (valid 10 minutes, one device) with its QR code; the link alone is the last
      line on stdout. The hub stays on 127.0.0.1: reach it with \`tailscale serve --bg <port>\`
      and --origin https://<machine>.<tailnet>.ts.net, or an SSH tunnel.
  elicitly-companion remote pair [--reviewer <name>] | remote disable | remote status [--json]
      A new pairing link for another device; turn the page off (paired phones are kept, and
      refused while it is off); show the settings, devices and notifications (secrets masked).
  elicitly-companion remote notify [--ntfy <topic URL> [--token T]] [--webhook <url>]
                                   [--remind M] [--before-expiry M] [--off]
      Notifications without request content: ntfy (ntfy.sh or your own server), a webhook signed
      with a secret printed once, a reminder after M minutes of waiting (default 10) and one M
      minutes before expiry (default 5; 0: none); --off removes ntfy and the webhook.
  elicitly-companion key export [--name N] [--allow permission] | key list | key revoke <keyId>
      A key for an agent on another machine (devcontainer, SSH host): export prints a token for
      its ELICITLY_HUB_KEY (shown once). The key files, awaits, reads and withdraws its own requests
      only; --allow permission also lets it file a host's permission prompts (a remote hook). list
      shows names, ids and grants; revoke cuts that relay off.
  elicitly-companion --version | --help

Environment:
  ELICITLY_PORT                 hub port on 127.0.0.1 (default ${DEFAULT_HUB_PORT}); --port overrides it
  ELICITLY_STATE_DIR            where requests, rules, keys and reports live (default: the per-user state dir)
  ELICITLY_LOG_LEVEL            debug | info | warn | error (default info; logs go to stderr)
  ELICITLY_PROBE_TIMEOUT_MS     how long elicit_doctor's probe waits for a person
  ELICITLY_AUTOMATIC_NO_MS      a host's "no" faster than this (default 250 ms) is its own: auto asks go on in the extension
  ELICITLY_RETENTION_DAYS       how long decided requests are kept (default 7)
  ELICITLY_DATABASE_URL         a team's PostgreSQL for the requests, the directory and the ledger (default: the state dir)
  ELICITLY_LEDGER_RETENTION_DAYS how long the state dir's ledger keeps a sealed segment (default: for ever; at least the above)
  ELICITLY_MIN_TIMEOUT_SECONDS  the shortest timeoutSeconds an approval may ask for (default 60)
  ELICITLY_HUB_URL              join the hub on another machine: ws:// or wss:// URL of its tunnel
                                (this process then never runs a hub; needs ELICITLY_HUB_KEY)
  ELICITLY_HUB_KEY              the token \`key export\` printed on the hub's computer
  ELICITLY_REMOTE_LISTEN        host:port of an optional HTTPS listener for the phone page, with
  ELICITLY_REMOTE_CERT/_KEY     the PEM certificate and key it serves (both required)
  ELICITLY_PUSH_SERVICES        origins of push services besides the browsers' own, comma-separated

Exit code 2: an argument or environment variable did not parse (the message names it).
Docs: https://github.com/elicitly/elicitly-companion#readme
`;
}
