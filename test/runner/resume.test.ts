import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { BenchReport } from '../../src/core/aggregate.js';
import { isJoulebenchError } from '../../src/core/errors.js';
import type { Target } from '../../src/core/types.js';
import { JsonlResultsFile, MemorySink, truncateResultsFile } from '../../src/runner/results-file.js';
import { parseResultsText, readResultsFile } from '../../src/runner/results-stream.js';
import { readResumeFile } from '../../src/runner/resume-index.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { CacheStage } from '../../src/targets/cascade/cache.js';
import type { Cascade } from '../../src/targets/cascade/cascade.js';
import { createEchoTarget } from '../../src/targets/cascade/echo.js';
import { createEstimateMeter } from '../../src/meters/estimate.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-resume-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The report without the figures that are timings (they differ between any two runs). The wall-clock
 * span and throughput are among them: a resumed run has neither (its process saw only some cases).
 */
function timeless(r: BenchReport): Record<string, unknown> {
  const { latency_p50_ms: _a, latency_p95_ms: _b, latency_p99_ms: _c, ttft_p50_ms: _d, ttft_p95_ms: _e, suite_window_ms: _w, throughput: _t, ci, ...rest } = r;
  // The latency intervals are timings too.
  const { latency_p50_ms: _f, latency_p95_ms: _g, latency_p99_ms: _h, reasons, ...ciRest } = ci;
  const { latency_p50_ms: _i, latency_p95_ms: _j, latency_p99_ms: _k, ...reasonsRest } = reasons;
  // So are the latency spreads between passes (a case taking 1 ms instead of 0 on a loaded machine moves them).
  const spread = rest.repeat_spread ? (({ latency_p50_ms: _l, latency_p95_ms: _m, ...s }) => s)(rest.repeat_spread) : rest.repeat_spread;
  return { ...rest, repeat_spread: spread, ci: { ...ciRest, reasons: reasonsRest } };
}

const cacheOf = (t: Cascade): CacheStage => t.stages[0] as CacheStage;
const suite = loadSuite('all');

/** Runs until `stopAfter` results were written, then aborts, as a crash would (the file keeps what was written). */
async function interrupted(path: string, stopAfter: number, warmup: number, repeats: number): Promise<void> {
  const ac = new AbortController();
  const sink = new JsonlResultsFile(path);
  let n = 0;
  await assert.rejects(
    run({ suite, target: createReferenceCascade(), warmup, repeats, sink, signal: ac.signal, onResult: () => { if (++n >= stopAfter) ac.abort(); } }),
    /aborted/,
  );
  sink.close();
}

async function resumed(path: string, target: Target, warmup: number, repeats: number) {
  const file = readResumeFile(path, suite.cases.length);
  if (file.torn_bytes > 0) truncateResultsFile(path, file.good_bytes);
  const sink = new JsonlResultsFile(path, { append: true });
  try {
    return await run({ suite, target, warmup, repeats, sink, resume: { ...file, path } });
  } finally {
    sink.close();
  }
}

describe('run with resume', () => {
  // Stop points: inside the warmup pass, right at the start of the scored passes, and mid-way through them.
  for (const stopAfter of [17, 50, 50 + 37, 50 * 3 - 1]) {
    it(`after ${stopAfter} results, gives the report of an uninterrupted run, with the same cache`, async () => {
      const full = createReferenceCascade();
      const reference = await run({ suite, target: full, warmup: 1, repeats: 3 });

      const path = join(dir, `stop-${stopAfter}.jsonl`);
      await interrupted(path, stopAfter, 1, 3);
      assert.equal(readResultsFile(path).results.length, stopAfter);
      const target = createReferenceCascade();
      const out = await resumed(path, target, 1, 3);

      assert.deepEqual(timeless(out.report), timeless(reference.report));
      assert.deepEqual(out.report.stage_distribution, reference.report.stage_distribution);
      // The cache ends in the very state (contents and LRU order) the uninterrupted run left.
      assert.deepEqual(cacheOf(target).keys(), cacheOf(full).keys());

      // Every (phase, pass, index) exactly once, in run order; nothing re-run.
      const file = readResultsFile(path);
      const keys = file.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
      assert.equal(keys.length, 4 * suite.cases.length);
      assert.equal(new Set(keys).size, keys.length);
      // The resumed process's measures (no wall time once scored cases were restored: no throughput), then the end.
      const restored = stopAfter > suite.cases.length;
      assert.deepEqual(
        file.other.map((o) => (o.record === 'run_measures' && !restored ? { ...o, scored_wall_ms: 'some' } : o)),
        [
          { record: 'resume', finished: stopAfter, state: 'restore' },
          { record: 'run_measures', idle: { status: 'marginal', watts: null }, suite: null, scored_wall_ms: restored ? null : 'some' },
          { record: 'end', scored: 3 * suite.cases.length },
        ],
      );
    });
  }

  it('a target without restore gets one re-warm pass, recorded apart and never scored', async () => {
    const path = join(dir, 'echo.jsonl');
    const sink = new JsonlResultsFile(path);
    const ac = new AbortController();
    let n = 0;
    await assert.rejects(run({ suite, target: createEchoTarget(), warmup: 1, repeats: 2, sink, signal: ac.signal, onResult: () => { if (++n >= 70) ac.abort(); } }));
    sink.close();
    const ref = await run({ suite, target: createEchoTarget(), warmup: 1, repeats: 2 });
    const out = await resumed(path, createEchoTarget(), 1, 2);
    assert.deepEqual(timeless(out.report), timeless(ref.report));
    const file = readResultsFile(path);
    assert.equal(file.other.filter((o) => o.record === 'rewarm').length, suite.cases.length);
    assert.equal(file.other.find((o) => o.record === 'resume')?.state, 'rewarm');
    assert.equal(file.results.length, 3 * suite.cases.length);
  });

  it('no re-warm pass when the kill landed inside the warmup: the rest of the warmup runs anyway', async () => {
    const path = join(dir, 'echo-warmup.jsonl');
    const sink = new JsonlResultsFile(path);
    const ac = new AbortController();
    let n = 0;
    await assert.rejects(run({ suite, target: createEchoTarget(), warmup: 1, repeats: 1, sink, signal: ac.signal, onResult: () => { if (++n >= 10) ac.abort(); } }));
    sink.close();
    await resumed(path, createEchoTarget(), 1, 1);
    const file = readResultsFile(path);
    assert.equal(file.other.filter((o) => o.record === 'rewarm').length, 0);
    assert.equal(file.results.length, 2 * suite.cases.length);
  });

  it('with a meter that opens windows, a resumed run totals its cases: the suite window saw only part of them', async () => {
    const meter = () => createEstimateMeter({ active_watts: 10 });
    const path = join(dir, 'estimate.jsonl');
    const sink = new JsonlResultsFile(path);
    const ac = new AbortController();
    let n = 0;
    await assert.rejects(run({ suite, target: createEchoTarget(), meter: meter(), warmup: 0, repeats: 2, sink, signal: ac.signal, onResult: () => { if (++n >= 60) ac.abort(); } }));
    sink.close();
    const whole = await run({ suite, target: createEchoTarget(), meter: meter(), warmup: 0, repeats: 2, idle_ms: 0 });
    assert.equal(whole.energy.gross_from, 'suite-window');
    const contents = readResumeFile(path, suite.cases.length);
    const sink2 = new JsonlResultsFile(path, { append: true });
    const out = await run({ suite, target: createEchoTarget(), meter: meter(), warmup: 0, repeats: 2, idle_ms: 0, sink: sink2, resume: { ...contents, path } });
    sink2.close();
    assert.equal(out.energy.gross_from, 'cases');
    assert.equal(out.report.case_count, 100);
  });

  it('resuming a finished run runs nothing and gives the same report', async () => {
    const path = join(dir, 'done.jsonl');
    const sink = new JsonlResultsFile(path);
    const first = await run({ suite, target: createReferenceCascade(), warmup: 1, repeats: 1, sink });
    sink.close();
    let calls = 0;
    const inner = createReferenceCascade();
    const counting: Target = { id: inner.id, kind: inner.kind, describe: () => inner.describe(), restore: (q, r) => inner.restore(q, r), answer: (q) => (calls++, inner.answer(q)) };
    const again = await resumed(path, counting, 1, 1);
    assert.equal(calls, 0);
    assert.deepEqual(again.report, first.report);
  });

  it('refuses a file written for another suite or another config, saying which', async () => {
    const path = join(dir, 'other.jsonl');
    const sink = new JsonlResultsFile(path);
    await run({ suite: loadSuite('mt'), target: createReferenceCascade(), warmup: 0, repeats: 1, sink });
    sink.close();
    const contents = readResumeFile(path, suite.cases.length);
    await assert.rejects(
      run({ suite, target: createReferenceCascade(), warmup: 0, repeats: 1, sink: new MemorySink(), resume: { ...contents, path } }),
      (e: unknown) => isJoulebenchError(e) && e.code === 'E_RESULTS' && e.exitCode === 2 && /cannot resume.*suite "mt"/.test(e.message),
    );
    await assert.rejects(
      run({ suite: loadSuite('mt'), target: createReferenceCascade(), warmup: 0, repeats: 2, sink: new MemorySink(), resume: { ...contents, path } }),
      (e: unknown) => isJoulebenchError(e) && e.code === 'E_RESULTS' && /cannot resume.*config.*repeats 1 → 2/.test(e.message),
    );
  });

  it('refuses to resume with other report settings than the file was written with (bootstrap, unit limit, shared), and takes the same ones', async () => {
    const path = join(dir, 'settings.jsonl');
    const sink = new JsonlResultsFile(path);
    const first = await run({ suite, target: createReferenceCascade(), warmup: 0, repeats: 1, sink, bootstrap: 50, bootstrap_max_units: 'inf', shared: true });
    sink.close();
    const contents = readResumeFile(path, suite.cases.length);
    const again = (o: { bootstrap?: number; bootstrap_max_units?: number | 'inf'; shared?: boolean }) =>
      run({ suite, target: createReferenceCascade(), warmup: 0, repeats: 1, sink: new MemorySink(), resume: { ...contents, path }, ...o });
    const refused = (re: RegExp) => (e: unknown) => isJoulebenchError(e) && e.code === 'E_RESULTS' && e.exitCode === 2 && re.test(e.message);
    await assert.rejects(again({ bootstrap_max_units: 'inf', shared: true }), refused(/cannot resume: it was written with bootstrap 50, this run's is 2000 \(.*--bootstrap\)/));
    await assert.rejects(again({ bootstrap: 50, shared: true }), refused(/cannot resume: it was written with bootstrap_max_units Infinity, this run's is 20000 \(.*--bootstrap-max-units\)/));
    await assert.rejects(again({ bootstrap: 50, bootstrap_max_units: 'inf' }), refused(/cannot resume: it was written with shared true, this run's is false \(.*--parallel-arms\)/));
    const same = await again({ bootstrap: 50, bootstrap_max_units: 'inf', shared: true });
    assert.deepEqual(timeless(same.report), timeless(first.report));
  });
});

describe('reading a results file back', () => {
  const header = JSON.stringify({ record: 'header', suite_digest: 'd', config_digest: 'c' });
  const line = (i: number): string => JSON.stringify(result({ index: i, case_id: `c${i}` }));

  it('drops a torn last line and says how many bytes', () => {
    const text = `${header}\n${line(0)}\n${line(1)}\n${line(2).slice(0, 20)}`;
    const c = parseResultsText(text, 'x.jsonl');
    assert.equal(c.results.length, 2);
    assert.equal(c.torn_bytes, 20);
    assert.equal(c.good_bytes, Buffer.byteLength(text) - 20);
  });

  it('truncating the torn line lets appended lines start clean', () => {
    const path = join(dir, 'torn.jsonl');
    appendFileSync(path, `${header}\n${line(0)}\n{"record":"ca`);
    const c = readResultsFile(path);
    truncateResultsFile(path, c.good_bytes);
    appendFileSync(path, `${line(1)}\n`);
    assert.equal(readResultsFile(path).results.length, 2);
    assert.ok(readFileSync(path, 'utf8').endsWith('}\n'));
  });

  it('a file that starts with a BOM: good_bytes is an offset in the file, so truncating there keeps every whole line', () => {
    const path = join(dir, 'torn-bom.jsonl');
    const whole = `\ufeff${header}\n${line(0)}\n`;
    appendFileSync(path, `${whole}{"record":"ca`);
    const c = readResultsFile(path);
    assert.equal(c.good_bytes, Buffer.byteLength(whole));
    truncateResultsFile(path, c.good_bytes);
    assert.equal(readFileSync(path, 'utf8'), whole);
  });

  it('a bad line in the middle is not a crash artefact: refused with its line number', () => {
    assert.throws(() => parseResultsText(`${header}\n{oops\n${line(1)}\n`, 'x.jsonl'), /x\.jsonl: line 2: not valid JSON/);
    assert.throws(() => parseResultsText(`${line(1)}\n`, 'x.jsonl'), /before the header/);
  });
});
