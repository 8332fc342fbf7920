import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { BenchReport } from '../../src/core/aggregate.js';
import type { Target } from '../../src/core/types.js';
import { isJoulebenchError } from '../../src/core/errors.js';
import { JsonlResultsFile, MemorySink, truncateResultsFile } from '../../src/runner/results-file.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { readResumeFile } from '../../src/runner/resume-index.js';
import { run } from '../../src/runner/run.js';
import { streamJsonlSuite } from '../../src/suites/jsonl-stream.js';
import { loadSuite } from '../../src/suites/loader.js';
import { CacheStage } from '../../src/targets/cascade/cache.js';
import type { Cascade } from '../../src/targets/cascade/cascade.js';
import { createEchoTarget } from '../../src/targets/cascade/echo.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-stream-resume-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The bundled router suite written out as a JSONL file, streamed from it.
const suiteFile = join(dir, 'router.jsonl');
writeFileSync(suiteFile, loadSuite('router').cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
const N = loadSuite('router').cases.length;

function timeless(r: BenchReport): Record<string, unknown> {
  const { latency_p50_ms: _a, latency_p95_ms: _b, latency_p99_ms: _c, ttft_p50_ms: _d, ttft_p95_ms: _e, ci, repeat_spread, ...rest } = r as BenchReport & { repeat_spread?: Record<string, unknown> | null };
  const { latency_p50_ms: _f, latency_p95_ms: _g, latency_p99_ms: _h, reasons, ...ciRest } = ci;
  const { latency_p50_ms: _i, latency_p95_ms: _j, latency_p99_ms: _k, ...reasonsRest } = reasons;
  const spread = repeat_spread ? { ...repeat_spread, latency_p50_ms: null, latency_p95_ms: null } : repeat_spread;
  // Throughput and the scored wall time are timings too, and a resumed run has neither (its wall time covers only part of the cases).
  delete (rest as Record<string, unknown>).throughput;
  delete (rest as Record<string, unknown>).suite_window_ms;
  return { ...rest, ci: { ...ciRest, reasons: reasonsRest }, repeat_spread: spread };
}

async function interrupted(path: string, target: Target, stopAfter: number, o: { warmup: number; repeats: number; concurrency: number }): Promise<void> {
  const ac = new AbortController();
  const sink = new JsonlResultsFile(path);
  let n = 0;
  await assert.rejects(
    run({ suite: streamJsonlSuite(suiteFile), target, ...o, sink, signal: ac.signal, onResult: () => { if (++n >= stopAfter) ac.abort(); } }),
    /aborted/,
  );
  sink.close();
}

/** Resumes as `run --resume` does: the results file indexed line by line, a torn tail cut off. */
async function resumed(path: string, target: Target, o: { warmup: number; repeats: number; concurrency: number }) {
  const suite = streamJsonlSuite(suiteFile);
  const file = readResumeFile(path, suite.stream.count);
  if (file.torn_bytes > 0) truncateResultsFile(path, file.good_bytes);
  const sink = new JsonlResultsFile(path, { append: true });
  try {
    return await run({ suite, target, ...o, sink, resume: { header: file.header, finished: file.finished, path } });
  } finally {
    file.finished.close();
    sink.close();
  }
}

describe('resume over a streamed suite, the results file indexed instead of held', () => {
  for (const [stopAfter, concurrency] of [[17, 1], [N + 41, 1], [N * 3 - 1, 1], [N + 41, 3]] as const) {
    it(`stopped after ${stopAfter} results at concurrency ${concurrency}: the uninterrupted report and cache, nothing run twice`, async () => {
      const o = { warmup: 1, repeats: 3, concurrency };
      const full = createReferenceCascade();
      const reference = await run({ suite: streamJsonlSuite(suiteFile), target: full, ...o });
      const path = join(dir, `stop-${stopAfter}-${concurrency}.jsonl`);
      await interrupted(path, createReferenceCascade(), stopAfter, o);
      // A kill mid-write leaves a torn line: it is cut off, never read as a result.
      appendFileSync(path, '{"record":"case","phase":"sco');
      const target = createReferenceCascade();
      const out = await resumed(path, target, o);
      assert.deepEqual(timeless(out.report), timeless(reference.report));
      if (concurrency === 1) assert.deepEqual((target.stages[0] as CacheStage).keys(), ((full as Cascade).stages[0] as CacheStage).keys());
      const file = readResultsFile(path);
      assert.equal(file.torn_bytes, 0);
      const keys = file.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
      assert.equal(keys.length, 4 * N);
      assert.equal(new Set(keys).size, keys.length);
      assert.equal(file.other.find((x) => x.record === 'end')?.scored, 3 * N);
    });
  }

  it('a target without restore gets its re-warm pass from the stream', async () => {
    const o = { warmup: 1, repeats: 2, concurrency: 1 };
    const path = join(dir, 'echo.jsonl');
    await interrupted(path, createEchoTarget(), N + 20, o);
    const ref = await run({ suite: streamJsonlSuite(suiteFile), target: createEchoTarget(), ...o });
    const out = await resumed(path, createEchoTarget(), o);
    assert.deepEqual(timeless(out.report), timeless(ref.report));
    const file = readResultsFile(path);
    assert.equal(file.other.filter((x) => x.record === 'rewarm').length, N);
    assert.equal(file.results.length, 3 * N);
  });

  it('reads every finished line back by its byte offset: a BOM, CRLF endings, blank lines, multi-byte text, lines across 64 KiB chunks', () => {
    const path = join(dir, 'offsets.jsonl');
    const lines = readResultsFile(join(dir, 'echo.jsonl'));
    const M = 400;
    const cases = Array.from({ length: M }, (_, i) => ({ ...lines.results[0]!, phase: 'scored' as const, pass: 0, index: i, case_id: `c${i}`, response: `${'é✓𝄞'.repeat(i % 7)}${'x'.repeat((i * 97) % 3000)}` }));
    const header = JSON.stringify({ ...lines.header, warmup: 0, repeats: 1, cases: M });
    const body = cases.map((c, i) => JSON.stringify(c) + (i % 3 === 0 ? '\r\n' : i % 5 === 0 ? '\n\n' : '\n')).join('');
    writeFileSync(path, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(header + '\n' + body)]));
    const f = readResumeFile(path, M);
    try {
      assert.ok(body.length > 3 * 65536, 'lines cross several chunk boundaries');
      assert.equal(f.finished.size, M);
      for (const c of cases) assert.deepEqual(f.finished.get('scored', 0, c.index), c);
    } finally {
      f.finished.close();
    }
  });

  it('the index refuses a repeated key, naming both lines, and reads each finished line back as written', () => {
    const path = join(dir, 'dup.jsonl');
    const lines = readResultsFile(join(dir, 'echo.jsonl'));
    const header = JSON.stringify(lines.header);
    const first = { ...lines.results[0]!, response: 'first é' };
    const second = { ...lines.results[0]!, response: 'second' };
    writeFileSync(path, [header, JSON.stringify(first), JSON.stringify(lines.results[1]), JSON.stringify(second)].join('\n') + '\n');
    assert.throws(
      () => readResumeFile(path, N),
      (e: unknown) => isJoulebenchError(e) && e.code === 'E_RESULTS' && e.message.startsWith(`${path}:2 and ${path}:4: two case lines for ${first.phase} pass ${first.pass} index ${first.index}`),
    );
    writeFileSync(path, [header, JSON.stringify(first), JSON.stringify(lines.results[1])].join('\n') + '\n');
    const f = readResumeFile(path, N);
    try {
      assert.equal(f.case_lines, 2);
      assert.equal(f.finished.size, 2);
      assert.deepEqual(f.finished.get(first.phase, first.pass, first.index), first);
      assert.deepEqual(f.finished.get(lines.results[1]!.phase, lines.results[1]!.pass, lines.results[1]!.index), lines.results[1]);
      assert.equal(f.finished.get('scored', 0, N - 1), undefined);
      assert.equal(f.finished.get('scored', 0, N + 5), undefined);
      assert.equal(f.finished.firstMissing(first.phase, first.pass, N), first.phase === lines.results[1]!.phase ? 2 : 1);
      // The file rewritten under the run: a line read back must be the one indexed, or the run stops.
      writeFileSync(path, [header, JSON.stringify(lines.results[1]), JSON.stringify(first)].join('\n') + '\n');
      assert.throws(
        () => f.finished.get(first.phase, first.pass, first.index),
        (e: unknown) => isJoulebenchError(e) && e.code === 'E_RESULTS' && /changed while the run went on/.test(e.message),
      );
    } finally {
      f.finished.close();
    }
  });
});

describe('a streamed suite edited while the run reads it', () => {
  it('stops the run with E_SUITE and no end record: the results file reads as interrupted, never complete', async () => {
    const path = join(dir, 'edited-mid-run.jsonl');
    // Larger than one 64 KiB read, so the end of the file is read after the edit.
    const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `e${i}`, prompt: `p${i}`, expected: `p${i}` }));
    writeFileSync(path, lines.join('\n') + '\n');
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    const suite = streamJsonlSuite(path);
    const sink = new MemorySink();
    let n = 0;
    await assert.rejects(
      run({
        suite,
        target: createEchoTarget(),
        sink,
        onResult: () => {
          // After the first case: the last case's prompt changes, same size, same mtime.
          if (++n === 1) {
            writeFileSync(path, lines.slice(0, -1).concat(lines.at(-1)!.replace('"p4999"', '"q4999"')).join('\n') + '\n');
            utimesSync(path, 1_700_000_000, 1_700_000_000);
          }
        },
      }),
      (e: unknown) => isJoulebenchError(e) && e.code === 'E_SUITE' && /changed on disk since the run checked it/.test(e.message),
    );
    assert.equal(sink.notes.some((x) => x.record === 'end'), false);
    assert.ok(sink.results.length > 0 && sink.results.length < 5000, `${sink.results.length} cases ran before the change was seen`);
    assert.equal(sink.results.some((r) => r.case_id === 'e4999'), false, 'the changed case was never run');
  });
});
