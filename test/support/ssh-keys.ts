import { generateKeyPairSync } from 'node:crypto';

/** A fresh OpenSSH public key line (`ssh-rsa …` or `ssh-ed25519 …`), made here as ssh-keygen would. */
export function sshPublicKey(type: 'rsa' | 'ed25519' = 'ed25519', comment = 'test@example'): string {
  const string = (value: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(value.length);
    return Buffer.concat([length, value]);
  };
  // An mpint is signed: a leading byte with its high bit set needs a zero byte before it.
  const mpint = (value: Buffer): Buffer =>
    string((value[0] & 0x80) !== 0 ? Buffer.concat([Buffer.of(0), value]) : value);
  if (type === 'rsa') {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' });
    const blob = Buffer.concat([
      string(Buffer.from('ssh-rsa')),
      mpint(Buffer.from(jwk.e ?? '', 'base64url')),
      mpint(Buffer.from(jwk.n ?? '', 'base64url')),
    ]);
    return `ssh-rsa ${blob.toString('base64')} ${comment}`;
  }
  const { publicKey } = generateKeyPairSync('ed25519');
  const x = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  const blob = Buffer.concat([string(Buffer.from('ssh-ed25519')), string(x)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}
