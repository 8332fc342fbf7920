import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Answer, Suite, Target } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { MemorySink } from '../../src/runner/results-file.js';

const suite: Suite = {
  name: 't', version: '1', scorer: 'substring', source: 'test',
  cases: Array.from({ length: 12 }, (_, i) => ({ id: `c${i}`, prompt: `p${i}`, expected: `p${i}`, dataset: 't', weight: 1, tags: [] })),
};

/** Answers after a delay that shrinks with the index, so later cases can finish first; counts cases in flight. */
function slowTarget(): Target & { maxInFlight: number } {
  let inFlight = 0;
  const t = {
    id: 'slow', kind: 'test', maxInFlight: 0,
    async answer(req: { prompt: string; case: { id: string } }): Promise<Answer> {
      inFlight++;
      t.maxInFlight = Math.max(t.maxInFlight, inFlight);
      const i = Number(req.case.id.slice(1));
      await new Promise((ok) => setTimeout(ok, 2 + (12 - i) * 2));
      inFlight--;
      return { text: req.prompt, stage: 'neural', energy: { joules: 1, source: 'model' } };
    },
    describe: () => ({ kind: 'test' }),
  };
  return t;
}

test('default is sequential: one case in flight, energy attribution exclusive', async () => {
  const t = slowTarget();
  const { report } = await run({ suite, target: t });
  assert.equal(t.maxInFlight, 1);
  assert.equal(report.energy_attribution, 'exclusive');
  assert.equal(report.concurrency, 1);
});

test('--concurrency 4: at most 4 in flight, written as each finishes, report in case order, shared', async () => {
  const t = slowTarget();
  const sink = new MemorySink();
  const seq = await run({ suite, target: slowTarget() });
  const { report, results } = await run({ suite, target: t, concurrency: 4, sink });
  assert.equal(t.maxInFlight, 4);
  assert.deepEqual(results.map((r) => r.index), [...Array(12).keys()]);
  assert.notDeepEqual(sink.results.map((r) => r.index), [...Array(12).keys()], 'the sink saw finishing order');
  assert.equal(report.energy_attribution, 'shared');
  assert.equal(report.accuracy_pct, seq.report.accuracy_pct);
  assert.equal(report.total_joules, seq.report.total_joules);
  assert.notEqual(sink.headerLine!.config_digest, seq.header.config_digest, 'concurrency enters the config digest');
});

test('latency is the successful attempt alone: retry overhead is subtracted', async () => {
  const t: Target = {
    id: 'r', kind: 'test',
    async answer(req) {
      await new Promise((ok) => setTimeout(ok, 60));
      return { text: req.prompt, attempts: 2, retry_overhead_ms: 50 };
    },
    describe: () => ({}),
  };
  const one: Suite = { ...suite, cases: suite.cases.slice(0, 1) };
  const { results } = await run({ suite: one, target: t });
  assert.ok(results[0]!.latency_ms < 45, `latency ${results[0]!.latency_ms} excludes the 50 ms overhead`);
  assert.equal(results[0]!.retry_overhead_ms, 50);
  assert.equal(results[0]!.attempts, 2);
});
