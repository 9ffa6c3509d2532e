import { ApiKeyHasher, API_KEY_PREFIX_LENGTH, generateApiKey, prefixOf } from './api-key-secrets.js';

describe('API key secrets', () => {
  it('makes distinct keys of 256 random bits whose prefix is their first 12 characters', () => {
    const keys = Array.from({ length: 50 }, generateApiKey);
    expect(new Set(keys.map((made) => made.key)).size).toBe(50);
    for (const { key, prefix } of keys) {
      expect(key).toMatch(/^wfk_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32);
      expect(prefix).toBe(key.slice(0, API_KEY_PREFIX_LENGTH));
      expect(prefixOf(key)).toBe(prefix);
    }
  });

  it('finds no prefix in what cannot be a key', () => {
    for (const text of [
      '',
      'wfk_',
      'wfk_short',
      `wfk_${'a'.repeat(44)}`,
      `xyz_${'a'.repeat(43)}`,
      `wfk_${'a'.repeat(42)}!`,
    ]) {
      expect(prefixOf(text)).toBeUndefined();
    }
  });

  it('matches a key against its hash only, under the same server secret', () => {
    const { key } = generateApiKey();
    const hasher = new ApiKeyHasher('server-secret-one');
    const stored = hasher.hash(key);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toContain(key);
    expect(hasher.matches(key, stored)).toBe(true);
    expect(hasher.matches(generateApiKey().key, stored)).toBe(false);
    expect(hasher.matches(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, stored)).toBe(false);
    expect(new ApiKeyHasher('server-secret-two').matches(key, stored)).toBe(false);
    expect(hasher.matches(key, 'abcd')).toBe(false);
  });
});
