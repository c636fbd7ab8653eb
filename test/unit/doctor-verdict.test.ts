import { describe, expect, it } from 'vitest';
import type { CompanionReport, HubInfoView } from '../../server/mcp/doctor/doctor-report.js';
import {
  COMPANION_NOT_JOINED,
  companionReport,
  deprecations,
  deriveExtensions,
  reportFileName,
  routeReport,
  shareText,
  shareableReport,
  sharedReportFile,
} from '../../server/mcp/doctor/doctor-report.js';
import type { ProbeObservation, ProbeVerdict } from '../../server/mcp/doctor/doctor-verdict.js';
import {
  DIALOG_BROKEN_VERDICTS,
  PROBE_SCHEMA,
  classifyProbe,
  deriveSupport,
  probeChoiceMade,
  probeSkipReason,
} from '../../server/mcp/doctor/doctor-verdict.js';
import { validateValues } from '../../shared/requested-schema.js';

describe('classifyProbe', () => {
  const rows: [string, ProbeObservation, ProbeVerdict][] = [
    ['accept with the choice, fast', { kind: 'answered', action: 'accept', content: { probe: 'ok' }, latencyMs: 50 }, 'working'],
    ['accept with the choice, slow', { kind: 'answered', action: 'accept', content: { probe: 'ok' }, latencyMs: 30_000 }, 'working'],
    ['accept with {} (auto-approve)', { kind: 'answered', action: 'accept', content: {}, latencyMs: 3 }, 'advertised_but_autoaccepted'],
    ['accept with {} after 30 s is still no choice', { kind: 'answered', action: 'accept', content: {}, latencyMs: 30_000 }, 'advertised_but_autoaccepted'],
    ['accept with no content at all', { kind: 'answered', action: 'accept', content: undefined, latencyMs: 3 }, 'advertised_but_autoaccepted'],
    ['accept with a value not on offer', { kind: 'answered', action: 'accept', content: { probe: 'yes' }, latencyMs: 3 }, 'advertised_but_autoaccepted'],
    ['accept with the choice as another type', { kind: 'answered', action: 'accept', content: { probe: true }, latencyMs: 3 }, 'advertised_but_autoaccepted'],
    ['accept whose content the validator refused', { kind: 'accepted_invalid', latencyMs: 4 }, 'advertised_but_autoaccepted'],
    ['decline in 5 ms', { kind: 'answered', action: 'decline', latencyMs: 5 }, 'advertised_but_autocanceled'],
    ['cancel in 8 ms', { kind: 'answered', action: 'cancel', latencyMs: 8 }, 'advertised_but_autocanceled'],
    ['cancel at 1500 ms (a measured host)', { kind: 'answered', action: 'cancel', latencyMs: 1500 }, 'advertised_but_autocanceled'],
    ['decline at 1999 ms', { kind: 'answered', action: 'decline', latencyMs: 1999 }, 'advertised_but_autocanceled'],
    ['decline at exactly 2000 ms', { kind: 'answered', action: 'decline', latencyMs: 2000 }, 'user_declined'],
    ['decline after 2.5 s', { kind: 'answered', action: 'decline', latencyMs: 2500 }, 'user_declined'],
    ['cancel after 10 s', { kind: 'answered', action: 'cancel', latencyMs: 10_000 }, 'user_declined'],
    ['no answer', { kind: 'timed_out', latencyMs: 40_000 }, 'advertised_but_unanswered'],
    ['threw', { kind: 'threw', latencyMs: 3 }, 'unsupported'],
  ];
  it.each(rows)('%s → verdict', (_name, observation, verdict) => {
    expect(classifyProbe(observation)).toBe(verdict);
  });

  it('the verdicts that show the dialog broken: the four that no person gave, not working or user_declined', () => {
    expect([...DIALOG_BROKEN_VERDICTS].sort()).toEqual(['advertised_but_autoaccepted', 'advertised_but_autocanceled', 'advertised_but_unanswered', 'unsupported']);
  });
});

describe('the probe form', () => {
  it('is a required choice with no default, so only a person supplies it', () => {
    const field = PROBE_SCHEMA.properties.probe as Record<string, unknown>;
    expect(PROBE_SCHEMA.required).toEqual(['probe']);
    expect(field).not.toHaveProperty('default');
    expect(field.oneOf).toEqual([{ const: 'ok', title: 'OK' }]);
  });

  it.each([
    [{ probe: 'ok' }, true],
    [{}, false],
    [{ probe: 'OK' }, false],
    [{ probe: null }, false],
    [null, false],
    [['ok'], false],
    [Object.create({ probe: 'ok' }) as unknown, false],
  ])('probeChoiceMade(%j) → %s', (content, made) => {
    expect(probeChoiceMade(content)).toBe(made);
  });

  it('the shared validator refuses the accept a host sends on its own ({}), and takes the real choice', () => {
    expect(validateValues(PROBE_SCHEMA, {}, { prefix: 'content' }).ok).toBe(false);
    expect(validateValues(PROBE_SCHEMA, { probe: 'nope' }, { prefix: 'content' }).ok).toBe(false);
    expect(validateValues(PROBE_SCHEMA, { probe: 'ok' }, { prefix: 'content' })).toMatchObject({ ok: true, values: { probe: 'ok' } });
  });

  it.each([
    ['nothing advertised', { elicitation: false, elicitationForm: false }, 'client did not advertise elicitation'],
    ['URL mode only', { elicitation: true, elicitationForm: false }, 'client did not advertise form elicitation'],
  ])('skip reason: %s', (_name, support, reason) => {
    expect(probeSkipReason(support)).toBe(reason);
  });
});

describe('deriveSupport', () => {
  const none = { elicitation: false, elicitationForm: false, elicitationUrl: false, sampling: false, roots: false };
  const rows: [string, unknown, Partial<typeof none>][] = [
    ['nothing advertised', {}, {}],
    ['not an object', null, {}],
    ['empty elicitation means form only', { elicitation: {} }, { elicitation: true, elicitationForm: true }],
    ['form and url', { elicitation: { form: {}, url: {} } }, { elicitation: true, elicitationForm: true, elicitationUrl: true }],
    ['url only', { elicitation: { url: {} } }, { elicitation: true, elicitationUrl: true }],
    ['form only, explicit', { elicitation: { form: {} } }, { elicitation: true, elicitationForm: true }],
    ['elicitation: true is not an object', { elicitation: true }, {}],
    ['sampling and roots', { sampling: {}, roots: { listChanged: true } }, { sampling: true, roots: true }],
  ];
  it.each(rows)('%s', (_name, capabilities, expected) => {
    expect(deriveSupport(capabilities)).toEqual({ ...none, ...expected });
  });
});

describe('deriveExtensions', () => {
  const rows: [string, unknown, ReturnType<typeof deriveExtensions>][] = [
    ['none declared', {}, { apps: false, tasks: false, names: [] }],
    ['capabilities not an object', null, { apps: false, tasks: false, names: [] }],
    ['extensions not an object', { extensions: ['io.modelcontextprotocol/ui'] }, { apps: false, tasks: false, names: [] }],
    ['MCP Apps', { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } }, { apps: true, tasks: false, names: ['io.modelcontextprotocol/ui'] }],
    [
      'the Inspector CLI (tasks, skills)',
      { extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': {} } },
      { apps: false, tasks: true, names: ['io.modelcontextprotocol/tasks', 'io.modelcontextprotocol/skills'] },
    ],
    ['a known name whose value is not an object is listed, not counted', { extensions: { 'io.modelcontextprotocol/ui': true } }, { apps: false, tasks: false, names: ['io.modelcontextprotocol/ui'] }],
    ['a name only', { extensions: { 'com.example/x': {} } }, { apps: false, tasks: false, names: ['com.example/x'] }],
  ];
  it.each(rows)('%s', (_name, capabilities, expected) => {
    expect(deriveExtensions(capabilities)).toEqual(expected);
  });

  it('bounds the names echoed back', () => {
    const extensions = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`${'x'.repeat(300)}${i}`, {}]));
    const { names } = deriveExtensions({ extensions });
    expect(names).toHaveLength(100);
    expect(Math.max(...names.map((n) => n.length))).toBe(200);
  });
});

describe('deprecations', () => {
  const all = { sampling: {}, roots: { listChanged: true }, logging: {}, elicitation: {} };
  const rows: [string, unknown, unknown, string[]][] = [
    ['2025-11-25 deprecates none of them', '2025-11-25', all, []],
    ['2026-07-28: sampling, roots and logging, as declared', '2026-07-28', all, ['sampling', 'roots', 'logging']],
    ['2026-07-28: only what the client declared', '2026-07-28', { roots: {} }, ['roots']],
    ['2026-07-28: nothing declared', '2026-07-28', { elicitation: {} }, []],
    ['a later revision keeps them deprecated', '2027-03-01', { sampling: {} }, ['sampling']],
    ['no version known', null, all, []],
    ['not a date', 'draft', all, []],
    ['a capability that is not an object is not declared', '2026-07-28', { sampling: true }, []],
  ];
  it.each(rows)('%s', (_name, version, capabilities, features) => {
    const found = deprecations(version, capabilities);
    expect(found.map((d) => d.feature)).toEqual(features);
    for (const d of found) {
      expect(d.message).toMatch(/^\w+ is deprecated as of protocol 2026-07-28 \(SEP-2577\)/);
      expect(d.message.split('. ')).toHaveLength(1);
    }
  });
});

describe('companionReport', () => {
  const base = { port: 17391, stateDir: '/home/me/.elicitly' };
  it('role none: the hub was not asked, so nothing about it is known', () => {
    expect(companionReport({ ...base, role: 'none', info: null })).toEqual({
      hub: { role: 'none', port: 17391 },
      reviewers: null,
      pending: null,
      stateDir: '/home/me/.elicitly',
      note: COMPANION_NOT_JOINED,
    });
  });
  it('the hub answered: counts, and the last contact as ISO time', () => {
    const info: HubInfoView = { extensionsConnected: 1, lastSeenAt: Date.UTC(2026, 7, 1, 12, 0, 0), pending: 3 };
    expect(companionReport({ ...base, role: 'relay', info })).toEqual({
      hub: { role: 'relay', port: 17391 },
      reviewers: { extensionsConnected: 1, lastSeenAt: '2026-08-01T12:00:00.000Z' },
      pending: 3,
      stateDir: '/home/me/.elicitly',
    });
  });
  it('no extension ever seen: lastSeenAt null', () => {
    expect(companionReport({ ...base, role: 'hub', info: { extensionsConnected: 0, lastSeenAt: null, pending: 0 } }).reviewers).toEqual({ extensionsConnected: 0, lastSeenAt: null });
  });
  it('the hub could not be asked: null parts, and why', () => {
    const report = companionReport({ ...base, role: 'relay', info: { error: 'hub unavailable' } });
    expect(report).toMatchObject({ reviewers: null, pending: null, note: 'The hub could not be asked: hub unavailable' });
  });
});

describe('routeReport', () => {
  const formHost = { elicitation: true, elicitationForm: true };
  const noElicitation = { elicitation: false, elicitationForm: false };
  const urlOnly = { elicitation: true, elicitationForm: false };
  const notAdvertised = { via: 'extension' as const, why: 'the host did not advertise form elicitation, so its dialog cannot show it' };
  const one: CompanionReport['reviewers'] = { extensionsConnected: 1, lastSeenAt: null };
  const two: CompanionReport['reviewers'] = { extensionsConnected: 2, lastSeenAt: null };
  const zero: CompanionReport['reviewers'] = { extensionsConnected: 0, lastSeenAt: null };
  const rows: [string, Parameters<typeof routeReport>, 'host' | 'extension' | 'app' | 'app+extension' | 'none', RegExp][] = [
    ['host dialog, whatever the hub says', [{ via: 'host', why: 'the host advertises form elicitation' }, formHost, zero], 'host', /^An auto call shows the host's own dialog: the host advertises form elicitation\.$/],
    ['no elicitation, one extension', [notAdvertised, noElicitation, one], 'extension', /where one is connected, because the host did not advertise form elicitation/],
    ['no elicitation, two extensions', [notAdvertised, noElicitation, two], 'extension', /where 2 are connected/],
    ['no elicitation, none connected: none, and how to connect one', [notAdvertised, noElicitation, zero], 'none', /but none is connected: ask the person to open the Elicitly extension .*npx elicitly-companion pair/],
    ['no elicitation, hub not asked', [notAdvertised, noElicitation, null], 'extension', /whether an extension is connected is not known until this process joins the hub \(checkCompanion: true asks\)/],
    ['URL only: says so', [notAdvertised, urlOnly, one], 'extension', /because the host advertises only URL-mode elicitation/],
    ['a dialog shown broken', [{ via: 'extension', why: "the host's dialog was shown broken in this session: x" }, formHost, one], 'extension', /because the host's dialog was shown broken in this session: x\.$/],
    // Issue 18 item 3: a client that renders MCP Apps shows the request in the chat, so it reaches someone.
    ['app, none connected: the chat, not nobody', [notAdvertised, noElicitation, zero, true], 'app', /^An auto call is shown in the chat, in the Elicitly review under its result \(the host did not advertise/],
    ['app, one connected: both', [notAdvertised, noElicitation, one, true], 'app+extension', /in the chat, in the Elicitly review under its result and in the Elicitly extension, where one is connected/],
    ['app, hub not asked: both, the extension not known', [notAdvertised, noElicitation, null, true], 'app+extension', /goes to the Elicitly extension too .*not known until this process joins the hub/],
    ['app, host dialog works: the host', [{ via: 'host', why: 'it works' }, formHost, zero, true], 'host', /^An auto call shows the host's own dialog: it works\.$/],
  ];
  it.each(rows)('%s', (_name, args, via, why) => {
    const route = routeReport(...args);
    expect(route.via).toBe(via);
    expect(route.why).toMatch(why);
    // One sentence: a single final period.
    expect(route.why.endsWith('.')).toBe(true);
    expect(route.why.slice(0, -1)).not.toMatch(/\.\s+[A-Z]/);
  });
  it('names the known host that decided the route', () => {
    const knownHost = { id: 'claude-code-print', evidence: 'measured' };
    const route = routeReport({ via: 'extension', why: 'known', knownHost }, formHost, zero);
    expect(route).toMatchObject({ via: 'none', knownHost });
    expect(routeReport({ via: 'extension', why: 'known', knownHost }, formHost, one, true)).toMatchObject({ via: 'app+extension', knownHost });
  });
});

describe('share', () => {
  const report = {
    era: '2025',
    initialize: { request: { clientInfo: { name: 'h' }, capabilities: { elicitation: {} } }, response: {} },
    probes: { elicitationForm: { attempted: true, action: 'accept', latencyMs: 900, data: 'ok', verdict: 'working' } },
  };
  it('leaves the probe payload out and keeps the verdicts', () => {
    const shared = shareableReport(report);
    expect(shared.probes).toEqual({ elicitationForm: { attempted: true, action: 'accept', latencyMs: 900, verdict: 'working' } });
    expect(JSON.stringify(shared)).not.toContain('"data"');
    expect(shared.initialize).toEqual(report.initialize);
    // The report the agent gets keeps its data.
    expect(report.probes.elicitationForm.data).toBe('ok');
  });
  it('a report without probes is kept as it is', () => {
    expect(shareableReport({ era: '2025' })).toEqual({ era: '2025' });
  });
  it('the file holds the metadata the person volunteered, null for what they did not', () => {
    const file = sharedReportFile(report, { productName: 'Claude Code' }, Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    expect(file).toMatchObject({ kind: 'elicitly-doctor-report', version: 1, writtenAt: '2026-01-02T03:04:05.006Z', product: { name: 'Claude Code', version: null }, notes: null });
    expect(file.report.probes).toEqual({ elicitationForm: expect.not.objectContaining({ data: expect.anything() }) as unknown });
  });
  it('shareText: a ready-to-file issue with the facts first and the written file, without payloads', () => {
    const full = {
      ...report,
      initialize: { request: { clientInfo: { name: 'claude-code', version: '2.1.332' }, capabilities: {} }, response: { protocolVersion: '2026-07-28' } },
      support: { elicitationForm: true, elicitationUrl: true, extensions: { apps: false } },
      routing: { elicit_confirm: { via: 'extension', why: 'w', knownHost: { id: 'claude-code-print', evidence: 'e' } } },
    };
    const file = sharedReportFile(full, { productName: 'Claude Code', productVersion: '2.1.332', notes: 'print mode ```' }, 0);
    const text = shareText(file);
    expect(text.split('\n').slice(0, 8)).toEqual([
      '## Elicitly host report: Claude Code 2.1.332',
      '',
      '- MCP client: claude-code 2.1.332 (era 2025, protocol 2026-07-28)',
      '- Advertised: form elicitation true, URL elicitation true, MCP Apps false',
      '- Probe of the form dialog: working (action accept, 900 ms)',
      '- An auto ask goes to: extension (known host claude-code-print)',
      '- Notes: print mode ```',
      '',
    ]);
    // The fence outlasts the backticks the person (or the host) put in a value, so the JSON reads back whole.
    const fenced = /\n(`{4,})json\n([\s\S]*)\n\1\n$/.exec(text);
    expect(JSON.parse(fenced?.[2] ?? 'null')).toEqual(JSON.parse(JSON.stringify(file)));
    expect(text).not.toContain('"data"');
  });
  it('shareText without a probe or a product says so', () => {
    const text = shareText(sharedReportFile({ era: '2025' }, {}, 0));
    expect(text).toContain('## Elicitly host report: an unnamed host\n');
    expect(text).toContain('- Probe of the form dialog: not run\n');
    expect(text).toContain('- Notes: none\n');
  });
  it('file names sort by time and carry no colon', () => {
    expect(reportFileName(Date.UTC(2026, 0, 2, 3, 4, 5, 6), 'ab12')).toBe('doctor-2026-01-02T03-04-05-006Z-ab12.json');
  });
});
