import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots for a person to look at after the run (test-results/ is not committed). */
export const SCREENSHOTS = 'test-results/screenshots';

/**
 * Debian's Chromium, headless, with nothing of its own going out to the network. `hosts`: names
 * Chromium resolves to 127.0.0.1 itself (`--host-resolver-rules`), to reach the service under a
 * name other than localhost, as a LAN or another site would, with no DNS and no traffic elsewhere.
 */
export async function launchChromium(hosts: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the browser tests need Debian's chromium (apt-get install -y chromium)`,
    );
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...(hosts.length > 0
        ? [`--host-resolver-rules=${hosts.map((host) => `MAP ${host} 127.0.0.1`).join(', ')}`]
        : []),
    ],
  });
}

/** Collects every request of the page that leaves `origin` (data: URLs aside). */
export function recordOutsideRequests(page: Page, origin: string): string[] {
  const outside: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) {
      outside.push(request.url());
    }
  });
  return outside;
}
