import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotificationReceiver } from '../../../test/fakes/notification-receiver.js';
import { SmtpReceiver } from '../../../test/fakes/smtp-receiver.js';
import { loadConfig, type AppConfig } from '../../config/app-config.js';
import { ChannelEntity } from '../entities/channel.entity.js';
import type { DeliveryPayload } from './channel-sender.js';
import { Clock } from '../../common/clock.js';
import { UnsubscribeLinks } from '../unsubscribe-links.js';
import { EmailSender } from './email-sender.js';
import { SlackSender } from './http-sender.js';

/** Where a person can read the mail the test received (test-results/ is not committed). */
const MAILS = 'test-results/mails';
const HOSTILE = '<!channel> <https://evil.example|re-run here> & \u202Egnp.exe';

function payload(name: string): DeliveryPayload {
  return {
    deliveryUuid: '5b0c7a52-8d0e-4f43-9a57-2f0d3c1b9e01',
    event: 'BUILD_FAILED',
    statusUrl: 'https://status.example.org/status/0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11',
    baseUrl: 'https://status.example.org',
    notification: {
      uuid: '2d7b1f4e-1c7a-4f0e-8d7e-0c3b5a1e9f22',
      created: '1764150000',
      read: null,
      emailed: null,
      event: 'BUILD_FAILED',
      data: {
        workflow: { uuid: '0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11', name, version: '1.1' },
        instance: { uuid: '7f3e2a1b-0c9d-4e8f-a7b6-c5d4e3f2a1b0', name: 'ubuntu\u2067-latest' },
        build: {
          build_id: '9876543210_1',
          status: 'failed',
          timestamp: '1764149400',
          links: { origin: 'https://github.com/org/rnaseq/actions/runs/9876543210' },
        },
      },
    },
  };
}

function channel(fields: Partial<ChannelEntity>): ChannelEntity {
  return Object.assign(new ChannelEntity(), {
    id: 42,
    userId: 7,
    events: '["ALL"]',
    secret: null,
    ...fields,
  });
}

/** A quoted-printable body as text (soft line breaks joined, =XX decoded as UTF-8). */
function unquote(body: string): string {
  const joined = body.replace(/=\r?\n/g, '');
  const bytes = joined.replace(/=([0-9A-F]{2})/g, (_match, hex: string) => `%${hex}`);
  return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/g, '%25'));
}

describe('channel senders: what Slack and e-mail show of hostile names, and how a mail reads', () => {
  let dataDir: string;
  let slack: NotificationReceiver;
  let smtp: SmtpReceiver;
  let config: AppConfig;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'senders-'));
    slack = await new NotificationReceiver().start();
    smtp = await new SmtpReceiver().start();
    config = loadConfig({
      DATA_DIR: dataDir,
      JWT_SECRET: 'x'.repeat(40),
      ALLOW_PRIVATE_NETWORK_LINKS: 'true',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'ci-bot@example.org',
      UPSTREAM_TIMEOUT_SECONDS: '2',
    });
  });

  afterAll(async () => {
    await Promise.all([slack.stop(), smtp.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("escapes &, < and > in Slack text as Slack's formatting rules say, and drops bidi controls", async () => {
    const outcome = await new SlackSender(config).send(
      channel({ type: 'slack', target: `${slack.url}/services/T0/B0/x` }),
      payload(HOSTILE),
    );
    expect(outcome).toMatchObject({ sent: true });
    const { text } = JSON.parse(slack.requests[0].body) as { text: string };
    expect(text).not.toMatch(/[<>]/);
    expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
    expect(text).toContain(
      '[&lt;!channel&gt; &lt;https://evil.example|re-run here&gt; &amp; gnp.exe] BUILD_FAILED: workflow',
    );
    expect(text).toContain('instance "ubuntu-latest"');
    expect(text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F]/);
  });

  it('sends a plain-text mail, one fact a line, with a subject that cannot reorder itself', async () => {
    const outcome = await new EmailSender(config, new UnsubscribeLinks(config), new Clock()).send(
      channel({ type: 'email', target: 'alice@example.org' }),
      payload(`RNA-seq \u202Eevil`),
    );
    expect(outcome).toMatchObject({ sent: true, statusCode: 250 });
    const raw = smtp.mails[0].raw;
    mkdirSync(MAILS, { recursive: true });
    writeFileSync(join(MAILS, 'notification.eml'), raw);
    const [head, ...rest] = raw.split(/\r?\n\r?\n/);
    expect(head).toMatch(/^Subject: \[RNA-seq evil\] BUILD_FAILED$/m);
    expect(head).toMatch(/^Content-Type: text\/plain; charset=utf-8$/m);
    const body = /^Content-Transfer-Encoding: quoted-printable$/m.test(head)
      ? unquote(rest.join('\n\n'))
      : rest.join('\n\n');
    const lines = body.split(/\r?\n/);
    expect(lines.slice(0, 10)).toEqual([
      'BUILD_FAILED: A test build failed after one had passed.',
      '',
      'Workflow:    RNA-seq evil',
      'Version:     1.1',
      'Instance:    ubuntu-latest',
      'Status:      failed (build 9876543210_1)',
      'When:        2025-11-26 09:30 UTC',
      'CI run:      https://github.com/org/rnaseq/actions/runs/9876543210',
      'Status page: https://status.example.org/status/0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11',
      '',
    ]);
    expect(body).toContain(
      'POST https://status.example.org/workflows/0b7e0f0e-3f5d-4d7a-9a55-3c9a3f0d2c11/unsubscribe',
    );
    expect(body).toContain('DELETE https://status.example.org/users/current/channels/42');
    // Header fields may be folded (RFC 5322 2.2.3): unfolded before they are read.
    const fields = head.replace(/\r?\n[ \t]+/g, ' ');
    const link = /^List-Unsubscribe: <(https:\/\/status\.example\.org\/unsubscribe\/[\w-]+\.[\w-]+)>$/m.exec(
      fields,
    )?.[1];
    expect(link).toBeDefined();
    expect(fields).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(lines[lines.findIndex((line) => line.endsWith('unsubscribe here:')) + 1]).toBe(`  ${link}`);
    expect(body).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
  });

  it('names the failure class and reason of a BUILD_FAILED in Slack and in the mail (API.md 16)', async () => {
    const classified = payload('RNA-seq');
    const build = classified.notification.data.build;
    if (build) {
      build.failure = { class: 'infrastructure', reason: 'no space left on the runner', evidence: [] };
    }
    const before = slack.requests.length;
    await new SlackSender(config).send(
      channel({ type: 'slack', target: `${slack.url}/services/T0/B0/x` }),
      classified,
    );
    const { text } = JSON.parse(slack.requests[before].body) as { text: string };
    expect(text).toContain('build 9876543210_1 failed [infrastructure: no space left on the runner]');
    const mails = smtp.mails.length;
    await new EmailSender(config, new UnsubscribeLinks(config), new Clock()).send(
      channel({ type: 'email', target: 'alice@example.org' }),
      classified,
    );
    const [head, ...rest] = smtp.mails[mails].raw.split(/\r?\n\r?\n/);
    const body = /^Content-Transfer-Encoding: quoted-printable$/m.test(head)
      ? unquote(rest.join('\n\n'))
      : rest.join('\n\n');
    expect(body).toMatch(/^Failure: +infrastructure: no space left on the runner\r?$/m);
  });
});
