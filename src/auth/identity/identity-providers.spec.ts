import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/app-config.js';
import { ConfigMistakes, loadIdentityProviders } from '../../config/identity-providers-file.js';
import { GithubProviderFactory } from './github.provider.js';
import { IdentityProviders } from './identity-providers.js';
import { OidcProviderFactory } from './oidc.provider.js';
import { ProviderFetch } from './provider-fetch.js';
import { SeekProviderFactory } from './seek.provider.js';

describe('IDENTITY_PROVIDERS_FILE', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'providers-file-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  function file(text: string): string {
    const path = join(dir, 'providers.yaml');
    writeFileSync(path, text);
    return path;
  }

  /** The providers as the app makes them at start-up, from the file's text. */
  function providers(text: string, env: NodeJS.ProcessEnv = {}): IdentityProviders {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: dir,
      JWT_SECRET: 'a-secret-of-the-spec-a-secret-of-the-spec',
      IDENTITY_PROVIDERS_FILE: file(text),
      ...env,
    });
    const fetch = new ProviderFetch(config);
    return new IdentityProviders(
      [new OidcProviderFactory(fetch), new GithubProviderFactory(fetch), new SeekProviderFactory(fetch)],
      config,
    );
  }

  function mistakes(run: () => unknown): string[] {
    try {
      run();
    } catch (error) {
      if (error instanceof ConfigMistakes) {
        return [...error.mistakes];
      }
      throw error;
    }
    throw new Error('no mistake reported');
  }

  it('makes each provider of its type, secrets from the environment, in the order of the file', () => {
    const made = providers(
      `providers:
  lslogin:
    type: oidc
    label: LS Login
    issuer: https://login.aai.lifescience-ri.eu/oidc/
    client_id: abc
    client_secret: \${LS_SECRET}
  github:
    type: github
    client_id: def
    client_secret: ghi
  workflowhub:
    type: seek
    url: https://workflowhub.eu/
    client_id: jkl
    client_secret: mno
`,
      { LS_SECRET: 'secret' },
    );
    expect(made.all().map((p) => [p.name, p.type, p.label, p.registryUri])).toEqual([
      ['lslogin', 'oidc', 'LS Login', undefined],
      ['github', 'github', 'github', undefined],
      ['workflowhub', 'seek', 'workflowhub', 'https://workflowhub.eu'],
    ]);
  });

  it('lists every mistake of the common settings, one line each', () => {
    const path = file(`providers:
  Bad Name:
    type: oidc
    client_id: a
    client_secret: b
  nosecret:
    type: github
    client_id: a
  notype:
    client_id: a
    client_secret: b
    timeout_seconds: 0
`);
    const error = mistakes(() => loadIdentityProviders(path, {}));
    expect(error).toEqual([
      "provider 'Bad Name': the name must be 1-32 of a-z, 0-9, '_' and '-', starting with a letter or digit",
      "provider 'nosecret' needs a 'client_secret' (write it as ${ENV_NAME} to keep it out of the file)",
      "provider 'notype' needs a 'type' (oidc, github or seek)",
      "provider 'notype': 'timeout_seconds' must be an integer between 1 and 120",
    ]);
    expect(() => loadIdentityProviders(path, {})).toThrow(
      /^Invalid setting IDENTITY_PROVIDERS_FILE: provider 'Bad Name'.*\nInvalid setting IDENTITY_PROVIDERS_FILE: provider 'nosecret'/,
    );
  });

  it("lists every mistake of the types' own settings, one line each", () => {
    expect(
      mistakes(() =>
        providers(`providers:
  a:
    type: oidc
    isuer: https://op.example
    client_id: a
    client_secret: b
  b:
    type: oidc
    issuer: http://op.example
    scopes: profile email
    client_id: a
    client_secret: b
  c:
    type: gitlab
    client_id: a
    client_secret: b
  d:
    type: seek
    url: https://seek.example/?x=1
    client_id: a
    client_secret: b
`),
      ),
    ).toEqual([
      "provider 'a' (type oidc) has 'isuer', which a provider of type oidc does not take (it takes issuer, scopes)",
      "provider 'a' (type oidc) needs 'issuer' (an https URL)",
      "provider 'b' (type oidc) 'issuer' must be an https URL (plain http only on 127.0.0.1 or localhost)",
      "provider 'b' (type oidc) 'scopes' must include openid",
      "provider 'c' has unknown type 'gitlab' (known: oidc, github, seek)",
      "provider 'd' (type seek) 'url' must have no query, fragment or credentials",
    ]);
  });

  it('takes plain http only for a provider on loopback', () => {
    expect(
      providers(`providers:
  local:
    type: oidc
    issuer: http://127.0.0.1:8080/realms/test
    client_id: a
    client_secret: b
`).get('local').type,
    ).toBe('oidc');
  });

  it('refuses a file without providers', () => {
    expect(mistakes(() => loadIdentityProviders(file('providers: {}\n'), {}))).toEqual([
      expect.stringMatching(/defines no provider/),
    ]);
  });
});
