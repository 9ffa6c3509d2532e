import { DomainError } from '../../common/errors/domain-error.js';
import { md5Fingerprint, opensshFingerprint, parseSshPublicKey } from './ssh-public-key.js';

// Both made by OpenSSH's ssh-keygen; the fingerprints are what `ssh-keygen -l` (and `-E md5`) print.
const ED25519 =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIBVerHUpq8fxlV8zVrDX3GrdEkpWYEndjJ+/kAzNAau alice@laptop';
const RSA =
  'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCzGFYF3MDx/Y/UPvgmrf1R44JuQA0FLlcrJrvVPtzY/HVtX6GukG1cF3+OGtotU5kIfM7SU6qqpIqoqCa7a0JnlxPDBIZDjBPOSw+9MFfm3VksFyDHpDbi8+xinoW9qsnt8N1EzJtuvMDFn20wg+zgzVUQUd+2tOKDjtgGWNMgIoJaH3TUkNmKsaff2QqEN+NA1p3RF9lLNABsRYiMmH+t4hDGe+tAol4hhNfAMD93lwLFkyJ9AI/ZwAIIf+Pey7ySQrok7Tq+bqaXdDYTN9XFaZmhAP5IW8gVrmfH9xfD8BcfkQoGILjFAnLPXXI9l9IG5jURkuCNP4sZAV/9IRed bob';

describe('parseSshPublicKey', () => {
  it('reads an ed25519 key and gives the fingerprint ssh-keygen prints', () => {
    const key = parseSshPublicKey(ED25519);
    expect(key).toMatchObject({
      type: 'ssh-ed25519',
      bits: 256,
      line: ED25519.split(' ').slice(0, 2).join(' '),
    });
    expect(opensshFingerprint(key)).toBe('SHA256:YHoLWkwG6JzBg29nXPy77BjwrcOOrd20XblvXIvOX8E');
  });

  it('reads a 2048-bit RSA key; SHA256 and MD5 fingerprints as ssh-keygen prints them', () => {
    const key = parseSshPublicKey(`  ${RSA}\n`);
    expect(key).toMatchObject({ type: 'ssh-rsa', bits: 2048 });
    expect(opensshFingerprint(key)).toBe('SHA256:AWMLpox9nEF5nzeWJ76dU8tes5Nm2dU9Yc/5tyRReP0');
    expect(md5Fingerprint(key)).toBe('4a:3b:bd:30:32:64:67:12:2d:bb:2c:28:c0:06:a4:e3');
  });

  const ed = ED25519.split(' ');
  const rsa = RSA.split(' ');
  const blob = Buffer.from(ed[1], 'base64');
  it.each([
    ['an empty text', ''],
    ['a DSA key', 'ssh-dss AAAAB3NzaC1kc3MAAACBAP'],
    ['a private key', '-----BEGIN OPENSSH PRIVATE KEY-----'],
    ['data that is not base64', 'ssh-ed25519 not*base64'],
    ['data of another type than named', `ssh-rsa ${ed[1]}`],
    ['an ed25519 key cut short', `ssh-ed25519 ${blob.subarray(0, blob.length - 4).toString('base64')}`],
    ['bytes after the key', `ssh-ed25519 ${Buffer.concat([blob, Buffer.of(0, 0, 0, 0)]).toString('base64')}`],
    ['two lines', `${ED25519}\n${RSA}`],
    ['a type without data', 'ssh-rsa'],
    ['an RSA key of another length field', `ssh-rsa ${rsa[1].slice(0, 40)}`],
  ])('refuses %s with invalid_input', (_what, text) => {
    expect(() => parseSshPublicKey(text)).toThrow(DomainError);
    try {
      parseSshPublicKey(text);
    } catch (error) {
      expect(error).toMatchObject({ kind: 'invalid_input', fields: [{ field: 'public_key' }] });
    }
  });

  it('refuses an RSA key under 1024 bits', () => {
    const wire = (parts: Buffer[]): string =>
      Buffer.concat(
        parts.map((part) => {
          const length = Buffer.alloc(4);
          length.writeUInt32BE(part.length);
          return Buffer.concat([length, part]);
        }),
      ).toString('base64');
    const small = wire([
      Buffer.from('ssh-rsa'),
      Buffer.of(1, 0, 1),
      Buffer.concat([Buffer.of(0, 0xc1), Buffer.alloc(63, 7)]),
    ]);
    expect(() => parseSshPublicKey(`ssh-rsa ${small}`)).toThrow(/RSA key of 512 bits/);
  });
});
