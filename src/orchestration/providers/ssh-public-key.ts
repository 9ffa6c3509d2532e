import { createHash, createPublicKey } from 'node:crypto';
import { DomainError } from '../../common/errors/domain-error.js';

/** The key types the service imports (API.md 13): what both Nova and EC2 accept. */
export type SshKeyType = 'ssh-rsa' | 'ssh-ed25519';

/** An OpenSSH public key line, checked: its type, its key blob (wire format), and its comment. */
export interface SshPublicKey {
  readonly type: SshKeyType;
  /** The key blob (RFC 4253 section 6.6), as the base64 of the line decodes. */
  readonly blob: Buffer;
  /** RSA modulus size in bits; 256 for ed25519. */
  readonly bits: number;
  /** `<type> <base64>`, without the comment: what is sent to a cloud. */
  readonly line: string;
}

// Clouds refuse smaller RSA keys (EC2 takes 1024 to 4096 bits); OpenSSH itself refuses past 16384.
const MIN_RSA_BITS = 1024;
const MAX_RSA_BITS = 16384;
const MAX_LINE = 16 * 1024;

/**
 * Parses one OpenSSH public key line (`ssh-rsa AAAA… comment` or `ssh-ed25519 AAAA… comment`): the
 * base64 must decode to a key blob of the named type, with nothing left over, and the key must be a
 * usable one (an RSA modulus of 1024 to 16384 bits with an odd exponent; an ed25519 point of 32 bytes
 * that loads as a key). Throws DomainError 'invalid_input' naming what is wrong.
 */
export function parseSshPublicKey(text: string): SshPublicKey {
  const invalid = (why: string): DomainError =>
    new DomainError('invalid_input', `public_key is not an OpenSSH RSA or ed25519 public key: ${why}`, [
      { field: 'public_key', message: why },
    ]);
  const trimmed = text.trim();
  if (trimmed.length > MAX_LINE || /[\r\n]/.test(trimmed)) {
    throw invalid('expected one line');
  }
  const [type, data] = trimmed.split(/[ \t]+/);
  if (type !== 'ssh-rsa' && type !== 'ssh-ed25519') {
    throw invalid(`the type '${(type ?? '').slice(0, 40)}' is not ssh-rsa or ssh-ed25519`);
  }
  if (data === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) {
    throw invalid('the key data is not base64');
  }
  const blob = Buffer.from(data, 'base64');
  const reader = new WireReader(blob, invalid);
  if (reader.string().toString('latin1') !== type) {
    throw invalid('the key data is not of the type the line names');
  }
  let bits: number;
  if (type === 'ssh-rsa') {
    const e = reader.mpint();
    const n = reader.mpint();
    bits = bitLength(n);
    if (bits < MIN_RSA_BITS || bits > MAX_RSA_BITS) {
      throw invalid(`an RSA key of ${bits} bits (${MIN_RSA_BITS} to ${MAX_RSA_BITS} are accepted)`);
    }
    if (e.length === 0 || (e[e.length - 1] & 1) === 0 || (e.length === 1 && e[0] < 3)) {
      throw invalid('the RSA exponent is not an odd number of at least 3');
    }
    loads(() => createPublicKey({ key: { kty: 'RSA', n: base64url(n), e: base64url(e) }, format: 'jwk' }));
  } else {
    const point = reader.string();
    if (point.length !== 32) {
      throw invalid('an ed25519 key is 32 bytes');
    }
    bits = 256;
    loads(() => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: base64url(point) }, format: 'jwk' }));
  }
  if (!reader.done()) {
    throw invalid('the key data has bytes after the key');
  }
  return { type, blob, bits, line: `${type} ${data}` };

  function loads(load: () => unknown): void {
    try {
      load();
    } catch {
      throw invalid('the key does not load');
    }
  }
}

/** OpenSSH's own fingerprint: `SHA256:` and the unpadded base64 of the SHA-256 of the key blob. */
export function opensshFingerprint(key: SshPublicKey): string {
  return `SHA256:${createHash('sha256').update(key.blob).digest('base64').replace(/=+$/, '')}`;
}

/** The MD5 fingerprint of RFC 4716 section 4 (colon-separated hex), as Nova and EC2 show RSA keys. */
export function md5Fingerprint(key: SshPublicKey): string {
  return (createHash('md5').update(key.blob).digest('hex').match(/../g) ?? []).join(':');
}

/** Reads the SSH wire format (RFC 4251 section 5): uint32 length-prefixed strings. */
class WireReader {
  private offset = 0;

  constructor(
    private readonly data: Buffer,
    private readonly invalid: (why: string) => DomainError,
  ) {}

  string(): Buffer {
    if (this.offset + 4 > this.data.length) {
      throw this.invalid('the key data is cut short');
    }
    const length = this.data.readUInt32BE(this.offset);
    const start = this.offset + 4;
    if (length > this.data.length - start) {
      throw this.invalid('the key data is cut short');
    }
    this.offset = start + length;
    return this.data.subarray(start, this.offset);
  }

  /** A positive multiple-precision integer, without its sign byte. */
  mpint(): Buffer {
    const value = this.string();
    if (value.length > 0 && (value[0] & 0x80) !== 0) {
      throw this.invalid('a negative number in the key');
    }
    let start = 0;
    while (start < value.length && value[start] === 0) {
      start++;
    }
    return value.subarray(start);
  }

  done(): boolean {
    return this.offset === this.data.length;
  }
}

function bitLength(value: Buffer): number {
  return value.length === 0 ? 0 : (value.length - 1) * 8 + (32 - Math.clz32(value[0]));
}

function base64url(value: Buffer): string {
  return value.toString('base64url');
}
