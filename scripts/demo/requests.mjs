// What the demo's agent asks, and what --auto answers. The NorthMark proposal is seed 004's example, verbatim
// (northmark.json; the demo's test checks it against the test fixture so the two cannot drift apart).
import { readFileSync } from 'node:fs';

const northmark = JSON.parse(readFileSync(new URL('./northmark.json', import.meta.url), 'utf8'));

/** A deploy summary the person approves as-is: json mode, shown through a small Liquid template. */
const deploy = {
  message: 'Deploy checkout-api 2.4.0 to production',
  context: {
    service: 'checkout-api',
    version: '2.4.0',
    previous: '2.3.7',
    environment: 'production',
    region: 'eu-west-1',
    canary: { percent: 10, minutes: 15 },
    changes: [
      'Apple Pay on the payment step',
      'Tax calculation p95 down from 180 ms to 60 ms',
      'Fix: coupon codes with lowercase letters were refused',
    ],
    rollback: 'automatic when the error rate passes 1% during the canary',
  },
  // Values from context are HTML-escaped as they are inserted; the extension keeps only formatting tags.
  displayTemplate: [
    '<table>',
    '<tr><th>Service</th><td>{{ context.service }} {{ context.previous }} → <b>{{ context.version }}</b></td></tr>',
    '<tr><th>Where</th><td>{{ context.environment }}, {{ context.region }}</td></tr>',
    '<tr><th>Canary</th><td>{{ context.canary.percent }}% of traffic for {{ context.canary.minutes }} minutes</td></tr>',
    '<tr><th>Rollback</th><td>{{ context.rollback }}</td></tr>',
    '</table>',
    '<p><b>{{ context.changes | size }} changes</b></p>',
    '<ul>{% for change in context.changes %}<li>{{ change }}</li>{% endfor %}</ul>',
  ].join('\n'),
  labels: { ok: 'Deploy', cancel: 'Hold' },
};

/** A form the person fills: form mode, a long text (shown as a text area) and a checkbox. */
const releaseNote = {
  message: 'Write the release note for checkout-api 2.4.0',
  requestedSchema: {
    type: 'object',
    properties: {
      note: {
        type: 'string',
        title: 'Release note',
        description: 'One or two sentences for the changelog and the status page.',
        minLength: 10,
        maxLength: 1000,
      },
      emailCustomers: { type: 'boolean', title: 'Email customers about this release', default: false },
    },
    required: ['note'],
  },
};

/** In the order the agent files them (the inbox lists the newest first). */
export const REQUESTS = [
  { key: 'proposal', label: 'NorthMark proposal', tool: 'elicit_proposal', args: northmark },
  { key: 'deploy', label: 'Deploy approval (json mode)', tool: 'elicit_approval', args: deploy },
  { key: 'release-note', label: 'Release note (form mode)', tool: 'elicit_approval', args: releaseNote },
];

/** What --auto does in the review, and so what each decision must carry back. */
export const AUTO_CHOICES = {
  proposal: {
    editLabel: 'Proposed Number of Employees',
    editValue: '250',
    copyCell: 'Crunchbase: Name',
    untick: 'Include Institution Types',
  },
  deploy: { comment: 'Go ahead after the 14:00 standup.' },
  releaseNote: {
    note: 'Checkout now takes Apple Pay, computes taxes three times faster and accepts lowercase coupon codes.',
    emailCustomers: true,
  },
};

/** What the person is asked to do in each request, for the headed demo's instructions. */
export const HOW_TO_DECIDE = {
  proposal: 'edit a Proposed value, double-click a Source cell to copy it, untick a row you do not want, then Submit Changes',
  deploy: 'read the summary, add a comment if you like, then Deploy (or Hold)',
  'release-note': 'write the note (10 characters at least), tick the box if customers should hear of it, then Approve',
};
