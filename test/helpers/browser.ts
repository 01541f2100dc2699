import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium; never a downloaded browser (.ci/run installs the package when missing). */
export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
      // Belt and braces for the network rule: no name resolves, so nothing but 127.0.0.1 is reachable.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
}

/** Every request a context made, and every console message; any request not to 127.0.0.1 is aborted. */
export interface Watched {
  context: BrowserContext;
  requests: string[];
  console: string[];
  page(): Promise<Page>;
}

export async function watchedContext(browser: Browser, opts: Parameters<Browser['newContext']>[0] = {}): Promise<Watched> {
  const context = await browser.newContext({ deviceScaleFactor: 1, ...opts });
  const requests: string[] = [];
  const consoleLines: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    requests.push(route.request().url());
    return url.hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient');
  });
  context.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  return {
    context,
    requests,
    console: consoleLines,
    async page() {
      const p = await context.newPage();
      p.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
      return p;
    },
  };
}

const require = createRequire(import.meta.url);

/** Runs axe-core in the page (through the DevTools protocol, so the page's CSP does not apply). */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]> {
  const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  // A string, evaluated in the page: this file is type-checked without the DOM library.
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`);
}
