import { closeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { CaseResult } from '../core/types.js';
import { openRegularFile } from '../read-text.js';
import { C_ABORT, C_CONSUMED, C_DONE, C_WRITTEN, CONTROL_WORDS, RecordDecoder, REC, RECORD_FIELDS, type ScanAheadData } from './scan-record.js';

/** With JOULEBENCH_REPORT_WORKER=1, files smaller than this are scanned on the main thread only (a worker costs ~30 ms to start). */
export const SCAN_AHEAD_MIN_BYTES = 32 * 2 ** 20;
const SLOTS = 8192;
/**
 * With `wait` (tests: every line through the worker), no new record for this long leaves the worker
 * behind and the main thread scans the rest. Long: a busy 2-core CI machine running two test files
 * left the worker thread without a record for over 2 s (the limit before), failing a test that
 * checks no worker was left behind. Without `wait` nothing waits, so nothing stalls.
 */
const STALL_MS = 30_000;

/**
 * A worker thread that scans a results file's lines ahead of the main thread, on the other core: the
 * main thread then only aggregates (in case order, as before) what the worker read, and parses what it
 * did not. Nothing depends on the worker for correctness: each record names its line's file offsets
 * and is used only when they are the main thread's line's own; a line whose record is not there yet
 * is read by the main thread itself (the worker then skips it), so a busy machine that does not run
 * the worker costs no waiting; a worker that falls out of line is left behind. The worker reads
 * through its own descriptor (opened here, closed once the worker has stopped).
 *
 * Wall time, not CPU: the scanning moves to another core when one is free (about half the work at 1M
 * cases); the records add a little CPU.
 */
/** How a scan-ahead went: lines the worker's records were used for, and why it was left behind (null: it was not). */
export interface ScanAheadStats {
  records: number;
  left: string | null;
}

export class ScanAhead {
  private readonly rec: Float64Array;
  private readonly ctl: Int32Array;
  private readonly decoder = new RecordDecoder();
  private consumed = 0;
  private written = 0;
  private live = true;
  private used = 0;
  private left: string | null = null;
  private readonly slots: number;

  private constructor(
    private readonly worker: Worker,
    private readonly fd: number,
    data: ScanAheadData,
    private readonly wait: boolean,
  ) {
    this.slots = data.slots;
    this.rec = new Float64Array(data.ring);
    this.ctl = new Int32Array(data.control);
  }

  /**
   * A scan-ahead worker for `path`, or null: unless JOULEBENCH_REPORT_WORKER=1 (or `minBytes` is given),
   * for a small file, with JOULEBENCH_REPORT_WORKER=0, or when no worker can start.
   */
  /**
   * `wait`: the main thread waits for each line's record instead of reading a line itself when its
   * record is not there yet (tests: every line then goes through the worker).
   */
  static start(path: string, opts: { minBytes?: number; slots?: number; wait?: boolean } = {}): ScanAhead | null {
    // Off unless asked for (JOULEBENCH_REPORT_WORKER=1, or a test's minBytes): on the shared 2-core
    // machine it was measured on, busy (load 6–7), the worker made a 1M-case rebuild slower, not faster.
    if (process.env.JOULEBENCH_REPORT_WORKER === '0') return null;
    if (opts.minBytes === undefined && process.env.JOULEBENCH_REPORT_WORKER !== '1') return null;
    let fd = -1;
    try {
      const opened = openRegularFile(path, 'E_RESULTS');
      fd = opened.fd;
      if (opened.size < (opts.minBytes ?? SCAN_AHEAD_MIN_BYTES)) {
        closeSync(fd);
        return null;
      }
      const slots = opts.slots ?? SLOTS;
      const data: ScanAheadData = { fd, ring: new SharedArrayBuffer(slots * REC * 8), control: new SharedArrayBuffer(CONTROL_WORDS * 4), slots };
      const worker = import.meta.url.endsWith('.ts') ? sourceWorker(data) : new Worker(new URL('./scan-worker.js', import.meta.url), { workerData: data });
      worker.unref();
      // An error in the worker is seen as it stopping (C_DONE) or stalling; nothing to report from here.
      worker.on('error', () => {});
      return new ScanAhead(worker, fd, data, opts.wait === true);
    } catch {
      if (fd >= 0) closeSync(fd);
      return null;
    }
  }

  /**
   * The worker's reading of the line at file offset `offset` (`buf[s, limit)` holds it, up to its
   * newline) into `into`: where the line ends in `buf`; -2 when the worker did not read it (the
   * caller parses it); -1 when the worker is not in line (the caller scans it).
   */
  next(buf: Uint8Array, s: number, limit: number, offset: number, into: CaseResult): number {
    if (!this.live) return -1;
    const k = this.consumed;
    // What is published frees the slots before it (never record k's own, read below) and lets a
    // worker that fell behind skip the lines the main thread has read.
    if ((k & 63) === 0) this.publish();
    if (k >= this.written) {
      this.written = Atomics.load(this.ctl, C_WRITTEN);
      if (k >= this.written) {
        if (this.wait) {
          if (!this.waitFor(k)) return -1;
        } else {
          // Not there yet: the main thread reads this line itself rather than wait (a busy machine
          // may not run the worker for a while); the worker skips it.
          this.consumed = k + 1;
          return -1;
        }
      }
    }
    const o = (k % this.slots) * REC;
    const rec = this.rec;
    this.consumed = k + 1;
    if (rec[o + RECORD_FIELDS.START] !== offset) return this.leave(`offset ${rec[o + RECORD_FIELDS.START]} vs ${offset}`);
    const nl = s + (rec[o + RECORD_FIELDS.END]! - offset);
    if (nl > limit || (nl < limit && buf[nl] !== 0x0a)) return this.leave('end');
    if (rec[o + RECORD_FIELDS.OK] !== 1) return -2;
    if (!this.decoder.decode(rec, o, buf, s, nl, into)) return this.leave('decode');
    this.used++;
    return nl;
  }

  /** Stops the worker; its descriptor is closed once it has stopped (it may be mid-read until then). */
  close(): ScanAheadStats {
    const stats = { records: this.used, left: this.left };
    this.leave('closed');
    const fd = this.fd;
    void this.worker.terminate().then(
      () => closeSync(fd),
      () => closeSync(fd),
    );
    return stats;
  }

  /** Frees the slots of the records before the one being read (`consumed`: not yet read). */
  private publish(): void {
    Atomics.store(this.ctl, C_CONSUMED, this.consumed);
    Atomics.notify(this.ctl, C_CONSUMED);
  }

  /** Waits for record `k`; false when it will not come (the worker stopped, or stalled). */
  private waitFor(k: number): boolean {
    this.publish();
    let since = Date.now();
    let seen = Atomics.load(this.ctl, C_WRITTEN);
    for (;;) {
      if (seen > k) {
        this.written = seen;
        return true;
      }
      if (Atomics.load(this.ctl, C_DONE) !== 0) {
        seen = Atomics.load(this.ctl, C_WRITTEN);
        if (seen > k) continue;
        this.leave('done');
        return false;
      }
      Atomics.wait(this.ctl, C_WRITTEN, seen, 100);
      const now = Atomics.load(this.ctl, C_WRITTEN);
      if (now !== seen) since = Date.now();
      else if (Date.now() - since > STALL_MS) {
        this.leave('stall');
        return false;
      }
      seen = now;
    }
  }

  /** Leaves the worker behind (`why`, for the stats); -1 (the caller scans the line itself). */
  private leave(why: string): number {
    if (this.live && why !== 'closed') this.left = `${why} at record ${this.consumed}`;
    this.live = false;
    Atomics.store(this.ctl, C_ABORT, 1);
    Atomics.notify(this.ctl, C_CONSUMED);
    return -1;
  }
}

/**
 * Run from the TypeScript sources (the tests, under tsx): a worker does not get the parent's
 * `--import tsx` hooks for its entry on Node 20, so it registers them before importing the worker.
 */
function sourceWorker(data: ScanAheadData): Worker {
  const entry = new URL('./scan-worker.ts', import.meta.url).href;
  const code = `(async () => { (await import('tsx/esm/api')).register(); await import(${JSON.stringify(entry)}); })();`;
  return new Worker(code, { eval: true, workerData: data });
}
