import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Skips a browser suite only when Chromium is missing and the user said so; otherwise a missing one fails. */
export const browserSkip = !existsSync(CHROMIUM) && process.env.JOULEBENCH_SKIP_BROWSER ? 'no chromium' : false;

/** Headless Debian Chromium with nothing that reaches the network by itself. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

// One context per browser: a new page in it costs far less than a new context (report pages keep no storage).
const contexts = new WeakMap<Browser, Promise<BrowserContext>>();

/** A report page opened at `width` px (and `hash`), ready; console errors and requests leaving the file are recorded. */
export async function openReport(browser: Browser, file: string, width: number, hash = ''): Promise<{ page: Page; problems: string[]; requests: string[] }> {
  if (!contexts.has(browser)) contexts.set(browser, browser.newContext());
  const page = await (await contexts.get(browser)!).newPage();
  await page.setViewportSize({ width, height: 900 });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (req) => {
    if (!req.url().startsWith('file:')) requests.push(req.url());
  });
  await page.goto(pathToFileURL(file).href + hash);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
  return { page, problems, requests };
}

/** Page and body no wider than the window. */
export async function overflow(page: Page): Promise<{ ok: boolean; doc: number; body: number; inner: number }> {
  const m = (await page.evaluate('({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, inner: window.innerWidth })')) as { doc: number; body: number; inner: number };
  return { ...m, ok: m.doc <= m.inner && m.body <= m.inner };
}
