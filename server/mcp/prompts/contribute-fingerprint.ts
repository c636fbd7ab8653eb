import type { GetPromptResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { REPORT_ISSUES_URL, SHARE_LIMITS } from '../doctor/doctor-report.js';

const ContributeFingerprintArgsSchema = z.object({
  productName: z.string().max(SHARE_LIMITS.productName).optional().describe('The app you are using, e.g. "Claude Code" or "Cursor" (at most 100 characters).'),
  productVersion: z.string().max(SHARE_LIMITS.productVersion).optional().describe('Its version (at most 50 characters).'),
  notes: z.string().max(SHARE_LIMITS.notes).optional().describe('Anything unusual about the setup: OS, flags, policy (at most 2000 characters).'),
  consent: z.string().max(10).optional().describe('"yes" if you agree to write the report and have it shown to you to file; otherwise you are asked first.'),
});
type ContributeFingerprintArgs = z.infer<typeof ContributeFingerprintArgsSchema>;

const WHAT_IT_HOLDS =
  'The report holds what this app sent when it connected (its MCP client name, version and capabilities), what those ' +
  'mean, the verdict and timing of one test dialog, and counts from the Elicitly companion: no answers and no ' +
  'conversation. Nothing is sent anywhere: the report is written to a file on this computer and shown to me, and filing ' +
  'it is up to me.';

/** The instructions the host hands its model: collect what is missing, get a yes, run the doctor, show the report. */
export function contributeFingerprintText(args: ContributeFingerprintArgs): string {
  const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());
  const name = given(args.productName);
  const version = given(args.productVersion);
  const notes = given(args.notes);
  const agreed = given(args.consent)?.toLowerCase() === 'yes';
  const call = JSON.stringify({
    probeElicitation: true,
    share: true,
    productName: name ?? '<the app>',
    productVersion: version ?? '<its version>',
    ...(notes ? { notes } : { notes: '<anything unusual, or leave out>' }),
  });
  const product =
    name && version
      ? `The app is ${JSON.stringify(name)}, version ${JSON.stringify(version)}.${notes ? ` Notes: ${JSON.stringify(notes)}.` : ' Ask me whether anything about the setup is unusual (OS, flags, policy); none is fine.'}`
      : 'Ask me which app I am using (for example "Claude Code" or "Cursor") and its version, and whether anything about the setup is unusual (OS, flags, policy). The report sees only the MCP client inside the app, not the app itself.';
  const consent = agreed
    ? `I agree to this: ${WHAT_IT_HOLDS}`
    : `Before running anything, tell me this and ask whether I agree; go on only with a clear yes: ${WHAT_IT_HOLDS}`;
  return [
    "Help me contribute this app's elicitation fingerprint (whether it really shows questions from tools) to Elicitly's support matrix.",
    '',
    `1. The product. ${product}`,
    `2. Consent. ${consent}`,
    `3. Tell me that one dialog will appear and that I should choose "OK" and submit it (if it never appears, that is what the test finds out). Then call the elicit_doctor tool with ${call}, filling in what I told you.`,
    `4. Show me the result's shareText exactly as it is: it is the report, ready to file. Say where the file was written (sharePath) and that I can file the report at ${REPORT_ISSUES_URL}. If shared is false, say why (shareError); the text can still be filed.`,
  ].join('\n');
}

/** Seed 001's contribute-fingerprint prompt: a slash command in hosts that show MCP prompts. */
export function registerContributeFingerprint(server: McpServer): void {
  server.registerPrompt(
    'contribute-fingerprint',
    {
      title: "Report this app's elicitation support",
      description:
        'Collects the app\'s name and version, any notes and your consent, runs elicit_doctor with one test dialog and ' +
        'share: true, and gives you a ready-to-file report (no answers, no conversation). Nothing is sent anywhere.',
      argsSchema: ContributeFingerprintArgsSchema,
    },
    (args): GetPromptResult => ({
      description: "Report this app's elicitation support",
      messages: [{ role: 'user', content: { type: 'text', text: contributeFingerprintText(args) } }],
    }),
  );
}
