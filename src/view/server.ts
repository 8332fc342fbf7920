import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { JoulebenchError } from '../core/errors.js';
import { isLoopback, LOOPBACK } from './loopback.js';
import { openSources, type ViewSources } from './sources.js';
import { casesPage, comparePage, notFound, reportPage, runsPage, trendsPage } from './pages.js';

interface ViewOptions {
  paths: readonly string[];
  host: string;
  port: number;
  token: string | null;
  historyPath: string | null;
}

/** Off-origin loads of every kind refused; the report pages' own inline scripts and styles allowed. */
const CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
const COOKIE = 'joulebench_view';

/** The only files served by name: the chart bundle, the report page's style, the viewer's own script and style. */
const ASSETS: Record<string, [string, string]> = {
  'echarts.min.js': ['vendor/echarts/echarts.min.js', 'text/javascript'],
  'page.css': ['src/report/html/assets/page.css', 'text/css'],
  'view.css': ['src/view/assets/view.css', 'text/css'],
  'view.js': ['src/view/assets/view.js', 'text/javascript'],
};
const shipped = (rel: string): string => fileURLToPath(new URL(`../../${rel}`, import.meta.url));

function sameSecret(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The viewer's routes over `sources`; every request passes the host and token checks first. Read-only: GET only. */
function viewApp(sources: ViewSources, opts: Pick<ViewOptions, 'host' | 'token'>): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    c.header('Content-Security-Policy', CSP);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    // On loopback, a page from another site that rebinds its name to 127.0.0.1 carries its own Host: refused.
    const hostname = (c.req.header('host') ?? '').replace(/:\d+$/, '');
    if (isLoopback(opts.host) && !LOOPBACK.has(hostname)) return c.text('forbidden host', 403);
    if (opts.token !== null) {
      const token = opts.token;
      const bearer = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1];
      if (sameSecret(c.req.query('token'), token)) {
        // The token leaves the address bar: a cookie carries it from here on.
        setCookie(c, COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(url.pathname + url.search, 302);
      }
      if (!sameSecret(bearer, token) && !sameSecret(getCookie(c, COOKIE), token)) return c.text('unauthorized: pass the token (Authorization: Bearer, or ?token= once)', 401);
    }
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return c.text('read-only', 405);
    return next();
  });
  const html = (c: Context, page: string | null) => (page === null ? c.html(notFound(), 404) : c.html(page));
  app.get('/', (c) => c.html(runsPage(sources, new URL(c.req.url).searchParams)));
  app.get('/run/:key', async (c) => html(c, await reportPage(sources, [c.req.param('key')])));
  app.get('/report', async (c) => html(c, await reportPage(sources, c.req.queries('k') ?? [])));
  app.get('/cases/:key', (c) => html(c, casesPage(sources, c.req.param('key'), new URL(c.req.url).searchParams)));
  app.get('/compare', async (c) => html(c, await comparePage(sources, c.req.queries('k') ?? [])));
  app.get('/trends', (c) => c.html(trendsPage(sources)));
  app.get('/assets/:name', (c) => {
    const a = Object.hasOwn(ASSETS, c.req.param('name')) ? ASSETS[c.req.param('name')]! : null;
    if (!a) return c.text('not found', 404);
    return c.body(readFileSync(shipped(a[0])), 200, { 'Content-Type': `${a[1]}; charset=utf-8`, 'Cache-Control': 'max-age=3600' });
  });
  app.notFound((c) => c.html(notFound(), 404));
  app.onError((e, c) => c.html(notFound(e instanceof JoulebenchError ? e.message : 'internal error'), e instanceof JoulebenchError ? 400 : 500));
  return app;
}

/** Opens the sources and listens; resolves once the port is bound. */
export async function startViewer(opts: ViewOptions): Promise<{ url: string; close: () => Promise<void> }> {
  const sources = await openSources(opts.paths, opts.historyPath);
  const app = viewApp(sources, opts);
  return new Promise((resolveStart, reject) => {
    const server = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host }, (info: AddressInfo) => {
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolveStart({
        url: `http://${host}:${info.port}/`,
        close: () =>
          new Promise((done) => {
            sources.history?.close();
            server.close(() => done());
          }),
      });
    });
    server.on('error', (e: NodeJS.ErrnoException) => reject(new JoulebenchError('E_USAGE', `view: cannot listen on ${opts.host}:${opts.port} (${e.code ?? e.message})`)));
  });
}
