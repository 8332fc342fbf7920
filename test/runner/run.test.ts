import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Suite, Target } from '../../src/core/types.js';
import type { Meter } from '../../src/meters/meter.js';
import { run } from '../../src/runner/run.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-run-'));
const tiny: Suite = {
  name: 'tiny',
  version: '1',
  scorer: 'substring',
  source: 'test',
  cases: [
    { id: 'a', prompt: 'say A', expected: 'a', dataset: 'tiny', weight: 1, tags: [] },
    { id: 'b', prompt: 'say B', expected: 'zzz', dataset: 'tiny', weight: 1, tags: [] },
    { id: 'c', prompt: 'say C', expected: null, dataset: 'tiny', weight: 1, tags: [] },
  ],
};
const echo: Target = {
  id: 'echo-test',
  kind: 'test',
  answer: async (r) => ({ text: r.prompt, energy: { joules: 2, source: 'model' } }),
  describe: () => ({ kind: 'test' }),
};

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('run', () => {
  it('records warmup passes with phase "warmup" and never scores or aggregates them', async () => {
    const path = join(dir, 'warm.jsonl');
    const sink = new JsonlResultsFile(path);
    const out = await run({ suite: tiny, target: echo, warmup: 2, repeats: 1, sink });
    sink.close();
    const ls = lines(path);
    assert.equal(ls[0]!.record, 'header');
    assert.deepEqual(ls.at(-1), { record: 'end', scored: 3 }, 'a finished run says so');
    // Before it, what the report took from beyond the cases (the echo target's energy is modelled: no idle, no window).
    assert.deepEqual({ ...ls.at(-2), scored_wall_ms: 0 }, { record: 'run_measures', idle: { status: 'marginal', watts: null }, suite: null, scored_wall_ms: 0 });
    const cases = ls.slice(1, -2);
    assert.equal(cases.length, 9);
    assert.deepEqual(
      cases.map((l) => `${l.phase}:${l.pass}:${l.index}`),
      ['warmup:0:0', 'warmup:0:1', 'warmup:0:2', 'warmup:1:0', 'warmup:1:1', 'warmup:1:2', 'scored:0:0', 'scored:0:1', 'scored:0:2'],
    );
    assert.equal(out.report.case_count, 3);
    assert.equal(out.report.total_joules, 6);
    assert.equal(out.report.accuracy_pct, 50);
    assert.equal(out.report.joules_per_correct, 6);
    assert.equal(out.report.warmup, 2);
    assert.equal(out.report.warmup_usd, null, 'the target billed nothing');
  });

  it('reports what warmup passes billed apart from the scored cost', async () => {
    const priced: Target = { ...echo, answer: async (r) => ({ text: r.prompt, cost_usd: 0.5 }) };
    const out = await run({ suite: tiny, target: priced, warmup: 1 });
    assert.equal(out.report.total_usd, 1.5);
    assert.equal(out.report.warmup_usd, 1.5);
  });

  it('with flush_ms 0, appends each result to the file before the next case starts', async () => {
    const path = join(dir, 'stream.jsonl');
    const sink = new JsonlResultsFile(path, { flush_ms: 0 });
    const seen: number[] = [];
    const spy: Target = {
      ...echo,
      answer: async (r) => {
        seen.push(readFileSync(path, 'utf8').trim().split('\n').length);
        return { text: r.prompt };
      },
    };
    await run({ suite: tiny, target: spy, sink });
    sink.close();
    assert.deepEqual(seen, [1, 2, 3]); // header, then one more finished case each time
  });

  it('by default, a result is on disk before the next case starts once the case took longer than flush_ms', async () => {
    const path = join(dir, 'group.jsonl');
    const sink = new JsonlResultsFile(path, { flush_ms: 5 });
    const seen: number[] = [];
    const slow: Target = {
      ...echo,
      answer: async (r) => {
        seen.push(readFileSync(path, 'utf8').trim().split('\n').length);
        await new Promise((res) => setTimeout(res, 15));
        return { text: r.prompt };
      },
    };
    await run({ suite: tiny, target: slow, sink });
    // A finished line waits at most flush_ms: by the time the next case has run 15 ms it is written.
    await new Promise((res) => setTimeout(res, 15));
    assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, 6, 'header, three cases, run_measures, end');
    sink.close();
    assert.deepEqual(seen, [1, 2, 3], 'each slow case is on disk before the next starts');
  });

  it('keeps that promise when the meter window takes a while to close', async () => {
    // The case's clock reading comes before the window closes; a flush meanwhile must not make it look stale.
    const slowStop = {
      id: 'slow-stop',
      source: 'rapl',
      probe: async () => ({ available: true }),
      start: async () => ({
        stop: async () => {
          await new Promise((res) => setTimeout(res, 5));
          return { joules: 1, source: 'rapl', window_ms: 5, below_floor: false };
        },
      }),
      describe: () => ({}),
    } as unknown as Meter;
    const path = join(dir, 'slow-stop.jsonl');
    const sink = new JsonlResultsFile(path, { flush_ms: 2 });
    const seen: number[] = [];
    const quick: Target = { ...echo, answer: async (r) => (seen.push(readFileSync(path, 'utf8').trim().split('\n').length), { text: r.prompt }) };
    const many: Suite = { ...tiny, cases: Array.from({ length: 6 }, (_, i) => ({ ...tiny.cases[2]!, id: `m${i}` })) };
    await run({ suite: many, target: quick, meter: slowStop, sink, idle_ms: 0 });
    sink.close();
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 6], 'each case (over 5 ms with its window) is on disk before the next starts');
  });

  it('writes a slow case at once even when its line first had to make room in the buffer', async () => {
    const path = join(dir, 'room.jsonl');
    const sink = new JsonlResultsFile(path, { flush_ms: 2 });
    const seen: number[] = [];
    const bulky: Target = {
      ...echo,
      answer: async (r) => {
        seen.push(readFileSync(path, 'utf8').trim().split('\n').length);
        await new Promise((res) => setTimeout(res, 10));
        return { text: 'x'.repeat(400_000) + r.prompt };
      },
    };
    await run({ suite: tiny, target: bulky, sink });
    sink.close();
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('groups fast results and writes them all by close', async () => {
    const path = join(dir, 'fast.jsonl');
    const sink = new JsonlResultsFile(path, { flush_ms: 10_000 });
    await run({ suite: tiny, target: echo, sink, warmup: 1 });
    sink.close();
    assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, 9, 'header, six cases, run_measures, end');
  });

  it('runs a target that answers synchronously, and records one that throws synchronously as an error', async () => {
    const sync: Target = {
      ...echo,
      answer: (r) => {
        if (r.case.id === 'b') throw Object.assign(new Error('sync failure'), { code: 'E_SYNC' });
        return { text: r.prompt, energy: { joules: 1, source: 'model' } };
      },
    };
    const path = join(dir, 'sync.jsonl');
    const sink = new JsonlResultsFile(path);
    const out = await run({ suite: tiny, target: sync, sink });
    sink.close();
    assert.deepEqual(
      out.results.map((r) => [r.response, r.passed, r.error?.code ?? null]),
      [['say A', true, null], [null, false, 'E_SYNC'], ['say C', null, null]],
    );
    const cases = lines(path).filter((l) => l.record === 'case');
    assert.deepEqual(cases, JSON.parse(JSON.stringify(out.results)), 'the file holds exactly the results');
  });

  it('awaits a target whose answer is a thenable from another promise library', async () => {
    const thenable: Target = {
      ...echo,
      answer: (r) => ({ then: (ok: (a: { text: string }) => void) => setTimeout(() => ok({ text: r.prompt }), 1) }) as unknown as Promise<{ text: string }>,
    };
    const out = await run({ suite: tiny, target: thenable });
    assert.deepEqual(out.results.map((r) => r.response), ['say A', 'say B', 'say C']);
  });

  it('gives timers and signal handlers a turn during a long pass of synchronous answers', async () => {
    // 400 cases of ~0.1 ms each, never awaited: without yielding, the timer could only fire after the run.
    const many: Suite = { ...tiny, cases: Array.from({ length: 400 }, (_, i) => ({ ...tiny.cases[0]!, id: `s${i}` })) };
    const busy: Target = {
      ...echo,
      answer: (r) => {
        const until = performance.now() + 0.1;
        while (performance.now() < until);
        return { text: r.prompt };
      },
    };
    let fired = false;
    let firedBeforeLastCase = false;
    setTimeout(() => (fired = true), 1);
    await run({ suite: many, target: busy, onResult: (_r, p) => p.done === p.total && (firedBeforeLastCase = fired) });
    assert.ok(firedBeforeLastCase, 'the timer ran while the pass was going');
  });

  it('gives way between passes of a small suite and in concurrent passes too', async () => {
    const busy: Target = {
      ...echo,
      answer: (r) => {
        const until = performance.now() + 1;
        while (performance.now() < until);
        return { text: r.prompt };
      },
    };
    for (const concurrency of [1, 3]) {
      let ticks = 0;
      const tick = setInterval(() => ticks++, 5);
      // 3 cases × 40 passes of ~1 ms each: ~120 ms in which the interval must get to run.
      await run({ suite: tiny, target: busy, repeats: 40, concurrency });
      clearInterval(tick);
      assert.ok(ticks >= 3, `concurrency ${concurrency}: the interval ran ${ticks} times during ~120 ms of synchronous answers`);
    }
  });

  it('records a synchronous target that returns nothing as an empty answer, as before, without failing the run', async () => {
    const nothing: Target = { ...echo, answer: () => undefined as unknown as { text: string } };
    const out = await run({ suite: tiny, target: nothing });
    assert.deepEqual(
      out.results.map((r) => [r.response, r.passed]),
      [[null, false], [null, false], [null, null]],
    );
  });

  it('writes a result larger than the write buffer whole', async () => {
    const big: Target = { ...echo, answer: (r) => ({ text: `${r.prompt} ${'é'.repeat(700_000)}` }) };
    const path = join(dir, 'big.jsonl');
    const sink = new JsonlResultsFile(path);
    const out = await run({ suite: tiny, target: big, sink });
    sink.close();
    const cases = lines(path).filter((l) => l.record === 'case');
    assert.equal(cases.length, 3);
    assert.deepEqual(cases, JSON.parse(JSON.stringify(out.results)));
  });

  it('measures latency with the injected clock', async () => {
    let t = 0;
    const clock = { now: () => t };
    const slow: Target = {
      ...echo,
      answer: async (r) => {
        t += r.case.id === 'a' ? 5 : r.case.id === 'b' ? 120.25 : 40;
        return { text: r.prompt };
      },
    };
    const out = await run({ suite: tiny, target: slow, clock });
    assert.deepEqual(
      out.results.map((r) => r.latency_ms),
      [5, 120.25, 40],
    );
    assert.equal(out.report.latency_p50_ms, 40);
    assert.equal(out.report.latency_p99_ms, 120);
  });

  it('records a failing case as an error, counts it incorrect, and goes on', async () => {
    const flaky: Target = {
      ...echo,
      answer: async (r) => {
        if (r.case.id === 'a') throw Object.assign(new Error('HTTP 500: upstream\nstack...'), { status: 500, code: 'E_HTTP' });
        return { text: r.prompt };
      },
    };
    const out = await run({ suite: tiny, target: flaky });
    assert.deepEqual(out.results[0]!.error, { code: 'E_HTTP', message: 'HTTP 500: upstream', status: 500 });
    assert.equal(out.results[0]!.passed, false);
    assert.equal(out.results[0]!.joules, null);
    assert.equal(out.results[0]!.energy_source, 'none');
    assert.equal(out.results.length, 3);
    assert.equal(out.report.error_count, 1);
  });

  it('router after one warmup pass resolves at all four stages, each case at its intended stage', async () => {
    const out = await run({ suite: loadSuite('router'), target: createReferenceCascade(), warmup: 1 });
    for (const r of out.results) {
      const intended = /^rt-(cache|kv|graph|neural)-/.exec(r.case_id)![1];
      assert.equal(r.stage, intended, `${r.case_id} resolved at ${r.stage}`);
    }
    assert.deepEqual(out.report.stage_distribution, { cache: 6, kv: 7, graph: 8, neural: 9 });
    assert.equal(out.report.accuracy_pct, 100);
    assert.equal(out.report.energy_source, 'model');
  });

  it('without warmup the cache cases fall through to neural', async () => {
    const out = await run({ suite: loadSuite('router'), target: createReferenceCascade(), warmup: 0 });
    assert.equal(out.report.stage_distribution.cache, 0);
    assert.equal(out.report.stage_distribution.neural, 15);
  });

  it('gives the same report for the same inputs with a deterministic clock', async () => {
    const clock = { now: () => 0 };
    const a = await run({ suite: loadSuite('all'), target: createReferenceCascade(), warmup: 1, clock });
    const b = await run({ suite: loadSuite('all'), target: createReferenceCascade(), warmup: 1, clock });
    assert.equal(JSON.stringify(a.report), JSON.stringify(b.report));
    assert.equal(a.header.config_digest, b.header.config_digest);
  });

  it('rejects bad pass counts with a usage error', async () => {
    await assert.rejects(run({ suite: tiny, target: echo, warmup: -1 }), /warmup must be an integer >= 0/);
    await assert.rejects(run({ suite: tiny, target: echo, repeats: 0 }), /repeats must be an integer >= 1/);
  });
});
