import { createHash } from 'node:crypto';
import {
  generateAccessToken,
  generateRefreshToken,
  hasAccessTokenShape,
  isAccessTokenMarked,
  verifiesChallenge,
} from './app-secrets.js';

const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url');

describe('PKCE S256 (RFC 7636)', () => {
  it("verifies RFC 7636 appendix B's example", () => {
    expect(
      verifiesChallenge(
        'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
        'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      ),
    ).toBe(true);
  });

  it('refuses another verifier, and a verifier too short or with characters RFC 7636 does not allow', () => {
    const verifier = 'a'.repeat(43);
    expect(verifiesChallenge('b'.repeat(43), s256(verifier))).toBe(false);
    expect(verifiesChallenge('a'.repeat(42), s256('a'.repeat(42)))).toBe(false);
    expect(verifiesChallenge(`${'a'.repeat(43)}+`, s256(`${'a'.repeat(43)}+`))).toBe(false);
    expect(verifiesChallenge('a'.repeat(129), s256('a'.repeat(129)))).toBe(false);
    expect(verifiesChallenge(verifier, s256(verifier))).toBe(true);
  });
});

describe('application tokens', () => {
  it('marks access tokens for the guard, and refresh tokens not', () => {
    const access = generateAccessToken();
    expect(isAccessTokenMarked(access)).toBe(true);
    expect(hasAccessTokenShape(access)).toBe(true);
    expect(isAccessTokenMarked(generateRefreshToken())).toBe(false);
    expect(hasAccessTokenShape(`${access}x`)).toBe(false);
  });
});
