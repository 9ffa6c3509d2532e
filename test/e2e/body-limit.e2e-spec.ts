import { createTestApp, type TestApp } from '../support/create-test-app.js';

describe('bodies that are not JSON', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers 413 in the area shape for any content type over 1 MiB', async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 'x');
    const auth = await t.http.post('/api/v1/auth').set('Content-Type', 'text/plain').send(big);
    expect(auth.status).toBe(413);
    expect(auth.body.error).toMatchObject({ code: 413 });
    const registry = await t.http
      .post('/users/current/workflows')
      .set('Content-Type', 'application/octet-stream')
      .send(big);
    expect(registry.status).toBe(413);
    expect(registry.body).toMatchObject({ status: 413, title: 'Payload Too Large' });
  });

  it('answers 400 for a small body that is not JSON', async () => {
    const response = await t.http
      .post('/api/v1/auth')
      .set('Content-Type', 'text/plain')
      .send('username=admin');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 400 });
  });
});
