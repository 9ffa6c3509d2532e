import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_MARK } from './token-carriers.js';

/** Random bytes of a key: 256 bits, beyond any guessing, which is why a fast hash is enough (below). */
const KEY_BYTES = 32;
/** The mark and the first 8 random characters (48 bits): shown in listings and used to find the row. */
export const API_KEY_PREFIX_LENGTH = API_KEY_MARK.length + 8;
const KEY_SHAPE = new RegExp(`^${API_KEY_MARK}[A-Za-z0-9_-]{43}$`);

export interface NewApiKey {
  key: string;
  prefix: string;
}

/** A new key: the mark, then 32 random bytes in base64url (43 characters). */
export function generateApiKey(): NewApiKey {
  const key = `${API_KEY_MARK}${randomBytes(KEY_BYTES).toString('base64url')}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX_LENGTH) };
}

/** The prefix to look a presented key up by; undefined when it cannot be a key of ours. */
export function prefixOf(key: string): string | undefined {
  return KEY_SHAPE.test(key) ? key.slice(0, API_KEY_PREFIX_LENGTH) : undefined;
}

/**
 * Hashes API keys with HMAC-SHA256 under a server-side secret (the pepper), and compares in
 * constant time.
 *
 * Why not scrypt or argon2 as for passwords: a slow hash protects low-entropy secrets, whose
 * guesses can be tried one by one against a stolen hash. A key has 256 random bits; no number
 * of guesses finds it, slow or fast. A slow hash would only cost every request that carries a
 * key tens of milliseconds of CPU (scrypt here: ~65 ms), which is a denial of service waiting to
 * happen. The pepper, derived from JWT_SECRET and never stored in the database, means a copy of
 * the database alone cannot even confirm a key.
 */
export class ApiKeyHasher {
  private readonly pepper: Buffer;

  /** `purpose` gives each kind of secret hashed this way a pepper of its own (API keys, registry clients). */
  constructor(serverSecret: string, purpose = 'api-key hashing v1') {
    // A key of its own, so that the hashes are not HMACs under the very key that signs tokens.
    this.pepper = createHmac('sha256', serverSecret).update(purpose).digest();
  }

  /** Hex HMAC-SHA256 of the key. */
  hash(key: string): string {
    return createHmac('sha256', this.pepper).update(key, 'utf8').digest('hex');
  }

  /** True when `key` hashes to `storedHex`; the comparison takes the same time wherever they differ. */
  matches(key: string, storedHex: string): boolean {
    const presented = Buffer.from(this.hash(key), 'hex');
    const stored = Buffer.from(storedHex, 'hex');
    return stored.length === presented.length && timingSafeEqual(presented, stored);
  }
}
