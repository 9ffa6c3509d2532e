import { createTestApp, testDatabase } from '../support/create-test-app.js';

describe(`keys compared exactly, trailing spaces included (${testDatabase()})`, () => {
  it('keeps a username with a trailing space apart from the one without', async () => {
    const t = await createTestApp();
    try {
      const auth = { Authorization: `Bearer ${await t.login()}` };
      await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'trail', password: 'trail-password-1' })
        .expect(201);
      await t.http
        .post('/api/v1/users')
        .set(auth)
        .send({ username: 'trail ', password: 'trail-password-2' })
        .expect(201);
      await t.login('trail', 'trail-password-1');
      await t.login('trail ', 'trail-password-2');
      const padded = await t.http
        .post('/api/v1/auth')
        .send({ username: 'trail ', password: 'trail-password-1' });
      expect(padded.status).toBe(403);
    } finally {
      await t.close();
    }
  });
});
