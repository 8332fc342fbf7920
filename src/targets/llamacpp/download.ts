import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, lstatSync, mkdirSync, renameSync, rmSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Dispatcher } from 'undici';
import { JoulebenchError } from '../../core/errors.js';
import { quote } from '../../core/one-line.js';
import { VERSION } from '../../version.js';
import { createDispatcher } from '../dispatcher.js';
import { assertHostAllowed } from '../openai/guard.js';
import { redactQuery } from '../openai/redact.js';

/** What to fetch and where: the bytes at `url` are kept only when they hash to `sha256` (and count `bytes`). */
interface DownloadOptions {
  url: string;
  /** Expected sha256, 64 hex digits. */
  sha256: string;
  /** Expected size, bytes; `null`/absent: only the hash (and the server's Content-Length) are checked. */
  bytes?: number | null;
  /** The final file; the download goes to `dest.<random>.part` in the same folder and is renamed when verified. */
  dest: string;
  /** Called as bytes arrive (at most every 200 ms, and once at the end). */
  onProgress?: (received: number, total: number | null) => void;
  /** Redirects followed at most (default 5: Hugging Face answers with one to its file store). */
  max_redirects?: number;
}

/** The verified file; `downloaded` is false when it was already there with the right hash. */
type DownloadResult = { path: string; sha256: string; bytes: number; downloaded: boolean };

/** One line about a failure: no stack, no credential-shaped query parameter (a signed CDN URL carries some). */
function fail(code: 'E_INPUT' | 'E_RUN' | 'E_OUTPUT' | 'E_USAGE', message: string): JoulebenchError {
  return new JoulebenchError(code, redactQuery(`fetch model: ${message}`).replace(/\s*[\r\n]+\s*/g, ' '));
}

/** An fs error's code, else its message. */
function why(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

/** sha256 of a file, hex, streamed (a model is hundreds of MB). */
async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Downloads `url` into `dest.<random>.part` (O_EXCL), hashing as bytes arrive, and renames it onto `dest`
 * only once sha256 (and size, when known) match; any failure removes the part file. An existing `dest`
 * with the right hash is kept without a request. Every hop goes through the metadata-address guard.
 */
export async function downloadVerified(o: DownloadOptions): Promise<DownloadResult> {
  const want = o.sha256.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(want)) throw fail('E_USAGE', `--sha256 must be 64 hex digits, got ${quote(o.sha256)}`);
  let url: URL;
  try {
    url = new URL(o.url);
  } catch {
    throw fail('E_USAGE', `--url ${quote(o.url)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw fail('E_USAGE', `--url must be http(s), got ${url.protocol}`);
  const bytes = o.bytes ?? null;

  let existing: Stats | undefined;
  try {
    existing = lstatSync(o.dest, { throwIfNoEntry: false });
  } catch (e) {
    throw fail('E_OUTPUT', `cannot inspect ${o.dest} (${why(e)})`);
  }
  if (existing) {
    if (!existing.isFile()) throw fail('E_OUTPUT', `${o.dest} exists and is not a regular file (a link or a folder): refused`);
    const have = await sha256File(o.dest);
    if (have === want && (bytes === null || existing.size === bytes)) return { path: o.dest, sha256: have, bytes: existing.size, downloaded: false };
    throw fail('E_OUTPUT', `${o.dest} exists with sha256 ${have}, not the expected ${want}: left as is (remove it, or write elsewhere with -o)`);
  }

  // A random O_EXCL name: never written through a planted link, never renamed by a concurrent fetch.
  const part = `${o.dest}.${randomBytes(6).toString('hex')}.part`;
  let fh: FileHandle;
  try {
    mkdirSync(dirname(o.dest), { recursive: true });
    fh = await open(part, 'wx', 0o644);
  } catch (e) {
    throw fail('E_OUTPUT', `cannot create ${part} (${why(e)})`);
  }
  const dispatcher = createDispatcher();
  try {
    const { headers, body: res } = await follow(dispatcher, url, o.max_redirects ?? 5, 60_000);
    const length = headers['content-length'];
    const declared = typeof length === 'string' && /^\d+$/.test(length) ? Number(length) : null;
    if (bytes !== null && declared !== null && declared !== bytes) {
      res.destroy();
      throw fail('E_INPUT', `the server offers ${declared} bytes, the pinned file has ${bytes}: refused (nothing kept)`);
    }
    const h = createHash('sha256');
    let received = 0;
    let lastReport = 0;
    const total = declared ?? bytes;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        received += chunk.length;
        if (bytes !== null && received > bytes) {
          res.destroy();
          throw fail('E_INPUT', `the server sent more than the pinned ${bytes} bytes: refused (nothing kept)`);
        }
        h.update(chunk);
        // writeFile repeats a partial write until all of the chunk is at the file's position.
        await fh.writeFile(chunk).catch((e: unknown) => {
          throw fail('E_OUTPUT', `cannot write ${part} (${why(e)})`);
        });
        const now = Date.now();
        if (o.onProgress && now - lastReport >= 200) {
          lastReport = now;
          o.onProgress(received, total);
        }
      }
    } catch (e) {
      if (e instanceof JoulebenchError) throw e;
      throw fail('E_RUN', `the download broke off after ${received} bytes (${why(e)}); nothing kept`);
    }
    o.onProgress?.(received, total);
    if (declared !== null && received !== declared) throw fail('E_RUN', `the download broke off: ${received} of ${declared} bytes; nothing kept`);
    if (bytes !== null && received !== bytes) throw fail('E_INPUT', `got ${received} bytes, the pinned file has ${bytes}: refused (nothing kept)`);
    const got = h.digest('hex');
    if (got !== want) throw fail('E_INPUT', `the bytes from ${url.host} have sha256 ${got}, expected ${want}: refused (nothing kept)`);
    // On disk before it takes the final name: a crash never leaves a verified name on unwritten bytes.
    await fh.sync();
    await fh.close();
    renameSync(part, o.dest);
    return { path: o.dest, sha256: got, bytes: received, downloaded: true };
  } catch (e) {
    await fh.close().catch(() => undefined);
    rmSync(part, { force: true });
    throw e;
  } finally {
    void dispatcher.destroy().catch(() => undefined);
  }
}

/** GETs `start`, following up to `max` redirects (each guarded, http(s) only, never https to http); body unread. */
async function follow(dispatcher: Dispatcher, start: URL, max: number, idle_ms: number): Promise<Dispatcher.ResponseData> {
  let url = start;
  for (let hop = 0; ; hop++) {
    try {
      await assertHostAllowed(url.hostname);
    } catch (e) {
      throw fail('E_INPUT', (e as Error).message);
    }
    const res = await get(dispatcher, url, idle_ms);
    const status = res.statusCode;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && typeof location === 'string' && location !== '') {
      res.body.resume();
      if (hop >= max) throw fail('E_RUN', `more than ${max} redirects from ${start.host}`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw fail('E_RUN', `${url.host} redirected to something that is not a URL`);
      }
      if (next.protocol !== 'https:' && next.protocol !== 'http:') throw fail('E_RUN', `${url.host} redirected to a ${next.protocol} URL: refused`);
      if (url.protocol === 'https:' && next.protocol === 'http:') throw fail('E_RUN', `${url.host} redirected from https to plain http (${next.host}): refused`);
      url = next;
      continue;
    }
    if (status < 200 || status >= 300) {
      res.body.resume();
      throw fail('E_RUN', `HTTP ${status} from ${url.host}${url.pathname}`);
    }
    return res;
  }
}

async function get(dispatcher: Dispatcher, url: URL, idle_ms: number): Promise<Dispatcher.ResponseData> {
  try {
    return await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      // No credential is ever sent: the model is public, and a redirect must not carry one elsewhere.
      headers: { 'user-agent': `joulebench/${VERSION}`, accept: 'application/octet-stream, */*' },
      // Longer than this waiting for the head, or between two body chunks, fails the download.
      headersTimeout: idle_ms,
      bodyTimeout: idle_ms,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'E_FORBIDDEN_ADDRESS') throw fail('E_INPUT', (e as Error).message);
    throw fail('E_RUN', `cannot reach ${url.host} (${why(e)})`);
  }
}
