import { redirectUriProblem } from './redirect-uris.js';

describe('redirectUriProblem', () => {
  it.each([
    'https://app.example.org/oauth/callback',
    'https://app.example.org/cb?tenant=7',
    'http://127.0.0.1:8123/callback',
    'http://localhost/callback',
    'http://[::1]:9000/',
  ])('accepts %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ['/callback', 'is not an absolute URL'],
    ['http://app.example.org/callback', 'must be https'],
    ['javascript:alert(1)', 'must be https'],
    ['https://app.example.org/callback#top', 'must not have a fragment'],
    ['https://me:secret@app.example.org/callback', 'must not carry a user name or password'],
    ['https://app.example.org/call back', 'must not contain white space'],
  ])('refuses %s', (uri, problem) => {
    expect(redirectUriProblem(uri)).toMatch(problem);
  });
});
