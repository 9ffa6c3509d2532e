import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { OidcOp, signInAtOp } from '../fakes/oidc-op.js';
import { createTestApp, startApp, type TestApp } from '../support/create-test-app.js';
import { freePort } from '../support/mariadb-server.mjs';
import { cookieOf, finishSignIn, landingOf, startSignIn, writeProvidersFile } from '../support/sign-in.js';

const CLIENT = { client_id: 'workflow-service', client_secret: 'op-secret-of-the-copies-0123456789' };
/** Both copies behind one address, as a proxy in front of them gives it. */
const PUBLIC_BASE_URL = 'http://workflows.service.test';

/**
 * Two copies of the service on one MariaDB database (API.md 15): a sign-in started at one copy is
 * finished at the other, and a state taken by one is not taken again by the other.
 */
describe('sign-in across two copies of the service (mariadb)', () => {
  let first: TestApp;
  let second: NestExpressApplication;
  let secondHttp: ReturnType<typeof request>;
  let op: OidcOp;
  let file: { path: string; remove(): void };

  beforeAll(async () => {
    const opPort = await freePort();
    file = writeProvidersFile(`providers:
  op:
    type: oidc
    issuer: http://127.0.0.1:${opPort}
    client_id: ${CLIENT.client_id}
    client_secret: ${CLIENT.client_secret}
`);
    first = await createTestApp({ IDENTITY_PROVIDERS_FILE: file.path, PUBLIC_BASE_URL });
    second = await startApp(first.env);
    secondHttp = request(`http://127.0.0.1:${(second.getHttpServer().address() as AddressInfo).port}`);
    op = new OidcOp();
    await op.start({ ...CLIENT, redirect_uris: [`${PUBLIC_BASE_URL}/oauth2/authorized/op`] }, opPort);
  });

  afterAll(async () => {
    await second.close();
    await first.close();
    await op.stop();
    file.remove();
  });

  it('finishes at one copy a sign-in started at the other, once', async () => {
    const started = await startSignIn(first.http, 'op', '?next=%2Fstatus%2Faccount');
    const callback = await signInAtOp(started.location.toString(), 'op-copies');
    const finished = await finishSignIn(secondHttp, callback, started.state);
    expect(landingOf(finished)).toBe('/status/account');
    const session = cookieOf(finished.headers['set-cookie'], 'session')?.value ?? '';
    const me = await first.http.get('/users/current').set('Authorization', `Bearer ${session}`).expect(200);
    expect(me.body).toMatchObject({ username: 'op-copies', roles: ['user'] });
    const again = await finishSignIn(first.http, callback, started.state);
    expect(again.status).toBe(400);
    expect(again.text).toContain('was finished already or has expired');
  });
});
