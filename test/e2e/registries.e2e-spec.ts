import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SeekFake } from '../fakes/seek-fake.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { LinkServer } from '../fakes/link-server.js';
import { crateZip } from '../support/registry.js';
import { trsValidators } from '../support/trs.js';
import { RegistriesRepository } from '../../src/registries/registries.repository.js';
import { WorkflowsRepository } from '../../src/workflows/workflows.repository.js';

const SEEK_UUID = '86da0a30-d2cd-013a-a07d-000c29a94011';

interface Registry {
  uuid: string;
  client_id: string;
  client_secret: string;
}

describe('registries and their clients (API.md 10.1)', () => {
  let t: TestApp;
  let seek: SeekFake;
  let links: LinkServer;
  let admin: string;
  let registry: Registry;
  let nextId = 100;

  beforeAll(async () => {
    t = await createTestApp({
      AUTH_RATE_LIMIT: '5',
      DOWNLOAD_TIMEOUT_SECONDS: '2',
      MAX_CRATE_BYTES: '300000',
    });
    seek = new SeekFake();
    await seek.start();
    links = await LinkServer.start();
    admin = await t.login();
    registry = await createRegistry('workflowhub');
  });

  afterAll(async () => {
    await links.close();
    await seek.stop();
    await t.close();
  });

  afterEach(() => seek.heal());

  const createRegistry = async (name: string, type = 'seek'): Promise<Registry> => {
    const created = await t.http
      .post('/registries')
      .set('Authorization', `Bearer ${admin}`)
      .send({ name, type, uri: `${seek.url}/` });
    expect(created.status).toBe(201);
    return created.body as Registry;
  };

  const tokenFor = async (client: Registry, scope?: string): Promise<string> => {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    if (scope !== undefined) {
      form.set('scope', scope);
    }
    const reply = await t.http.post('/oauth2/token').type('form').send(form.toString());
    expect(reply.status).toBe(200);
    return (reply.body as { access_token: string }).access_token;
  };

  const seekWorkflow = (title: string, versions = [1], isPublic = true) =>
    seek.add({
      id: String(++nextId),
      uuid: `${SEEK_UUID.slice(0, 24)}${String(nextId).padStart(12, '0')}`,
      title,
      crates: new Map(
        versions.map((v) => [v, crateZip({ name: `${title} v${v}`, marker: `${nextId}-${v}` })]),
      ),
      public: isPublic,
    });

  /** Sends version 1 of a SEEK workflow to `path` with a registry token; the reply's status. */
  const send = async (token: string, path: string, workflow: { id: string }, isPublic?: boolean) =>
    (
      await t.http
        .post(path)
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: workflow.id, version: '1', public: isPublic })
    ).status;

  const rowCounts = async (): Promise<number[]> => {
    const data = t.app.get(DataSource);
    return Promise.all(
      ['workflows', 'workflow_versions', 'users'].map(async (table) =>
        Number((await data.query<{ n: number | string }[]>(`SELECT COUNT(*) AS n FROM ${table}`))[0].n),
      ),
    );
  };
  const tmpFiles = (): string[] => {
    try {
      return readdirSync(join(t.dataDir, 'tmp'));
    } catch {
      return [];
    }
  };

  describe('the registry itself', () => {
    it('is listed for anybody, without secrets', async () => {
      const list = await t.http.get('/registries');
      expect(list.status).toBe(200);
      const item = (list.body.items as Record<string, unknown>[]).find((r) => r.uuid === registry.uuid);
      expect(item).toEqual({ uuid: registry.uuid, name: 'workflowhub', type: 'seek', uri: seek.url });
      const one = await t.http.get(`/registries/${registry.uuid}`);
      expect(one.body).toEqual(item);
      expect(JSON.stringify(list.body)).not.toContain(registry.client_secret);
    });

    it('is made and revoked by admins only, with a 400 for a bad type or uri', async () => {
      const user = await t.userToken();
      const refused = await t.http
        .post('/registries')
        .set('Authorization', `Bearer ${user}`)
        .send({ name: 'x', type: 'seek', uri: 'https://x.org' });
      expect(refused.status).toBe(403);
      for (const [body, field] of [
        [{ name: 'x', type: 'gitlab', uri: 'https://x.org' }, 'type'],
        [{ name: 'x', type: 'seek', uri: 'ftp://x.org' }, 'uri'],
        [{ type: 'seek', uri: 'https://x.org' }, 'name'],
      ] as const) {
        const bad = await t.http.post('/registries').set('Authorization', `Bearer ${admin}`).send(body);
        expect(bad.status).toBe(400);
        expect(bad.body.errors[0].field).toBe(field);
      }
      const unknown = await t.http
        .delete('/registries/86da0a30-d2cd-013a-a07d-000c29a94099')
        .set('Authorization', `Bearer ${admin}`);
      expect(unknown.status).toBe(404);
      expect((await t.http.get('/registries/86da0a30-d2cd-013a-a07d-000c29a94099')).status).toBe(404);
      expect((await t.http.get('/registries/not-a-uuid')).status).toBe(400);
    });
  });

  describe('POST /oauth2/token (RFC 6749 4.4)', () => {
    it('issues a token for the body credentials, never to be cached, with every scope by default', async () => {
      const reply = await t.http.post('/oauth2/token').type('form').send({
        grant_type: 'client_credentials',
        client_id: registry.client_id,
        client_secret: registry.client_secret,
      });
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.body).toEqual({
        access_token: expect.stringMatching(/^wfr_[A-Za-z0-9_-]{43}$/),
        token_type: 'Bearer',
        expires_in: 3600,
        scope:
          'registry.info registry.user registry.workflow.read registry.workflow.write registry.user.workflow.read ' +
          'registry.user.workflow.write workflow.read workflow.write testingService.read testingService.write ' +
          'user.profile user.workflow.read',
      });
    });

    it('takes HTTP Basic client authentication and a subset of scopes', async () => {
      const basic = Buffer.from(`${registry.client_id}:${registry.client_secret}`).toString('base64');
      const reply = await t.http
        .post('/oauth2/token')
        .set('Authorization', `Basic ${basic}`)
        .type('form')
        .send('grant_type=client_credentials&scope=registry.info%20workflow.read');
      expect(reply.status).toBe(200);
      expect(reply.body.scope).toBe('registry.info workflow.read');
    });

    it.each([
      [
        'a wrong secret',
        (r: Registry) => `grant_type=client_credentials&client_id=${r.client_id}&client_secret=nope`,
        401,
        'invalid_client',
      ],
      [
        'an unknown client',
        () => 'grant_type=client_credentials&client_id=nobody&client_secret=nope',
        401,
        'invalid_client',
      ],
      ['no client authentication', () => 'grant_type=client_credentials', 401, 'invalid_client'],
      [
        'another grant type',
        (r: Registry) => `grant_type=password&client_id=${r.client_id}&client_secret=x`,
        400,
        'unsupported_grant_type',
      ],
      ['no grant type', (r: Registry) => `client_id=${r.client_id}&client_secret=x`, 400, 'invalid_request'],
      [
        'a parameter twice',
        (r: Registry) =>
          `grant_type=client_credentials&grant_type=client_credentials&client_id=${r.client_id}&client_secret=${r.client_secret}`,
        400,
        'invalid_request',
      ],
      [
        'an unknown scope',
        (r: Registry) =>
          `grant_type=client_credentials&client_id=${r.client_id}&client_secret=${r.client_secret}&scope=admin`,
        400,
        'invalid_scope',
      ],
    ])('refuses %s in RFC 6749 5.2 shape', async (_label, body, status, error) => {
      const reply = await t.http.post('/oauth2/token').type('form').send(body(registry));
      expect(reply.status).toBe(status);
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.body).toEqual({ error, error_description: expect.any(String) });
    });

    it('refuses a JSON body as invalid_request', async () => {
      const reply = await t.http.post('/oauth2/token').send({ grant_type: 'client_credentials' });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe('invalid_request');
    });
  });

  describe('a registry token', () => {
    it('is accepted by every carrier of a user token', async () => {
      const token = await tokenFor(registry);
      for (const set of [
        { Authorization: `Bearer ${token}` },
        { 'X-Auth-Token': token },
        { Cookie: `session=${token}` },
      ]) {
        const reply = await t.http.get('/registries/current').set(set);
        expect(reply.status).toBe(200);
        expect(reply.body.uuid).toBe(registry.uuid);
        expect(reply.headers['set-cookie']).toBeUndefined();
      }
    });

    it('acts only within its scopes: 403 insufficient_scope with the RFC 6750 challenge', async () => {
      const token = await tokenFor(registry, 'registry.info');
      expect((await t.http.get('/registries/current').set('Authorization', `Bearer ${token}`)).status).toBe(
        200,
      );
      const refused = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: '1', version: '1' });
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer error="insufficient_scope", scope="registry.workflow.write"',
      );
      expect(refused.body.detail).toMatch(/^insufficient_scope/);
    });

    it("reaches nothing of a person's: their lists and account routes are 403, their private workflows 404", async () => {
      const user = await t.userToken();
      const link = links.route(`/private-${nextId}.zip`, {
        kind: 'bytes',
        body: crateZip({ marker: 'private' }),
      });
      const mine = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${user}`)
        .send({ roc_link: link, version: '1' });
      expect(mine.status).toBe(201);
      const token = await tokenFor(registry);
      const as = (path: string) => t.http.get(path).set('Authorization', `Bearer ${token}`);
      expect((await as('/users/current/workflows')).status).toBe(403);
      expect((await as('/users/current')).status).toBe(403);
      expect((await as('/api/v1/users')).status).toBe(403);
      expect((await as(`/workflows/${mine.body.uuid}`)).status).toBe(404);
      expect((await as(`/workflows/${mine.body.uuid}/status`)).status).toBe(404);
      const put = await t.http
        .put(`/workflows/${mine.body.uuid}/versions/1`)
        .set('Authorization', `Bearer ${token}`)
        .send({ name: 'taken over' });
      expect(put.status).toBe(404);
      // A person's token cannot act as a registry either.
      expect((await t.http.get('/registries/current').set('Authorization', `Bearer ${user}`)).status).toBe(
        403,
      );
    });

    it('stops at once when its registry is deleted', async () => {
      const doomed = await createRegistry('doomed');
      const token = await tokenFor(doomed);
      expect((await t.http.get('/registries/current').set('Authorization', `Bearer ${token}`)).status).toBe(
        200,
      );
      const deleted = await t.http
        .delete(`/registries/${doomed.uuid}`)
        .set('Authorization', `Bearer ${admin}`);
      expect(deleted.status).toBe(204);
      const after = await t.http.get('/registries/current').set('Authorization', `Bearer ${token}`);
      expect(after.status).toBe(401);
    });

    it('leaves its name free: a registry made again under it has a client, accounts and users of its own', async () => {
      const old = await createRegistry('reborn');
      const oldToken = await tokenFor(old);
      const oldAuth = { Authorization: `Bearer ${oldToken}` };
      const own = seekWorkflow('sent by the old registry');
      const users = seekWorkflow("sent for the old registry's user 7");
      expect(await send(oldToken, '/registries/current/workflows', own)).toBe(201);
      expect(await send(oldToken, '/users/7/workflows', users)).toBe(201);
      const submitter = async (uuid: string) =>
        (await t.http.get(`/workflows/${uuid}/versions`).set('Authorization', `Bearer ${admin}`)).body
          .versions[0].submitter as { id: number; username: string };
      const oldUser7 = await submitter(users.uuid);
      expect(
        (await t.http.delete(`/registries/${old.uuid}`).set('Authorization', `Bearer ${admin}`)).status,
      ).toBe(204);

      const renewed = await createRegistry('reborn');
      expect(renewed.uuid).not.toBe(old.uuid);
      // The old client: its token and its credentials are refused.
      expect((await t.http.get('/registries/current').set(oldAuth)).status).toBe(401);
      const oldCredentials = await t.http.post('/oauth2/token').type('form').send({
        grant_type: 'client_credentials',
        client_id: old.client_id,
        client_secret: old.client_secret,
      });
      expect(oldCredentials.status).toBe(401);
      expect(oldCredentials.body.error).toBe('invalid_client');
      // The new client acts for the new registry, which has none of the old one's workflows or users.
      const token = await tokenFor(renewed);
      const auth = { Authorization: `Bearer ${token}` };
      expect((await t.http.get('/registries/current').set(auth)).body.uuid).toBe(renewed.uuid);
      expect((await t.http.get('/registries/current/workflows').set(auth)).body.items).toEqual([]);
      expect((await t.http.get('/users/7/workflows').set(auth)).body.items).toEqual([]);
      expect((await t.http.get('/registries/current/users').set(auth)).body.items).toEqual([]);
      expect((await t.http.get(`/workflows/${own.uuid}`).set(auth)).status).toBe(404);
      const again = seekWorkflow("sent for the new registry's user 7");
      expect(await send(token, '/users/7/workflows', again)).toBe(201);
      const newUser7 = await submitter(again.uuid);
      expect(newUser7.username).toBe('registry:reborn:7');
      expect(newUser7.id).not.toBe(oldUser7.id);
      expect(
        (await t.http.get('/users/7/workflows').set(auth)).body.items.map((i: { uuid: string }) => i.uuid),
      ).toEqual([again.uuid]);
      // The old registry's workflows stay, with no registry, owned by its accounts, renamed and disabled.
      const kept = await t.http.get(`/workflows/${users.uuid}`).set('Authorization', `Bearer ${admin}`);
      expect(kept.status).toBe(200);
      expect(kept.body.registry).toBeUndefined();
      const accounts = (await t.http.get('/api/v1/users').set('Authorization', `Bearer ${admin}`)).body
        .items as { id: number; username: string; active: boolean }[];
      expect(accounts.filter((a) => a.username.includes(old.uuid))).toEqual([
        expect.objectContaining({ username: `deleted-registry:${old.uuid}`, active: false }),
        { id: oldUser7.id, username: `deleted-registry:${old.uuid}:7`, roles: ['user'], active: false },
      ]);
    });

    it('is deleted whole or not at all: a name its accounts cannot take is a 409 that changes nothing', async () => {
      const kept = await createRegistry('kept whole');
      const token = await tokenFor(kept);
      const auth = { Authorization: `Bearer ${token}` };
      const workflow = seekWorkflow('for user 9 of a registry kept whole');
      expect(await send(token, '/users/9/workflows', workflow)).toBe(201);
      // Its user's account cannot be renamed: the registry, its own account's rename and its
      // workflows' unlinking, done before in the same transaction, are undone.
      const squatter = await t.http
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${admin}`)
        .send({ username: `deleted-registry:${kept.uuid}:9`, password: 'a long enough password' });
      expect(squatter.status).toBe(201);
      const refused = await t.http.delete(`/registries/${kept.uuid}`).set('Authorization', `Bearer ${admin}`);
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toContain(`deleted-registry:${kept.uuid}:9`);
      expect((await t.http.get(`/registries/${kept.uuid}`)).status).toBe(200);
      expect((await t.http.get('/registries/current').set(auth)).body.uuid).toBe(kept.uuid);
      expect((await t.http.get('/users/9/workflows').set(auth)).body.items).toHaveLength(1);
      expect((await t.http.get(`/workflows/${workflow.uuid}`).set(auth)).body.registry.uuid).toBe(kept.uuid);
      const names = (
        await t.http.get('/api/v1/users').set('Authorization', `Bearer ${admin}`)
      ).body.items.map((u: { username: string }) => u.username);
      expect(names).toEqual(expect.arrayContaining(['registry:kept whole', 'registry:kept whole:9']));
      expect(
        (await t.http.delete(`/api/v1/users/${squatter.body.id}`).set('Authorization', `Bearer ${admin}`))
          .status,
      ).toBe(204);
      expect(
        (await t.http.delete(`/registries/${kept.uuid}`).set('Authorization', `Bearer ${admin}`)).status,
      ).toBe(204);
    });
    // The window between a request's check of its token and its writes: the registry is deleted in it.
    it('deleted while one of its requests writes (or the account it writes for): that request is a 404, not a database error', async () => {
      const gone = await createRegistry('gone mid-request');
      const [row] = await t.app
        .get(DataSource)
        .query<{ id: number | string }[]>('SELECT id FROM registries WHERE uuid = ?', [gone.uuid]);
      const [account] = await t.app
        .get(DataSource)
        .query<{ id: number | string }[]>('SELECT id FROM users WHERE username = ?', ['admin']);
      expect(
        (await t.http.delete(`/registries/${gone.uuid}`).set('Authorization', `Bearer ${admin}`)).status,
      ).toBe(204);
      const identity = t.app
        .get(RegistriesRepository, { strict: false })
        .addIdentity(Number(row.id), Number(account.id), '5');
      await expect(identity).rejects.toMatchObject({
        kind: 'not_found',
        message: 'The registry was deleted meanwhile',
      });
      // The account a registration is for (a registry's user's, say) deleted meanwhile.
      const version = t.app.get(WorkflowsRepository, { strict: false }).saveVersion({
        workflowUuid: randomUUID(),
        ownerId: Number(account.id) + 1_000_000,
        version: '1',
        name: 'registered for an account deleted meanwhile',
        rocLink: 'https://seek.example.org/workflows/5/ro_crate?version=1',
        archiveSha256: '0'.repeat(64),
        archiveSize: 1,
        suites: [],
        issues: [],
        now: new Date(),
      });
      await expect(version).rejects.toMatchObject({
        kind: 'not_found',
        message: 'The account registering it was deleted meanwhile',
      });
    });
  });

  describe('registering from SEEK (POST /registries/current/workflows)', () => {
    it("registers the registry's workflow under its uuid, with the registry and its page in every read", async () => {
      const workflow = seekWorkflow('Concat two files');
      const token = await tokenFor(registry);
      const auth = { Authorization: `Bearer ${token}` };
      const reply = await t.http
        .post('/registries/current/workflows')
        .set(auth)
        .send({ identifier: workflow.id, version: '1', public: true });
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual({ uuid: workflow.uuid, name: 'Concat two files', wf_version: '1' });
      const origin = `${seek.url}/workflows/${workflow.id}?version=1`;
      const registryRef = { uuid: registry.uuid, name: 'workflowhub', type: 'seek', uri: seek.url };
      const read = await t.http.get(`/workflows/${workflow.uuid}`).set(auth);
      expect(read.status).toBe(200);
      expect(read.body.registry).toEqual(registryRef);
      expect(read.body.version.links).toEqual({ origin });
      expect(read.body.version.ro_crate.links.origin).toBe(origin);
      const versions = await t.http.get(`/workflows/${workflow.uuid}/versions`).set(auth);
      expect(versions.body.registry).toEqual(registryRef);
      expect(versions.body.versions[0].links).toEqual({ origin });
      const status = await t.http.get(`/workflows/${workflow.uuid}/status`).set(auth);
      expect(status.body.registry).toEqual(registryRef);
      expect(status.body.version.links).toEqual({ origin });
      // The same reads for anybody: the workflow is public.
      expect((await t.http.get(`/workflows/${workflow.uuid}`)).body.registry).toEqual(registryRef);
    });

    it('answers 404 for an identifier the registry does not have, and registers nothing', async () => {
      const token = await tokenFor(registry);
      const before = await rowCounts();
      const reply = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: '999999', version: '1' });
      expect(reply.status).toBe(404);
      expect(reply.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(await rowCounts()).toEqual(before);
    });

    it.each([
      ['down (connection reset)', 'reset', 502],
      ['slow (no answer in time)', 'hang', 504],
      ['answering 500', 'status', 502],
    ] as const)(
      'SEEK %s: a bounded %s, nothing registered, nothing on disk',
      async (_label, kind, status) => {
        const workflow = seekWorkflow(`faulty ${kind}`);
        const token = await tokenFor(registry);
        const before = await rowCounts();
        for (const path of [new RegExp(`^/workflows/${workflow.id}$`), /\/ro_crate$/]) {
          seek.heal();
          seek.fail(kind === 'status' ? { kind, status: 500 } : { kind }, path);
          const reply = await t.http
            .post('/registries/current/workflows')
            .set('Authorization', `Bearer ${token}`)
            .send({ identifier: workflow.id, version: '1' });
          expect(reply.status).toBe(status);
          expect(reply.body).toEqual({
            type: 'about:blank',
            title: expect.any(String),
            status,
            detail: expect.stringContaining('workflowhub'),
          });
        }
        expect(await rowCounts()).toEqual(before);
        expect(tmpFiles()).toEqual([]);
      },
    );

    it('SEEK answering garbage or a huge crate: 502, nothing registered, nothing on disk', async () => {
      const token = await tokenFor(registry);
      const before = await rowCounts();
      const garbage = seekWorkflow('garbage');
      seek.fail(
        { kind: 'status', status: 200, body: 'not JSON:API' },
        new RegExp(`^/workflows/${garbage.id}$`),
      );
      const notJsonApi = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: garbage.id, version: '1' });
      expect(notJsonApi.status).toBe(502);
      seek.heal();
      garbage.crates.set(1, Buffer.from('<html>not a zip</html>'));
      const notZip = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: garbage.id, version: '1' });
      expect(notZip.status).toBe(502);
      garbage.crates.set(1, Buffer.alloc(400_000, 1));
      const huge = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send({ identifier: garbage.id, version: '1' });
      expect(huge.status).toBe(502);
      expect(huge.body.detail).toMatch(/larger than/);
      expect(await rowCounts()).toEqual(before);
      expect(tmpFiles()).toEqual([]);
    });

    it.each([
      [{ version: '1' }, 'identifier'],
      [{ identifier: 7, version: '1' }, 'identifier'],
      [{ identifier: '../x', version: '1' }, 'identifier'],
      [{ identifier: '7' }, 'version'],
      [{ identifier: '7', version: 1 }, 'version'],
      [{ identifier: '7', version: '1', public: 'yes' }, 'public'],
    ])('refuses %j with a 400 naming %s', async (body, field) => {
      const token = await tokenFor(registry);
      const reply = await t.http
        .post('/registries/current/workflows')
        .set('Authorization', `Bearer ${token}`)
        .send(body);
      expect(reply.status).toBe(400);
      expect(reply.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });
  });

  describe("the registry's users", () => {
    it('registers for a registry user under one local identity made on first use, listed as a registry user', async () => {
      const token = await tokenFor(registry);
      const auth = { Authorization: `Bearer ${token}` };
      const first = seekWorkflow('for user 7');
      const second = seekWorkflow('again for user 7');
      for (const workflow of [first, second]) {
        const reply = await t.http
          .post('/users/7/workflows')
          .set(auth)
          .send({ identifier: workflow.id, version: '1' });
        expect(reply.status).toBe(201);
      }
      const list = await t.http.get('/users/7/workflows').set(auth);
      expect(list.status).toBe(200);
      expect(list.body.items.map((i: { uuid: string }) => i.uuid).sort()).toEqual(
        [first.uuid, second.uuid].sort(),
      );
      const versions = await t.http.get(`/workflows/${first.uuid}/versions`).set(auth);
      const owner = versions.body.versions[0].submitter;
      expect(owner.username).toBe('registry:workflowhub:7');
      const users = await t.http.get('/registries/current/users').set(auth);
      expect(users.body.items).toContainEqual({
        id: owner.id,
        username: owner.username,
        identities: { workflowhub: { sub: '7' } },
      });
      expect((await t.http.get('/users/8/workflows').set(auth)).body.items).toEqual([]);
    });
  });

  describe('in GA4GH TRS (API.md 10.2)', () => {
    it("shows the registry's name as the organization of what it sent, and finds them by it", async () => {
      const validate = trsValidators();
      const token = await tokenFor(registry);
      const own = seekWorkflow('a TRS tool of the registry');
      const users = seekWorkflow("a TRS tool of the registry's user 12");
      expect(await send(token, '/registries/current/workflows', own, true)).toBe(201);
      expect(await send(token, '/users/12/workflows', users, true)).toBe(201);
      for (const workflow of [own, users]) {
        const tool = await t.http.get(`/ga4gh/trs/v2/tools/${workflow.uuid}`);
        expect(tool.status).toBe(200);
        expect(validate('Tool', tool.body)).toEqual([]);
        expect(tool.body.organization).toBe('workflowhub');
      }
      const listed = await t.http.get('/ga4gh/trs/v2/tools?organization=workflowhub&limit=1000');
      expect(validate('Tool[]', listed.body)).toEqual([]);
      const ids = (listed.body as { id: string; organization: string }[]).map((tool) => tool.id);
      expect(ids).toEqual(expect.arrayContaining([own.uuid, users.uuid]));
      expect(new Set((listed.body as { organization: string }[]).map((tool) => tool.organization))).toEqual(
        new Set(['workflowhub']),
      );
      // Its accounts' names are not what the tools show: they find none of them.
      for (const account of ['registry:workflowhub', 'registry:workflowhub:12']) {
        const byAccount = await t.http.get(`/ga4gh/trs/v2/tools?organization=${encodeURIComponent(account)}`);
        expect(byAccount.status).toBe(200);
        expect(byAccount.body).toEqual([]);
      }
    });

    it('lists for the registry’s own token what it sent privately, which nobody else sees', async () => {
      const validate = trsValidators();
      const token = await tokenFor(registry);
      const secret = seekWorkflow('a private TRS tool of the registry');
      expect(await send(token, '/registries/current/workflows', secret, false)).toBe(201);
      // The whole list, and a search (by the organization the tools show).
      const listedFor = async (auth: Record<string, string>): Promise<string[]> => {
        const found: string[][] = [];
        for (const query of ['limit=1000', 'organization=workflowhub&limit=1000']) {
          const reply = await t.http.get(`/ga4gh/trs/v2/tools?${query}`).set(auth);
          expect(reply.status).toBe(200);
          expect(validate('Tool[]', reply.body)).toEqual([]);
          found.push((reply.body as { id: string }[]).map((tool) => tool.id));
        }
        const [all, searched] = found;
        expect(searched.filter((id) => !all.includes(id))).toEqual([]);
        return all.includes(secret.uuid) === searched.includes(secret.uuid) ? all : ['lists disagree'];
      };
      expect(await listedFor({ Authorization: `Bearer ${token}` })).toContain(secret.uuid);
      const read = await t.http
        .get(`/ga4gh/trs/v2/tools/${secret.uuid}`)
        .set('Authorization', `Bearer ${token}`);
      expect(read.status).toBe(200);
      expect(await listedFor({})).not.toContain(secret.uuid);
      const other = await tokenFor(await createRegistry('another registry'));
      expect(await listedFor({ Authorization: `Bearer ${other}` })).not.toContain(secret.uuid);
      expect(await listedFor({ Authorization: `Bearer ${await t.userToken()}` })).not.toContain(secret.uuid);
      // Without workflow.read: refused in TRS's own error shape.
      const narrow = await tokenFor(registry, 'registry.info');
      const refused = await t.http.get('/ga4gh/trs/v2/tools').set('Authorization', `Bearer ${narrow}`);
      expect(refused.status).toBe(403);
      expect(validate('Error', refused.body)).toEqual([]);
      expect(refused.body).toMatchObject({ code: 403 });
    });
  });

  describe('a user linked to a registry', () => {
    it('reads its index and registers from it with their personal token, stored encrypted', async () => {
      const user = await t.userToken();
      const auth = { Authorization: `Bearer ${user}` };
      const hidden = seekWorkflow('private in SEEK', [1, 2], false);
      seek.personalTokens.add('alice-seek-token');
      const unlinked = await t.http.get(`/registries/${registry.uuid}/index`).set(auth);
      expect(unlinked.status).toBe(403);
      const linked = await t.http
        .put(`/users/current/registries/${registry.uuid}`)
        .set(auth)
        .send({ token: 'alice-seek-token' });
      expect(linked.status).toBe(204);
      const data = t.app.get(DataSource);
      const stored = await data.query<{ token_sealed: string }[]>(
        'SELECT token_sealed FROM registry_identities WHERE token_sealed IS NOT NULL',
      );
      expect(stored.length).toBeGreaterThan(0);
      expect(JSON.stringify(stored)).not.toContain('alice-seek-token');
      const index = await t.http.get(`/registries/${registry.uuid}/index`).set(auth);
      expect(index.status).toBe(200);
      expect(index.body.items).toContainEqual(
        expect.objectContaining({ identifier: hidden.id, name: 'private in SEEK' }),
      );
      const one = await t.http.get(`/registries/${registry.uuid}/index/${hidden.id}`).set(auth);
      expect(one.body).toMatchObject({
        identifier: hidden.id,
        uuid: hidden.uuid,
        latest_version: '2',
        versions: ['1', '2'],
        links: { origin: `${seek.url}/workflows/${hidden.id}` },
      });
      const posted = await t.http
        .post(`/registries/${registry.uuid}/workflows`)
        .set(auth)
        .send({ identifier: hidden.id, version: '2' });
      expect(posted.status).toBe(201);
      const mine = await t.http.get(`/registries/${registry.uuid}/workflows`).set(auth);
      expect(mine.body.items.map((i: { uuid: string }) => i.uuid)).toEqual([hidden.uuid]);
      expect(seek.personalTokens.has('alice-seek-token')).toBe(true);
      expect(
        (await t.http.get(`/registries/86da0a30-d2cd-013a-a07d-000c29a94099/workflows`).set(auth)).status,
      ).toBe(404);
    });
  });

  describe('PUT /suites/{uuid} (suites-put)', () => {
    it('renames a suite for its owner, 403 for another user of a public workflow, 400 for a bad name', async () => {
      const owner = await t.userToken();
      const link = links.route(`/suite-${nextId}.zip`, {
        kind: 'bytes',
        body: crateZip({ marker: 'suites' }),
      });
      const made = await t.http
        .post('/users/current/workflows')
        .set('Authorization', `Bearer ${owner}`)
        .send({ roc_link: link, version: '1', public: true });
      const suites = await t.http
        .get(`/workflows/${made.body.uuid}/suites`)
        .set('Authorization', `Bearer ${owner}`);
      const suite = suites.body.items[0].uuid as string;
      const renamed = await t.http
        .put(`/suites/${suite}`)
        .set('Authorization', `Bearer ${owner}`)
        .send({ name: 'renamed suite' });
      expect(renamed.status).toBe(204);
      expect((await t.http.get(`/suites/${suite}`)).body.name).toBe('renamed suite');
      const other = await t.userToken();
      expect(
        (await t.http.put(`/suites/${suite}`).set('Authorization', `Bearer ${other}`).send({ name: 'x' }))
          .status,
      ).toBe(403);
      expect(
        (await t.http.put(`/suites/${suite}`).set('Authorization', `Bearer ${owner}`).send({ name: '' }))
          .status,
      ).toBe(400);
    });
  });
});

describe('failed client authentications (API.md 10.1)', () => {
  it('are limited like failed logins, per client and per address: 429 with Retry-After', async () => {
    const t = await createTestApp({ AUTH_RATE_LIMIT: '3' });
    try {
      const admin = await t.login();
      const created = await t.http
        .post('/registries')
        .set('Authorization', `Bearer ${admin}`)
        .send({ name: 'limited', type: 'other', uri: 'https://registry.example.org' });
      const client = created.body as { client_id: string; client_secret: string };
      const wrong = `grant_type=client_credentials&client_id=${client.client_id}&client_secret=wrong`;
      for (let i = 0; i < 3; i++) {
        expect((await t.http.post('/oauth2/token').type('form').send(wrong)).status).toBe(401);
      }
      const limited = await t.http
        .post('/oauth2/token')
        .type('form')
        .send(
          `grant_type=client_credentials&client_id=${client.client_id}&client_secret=${client.client_secret}`,
        );
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['cache-control']).toBe('no-store');
      expect(limited.body.error).toBe('temporarily_unavailable');
      // The same budget as logins: the address is spent for passwords too.
      expect((await t.http.post('/api/v1/auth').send({ username: 'admin', password: 'wrong' })).status).toBe(
        429,
      );
    } finally {
      await t.close();
    }
  });
});
