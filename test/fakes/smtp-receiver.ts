import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A mail as the SMTP server received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body). */
  raw: string;
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) for the e-mail channel: it checks
 * the user and password, stores every mail it accepts, and can refuse mails for a while
 * (`refuse`: a 451, as a server with a full queue answers).
 */
export class SmtpReceiver {
  readonly mails: ReceivedMail[] = [];
  /** Mails refused while `refuse` was set. */
  refused = 0;
  refuse = false;
  private server?: SMTPServer;
  private port = 0;

  constructor(
    readonly username = 'mailer',
    readonly password = 'smtp-s3cret-password',
  ) {}

  /** `smtp://user:pass@127.0.0.1:<port>`: the SMTP_URL of the service under test. */
  get url(): string {
    return `smtp://${this.username}:${this.password}@127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const server = new SMTPServer({
      // Plain SMTP on loopback: no certificate to make, and AUTH is allowed without TLS.
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth: (auth, _session, callback) => {
        if (auth.username === this.username && auth.password === this.password) {
          callback(null, { user: auth.username });
        } else {
          callback(new Error('Invalid username or password'));
        }
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.refuse) {
            this.refused++;
            const error = Object.assign(new Error('Try again later'), { responseCode: 451 });
            callback(error);
            return;
          }
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
