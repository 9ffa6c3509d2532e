import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { OidcOp, signInAtOp } from '../fakes/oidc-op.js';
import { baseTestEnv, createTestDatabase, testDatabase } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { startServiceProcess } from '../support/service-process.js';
import { cookieOf, finishSignIn, startSignIn, writeProvidersFile } from '../support/sign-in.js';

const CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-never-logged-0123456789' };

/**
 * The built service's logs through sign-ins that succeed and fail (API.md 15): no code, state,
 * token of the provider, session token or client secret in any line.
 */
describe(`sign-in logs of the built service (${testDatabase()})`, () => {
  it('never logs a code, state, token or secret', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sign-in-logs-'));
    const database = await createTestDatabase(dataDir);
    const [opPort, port] = [await freePort(), await freePort()];
    const file = writeProvidersFile(`providers:
  op:
    type: oidc
    issuer: http://127.0.0.1:${opPort}
    client_id: ${CLIENT.client_id}
    client_secret: \${OP_SECRET}
`);
    const op = new OidcOp();
    await op.start({ ...CLIENT, redirect_uris: [`http://127.0.0.1:${port}/oauth2/authorized/op`] }, opPort);
    const service = await startServiceProcess({
      ...baseTestEnv(dataDir, database.url),
      NODE_ENV: 'production',
      LOG_LEVEL: 'debug',
      PORT: String(port),
      IDENTITY_PROVIDERS_FILE: file.path,
      OP_SECRET: CLIENT.client_secret,
    });
    const http = request(service.url);
    const secrets: string[] = [CLIENT.client_secret];
    try {
      const flow = async (login: string) => {
        const started = await startSignIn(http, 'op');
        const callback = await signInAtOp(started.location.toString(), login);
        secrets.push(started.state, callback.searchParams.get('code') ?? 'no code');
        return { started, callback };
      };
      const signedIn = await flow('op-logged');
      const reply = await finishSignIn(http, signedIn.callback, signedIn.started.state).expect(200);
      secrets.push(cookieOf(reply.headers['set-cookie'], 'session')?.value ?? 'no session');
      // A state taken already, a code used twice, a spoilt ID token, a refusal at the provider.
      await finishSignIn(http, signedIn.callback, signedIn.started.state).expect(400);
      const replay = await startSignIn(http, 'op');
      const replayed = new URL(signedIn.callback);
      replayed.searchParams.set('state', replay.state);
      secrets.push(replay.state);
      await finishSignIn(http, replayed, replay.state).expect(403);
      op.tamper = 'foreign-key';
      const spoilt = await flow('op-spoilt');
      await finishSignIn(http, spoilt.callback, spoilt.started.state).expect(502);
      op.tamper = undefined;
      const declined = await startSignIn(http, 'op');
      secrets.push(declined.state);
      const back = await signInAtOp(declined.location.toString(), 'op-declines', { abort: true });
      await finishSignIn(http, back, declined.state).expect(403);
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
      await op.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
      file.remove();
    }
    // The provider's tokens, from its answers that carried them (not its refusal of the used code).
    for (const answer of op.tokenAnswers) {
      const tokens = JSON.parse(answer) as { access_token?: string; id_token?: string };
      if (tokens.access_token && tokens.id_token) {
        secrets.push(tokens.access_token, tokens.id_token, tokens.id_token.split('.')[2]);
      }
    }
    expect(op.tokenAnswers.length).toBe(3);
    const output = service.output();
    expect(output).toContain('/oauth2/authorized/op?code=[Redacted]&state=[Redacted]');
    expect(secrets.length).toBeGreaterThan(10);
    expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
  }, 120_000);
});
