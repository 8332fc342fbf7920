import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Answer, Case, Suite, Target } from '../../src/core/types.js';
import type { Meter } from '../../src/meters/meter.js';
import { PowerTrace } from '../../src/meters/power-trace.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { run } from '../../src/runner/run.js';
import { cli } from '../helpers/cli.js';
import { setEnergy, writePowercapTree } from './powercap-tree.js';

function suiteOf(n: number): Suite {
  const cases: Case[] = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, prompt: `q${i}`, expected: `a${i}`, dataset: 'toy', weight: 1, tags: [] }));
  return { name: 'toy', version: '1', scorer: 'substring', cases, source: 'test' };
}

/** Answers correctly after `ms`, so the scored passes last long enough to be traced. */
function slowTarget(ms: number): Target {
  return {
    id: 'slow',
    kind: 'slow',
    async answer(req): Promise<Answer> {
      await sleep(ms);
      return { text: String(req.case.expected) };
    },
    describe: () => ({ kind: 'slow' }),
  };
}

describe('power trace over a live powercap tree', () => {
  const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1_000_000 }]);
  const home = mkdtempSync(join(tmpdir(), 'jb-trace-'));
  after(() => {
    tree.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  it('rows for idle, warmup and scored; the scored rows integrate to the gross joules the report gives, within 1 %', async () => {
    let uj = 1_000_000;
    // About 50 W: 0.1 J every 2 ms.
    const writer = setInterval(() => setEnergy(tree.root, 'intel-rapl:0', (uj += 100_000)), 2);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 50 });
    const trace = new PowerTrace(meter, 100);
    try {
      const out = await run({ suite: suiteOf(10), target: slowTarget(100), meter, warmup: 1, idle_ms: 300, trace });
      const r = out.report;
      const pt = r.power_trace!;
      assert.deepEqual(pt.domains, ['package-0']);
      assert.deepEqual([...new Set(pt.rows.map((row) => row[1]))], ['idle', 'warmup', 'scored']);
      const scored = pt.rows.filter((row) => row[1] === 'scored');
      const integral_j = scored.reduce((t, row) => t + ((row[3] as number) * row[2]) / 1000, 0);
      assert.ok(r.gross_joules! > 10, `gross ${r.gross_joules}`);
      assert.ok(Math.abs(integral_j - r.gross_joules!) / r.gross_joules! < 0.01, `trace ${integral_j} J vs gross ${r.gross_joules} J`);
      // The CSV has every row, each ending at a UTC time.
      const lines = trace.csv().trim().split('\n');
      assert.equal(lines[0], 't_utc,phase,package-0_w');
      assert.equal(lines.length - 1, trace.rows.length);
      assert.match(lines[1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,idle,\d+(\.\d+)?$/);
    } finally {
      clearInterval(writer);
      await meter.close?.();
    }
  });

  it('run --power-trace FILE.csv writes the CSV and embeds the trace; a meter reading no hardware is refused (exit 2)', async () => {
    const csv = join(home, 'p.csv');
    const out = join(home, 'r.json');
    const r = await cli(['run', '--suite', 'router', '--limit', '3', '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '50', '--power-trace', csv, '-q', '--no-history', '-o', out], { env: { JOULEBENCH_HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(csv, 'utf8');
    assert.match(text, /^t_utc,phase,package-0_w\n/);
    assert.match(text, /,idle,/);
    assert.match(text, /,scored,/);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')).power_trace.domains, ['package-0']);
    const bad = await cli(['run', '--suite', 'router', '--meter', 'model', '--power-trace', csv, '-q', '--no-history'], { env: { JOULEBENCH_HOME: home } });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--power-trace/);
  });
  it('report RESULTS.jsonl gives the run its power_trace back; a resume line drops an earlier trace; a bad line is exit 2', async () => {
    const out = join(home, 'rt.json');
    const results = join(home, 'rt.results.jsonl');
    const env = { env: { JOULEBENCH_HOME: home } };
    const r = await cli(['run', '--suite', 'router', '--limit', '3', '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '50', '--power-trace', join(home, 'rt.csv'), '-q', '--no-history', '-o', out], env);
    assert.equal(r.code, 0, r.stderr);
    const back = await cli(['report', '--json', results], env);
    assert.equal(back.code, 0, back.stderr);
    assert.equal(back.stdout, readFileSync(out, 'utf8'), 'the whole report, byte for byte, power_trace included');
    const lines = readFileSync(results, 'utf8').trim().split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"record":"power_trace"'));
    assert.ok(at > 0, 'the trace is a line of the results file');
    // A process that resumed the file wrote the report it ends with: a trace before its resume line is not that report's.
    const resumed = join(home, 'resumed.results.jsonl');
    writeFileSync(resumed, [...lines.slice(0, at + 1), '{"record":"resume","finished":3,"state":"none"}', ...lines.slice(at + 1)].join('\n') + '\n');
    const after = await cli(['report', '--json', resumed], env);
    assert.equal(after.code, 0, after.stderr);
    assert.equal((JSON.parse(after.stdout) as { power_trace?: unknown }).power_trace, undefined);
    const bad = join(home, 'bad.results.jsonl');
    const line = JSON.parse(lines[at]!) as { power_trace: { rows: unknown[][] } };
    line.power_trace.rows[0]![1] = 'busy';
    writeFileSync(bad, [...lines.slice(0, at), JSON.stringify(line), ...lines.slice(at + 1)].join('\n') + '\n');
    const refused = await cli(['report', '--json', bad], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
    assert.match(refused.stderr, /bad\.results\.jsonl: the power_trace line's power_trace\.rows\[0\] is not/);
  });
});

it("a meter read that fails between phases surfaces from the trace's end(), not as an unhandled rejection", async () => {
  let starts = 0;
  const window = { stop: async () => ({ joules: 1, window_ms: 10, by_domain: {} }) };
  const meter = {
    id: 'failing',
    floor_ms: 1,
    start: async () => {
      if (++starts === 3) throw new Error('counter unreadable');
      return window;
    },
  } as unknown as Meter;
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown): void => void unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const trace = new PowerTrace(meter, 5);
    await trace.begin('scored');
    await sleep(60);
    await assert.rejects(trace.end(), /counter unreadable/);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
