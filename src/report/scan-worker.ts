/**
 * The worker half of {@link ScanAhead} (src/report/scan-ahead.ts): reads a results file from its own
 * descriptor (positioned reads, so the main thread's reads are not moved) and scans every complete
 * line with a CaseLineScanner, writing one record a line into the shared ring. It decides nothing:
 * the main thread checks each record's offsets against its own line and reads any line the worker did
 * not (or that does not line up) itself.
 */
import { readSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { newScanTarget, CaseLineScanner } from './case-scan.js';
import { C_ABORT, C_CONSUMED, C_DONE, C_READY, C_WRITTEN, encodeRecord, REC, type ScanAheadData } from './scan-record.js';

const { fd, ring, control, slots } = workerData as ScanAheadData;
const rec = new Float64Array(ring);
const ctl = new Int32Array(control);
const scanner = new CaseLineScanner();
const r = newScanTarget();
let written = 0;
let done = 2;
Atomics.store(ctl, C_READY, 1);

try {
  let buf = Buffer.allocUnsafe(1 << 20);
  let base = 0; // file offset of buf[0]
  let have = 0;
  let first = true;
  let lastFlush = 0;
  const publish = () => {
    Atomics.store(ctl, C_WRITTEN, written);
    Atomics.notify(ctl, C_WRITTEN);
    lastFlush = written;
  };
  reading: for (;;) {
    if (have === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    }
    if (Atomics.load(ctl, C_ABORT) !== 0) break;
    const got = readSync(fd, buf, have, buf.length - have, base + have);
    if (got === 0) break;
    have += got;
    const last = buf.subarray(0, have).lastIndexOf(0x0a);
    if (last < 0) continue;
    let s = 0;
    if (first && base === 0 && last >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) s = 3;
    first = false;
    while (s <= last) {
      if (Atomics.load(ctl, C_ABORT) !== 0) break reading;
      // Wait for room in the ring (publishing what is written first, so the reader can free it).
      while (written - Atomics.load(ctl, C_CONSUMED) >= slots) {
        if (written !== lastFlush) publish();
        if (Atomics.load(ctl, C_ABORT) !== 0) break reading;
        Atomics.wait(ctl, C_CONSUMED, Atomics.load(ctl, C_CONSUMED), 50);
      }
      if (written < Atomics.load(ctl, C_CONSUMED)) {
        // The main thread has read this line itself: passed over, no record.
        let nl = buf.indexOf(0x0a, s);
        if (nl < 0 || nl > last) nl = last;
        written++;
        s = nl + 1;
        continue;
      }
      let nl = scanner.scanLine(buf, s, last, r);
      const ok = nl >= 0;
      if (!ok) {
        nl = buf.indexOf(0x0a, s);
        if (nl < 0 || nl > last) nl = last;
      }
      encodeRecord(rec, (written % slots) * REC, ok ? r : null, base + s, base + nl, s, scanner);
      written++;
      if (written - lastFlush >= 32) publish();
      s = nl + 1;
    }
    buf.copy(buf, 0, last + 1, have);
    base += last + 1;
    have -= last + 1;
  }
  publish();
  done = 1;
} finally {
  Atomics.store(ctl, C_DONE, done);
  Atomics.notify(ctl, C_WRITTEN);
}
