import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encrypts short secrets for storage with AES-256-GCM under a key derived (HKDF-SHA256) from a
 * server secret and a purpose, so that each kind of sealed value has a key of its own. A sealed
 * value is `iv.tag.ciphertext` in base64url; one sealed under another secret, or altered, does
 * not open.
 */
export class SealedBox {
  private readonly key: Buffer;

  constructor(secret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, '', purpose, 32));
  }

  seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
  }

  /** The text of a sealed value, or undefined when it cannot be opened (another secret, altered). */
  unseal(sealed: string): string | undefined {
    const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
    if (!iv || !tag || !body) {
      return undefined;
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
