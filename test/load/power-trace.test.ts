import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { Case, Suite } from '../../src/core/types.js';
import type { PowerTraceSummary } from '../../src/core/energy.js';
import { runLoad } from '../../src/load/driver.js';
import { PowerTrace } from '../../src/meters/power-trace.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { rebuildReport } from '../../src/report/rebuild.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';
import { writePowercapTree } from '../meters/powercap-tree.js';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];

function suite(): Suite {
  const cases: Case[] = WORDS.map((w, i) => ({ id: `c${i}`, prompt: `say ${w}`, expected: w, dataset: 'load', weight: 1, tags: [] }));
  return { name: 'load-trace', version: '1', scorer: 'substring', cases, source: 'test' };
}

/** Σ watts × dt over the rows of `phases`, J (one domain). */
function integral(t: PowerTraceSummary, phases: string[]): number {
  return t.rows.filter((r) => phases.includes(r[1])).reduce((j, r) => j + ((r[3] as number) * r[2]) / 1000, 0);
}

/** The phases in the order the rows pass through them, repeats merged. */
const phaseRuns = (t: PowerTraceSummary): string[] => t.rows.map((r) => r[1]).filter((p, i, a) => i === 0 || a[i - 1] !== p);

describe('load run --power-trace over a live powercap tree', () => {
  let server: LoadServer;
  let dir: string;
  const power_w = 50;
  const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }]);
  before(async () => {
    server = await startLoadServer(() => ({ ttft_ms: 20, tpot_ms: 10, tokens: 4, answer: 'x' }));
    dir = mkdtempSync(join(tmpdir(), 'jb-load-trace-'));
  });
  after(async () => {
    await server.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rows for warmup, idle, scored and the steady-state window; scored + steady integrate to the run\'s gross joules, steady to its steady window, within 1 %; report FILE gives the trace back', async () => {
    // energy_uj reads as a package drawing `power_w` since t0, computed at read time (no writer to schedule).
    const t0 = performance.now();
    const read = (path: string): string => (path.endsWith('energy_uj') ? `${Math.round((performance.now() - t0) * power_w * 1000)}\n` : readFileSync(path, 'utf8'));
    const meter = createRaplMeter({ root: tree.root, read });
    const trace = new PowerTrace(meter, 50);
    const target = new OpenAITarget({ endpoint: server.url, model: 'm' });
    const results = join(dir, 'trace.results.jsonl');
    const sink = new JsonlResultsFile(results);
    const load = { request_rate: 20, burstiness: 1, seed: 1, max_concurrency: 2, num_requests: 30, percentiles: [50, 99], slo: null, ttft_token: 'content' as const };
    try {
      const out = await runLoad({ suite: suite(), target, meter, sink, load, warmup: 1, idle_ms: 200, pue: 1.5, trace });
      sink.close();
      const r = out.report;
      const pt = r.power_trace!;
      assert.deepEqual(pt.domains, ['package-0']);
      assert.deepEqual(phaseRuns(pt), ['warmup', 'idle', 'scored', 'steady', 'scored']);
      const gross = r.gross_joules!;
      assert.ok(gross > 10, `gross ${gross}`);
      const run_j = integral(pt, ['scored', 'steady']);
      assert.ok(Math.abs(run_j - gross) / gross < 0.01, `trace ${run_j} J vs gross ${gross} J`);
      const lines = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const steady = (lines.find((l) => l.record === 'load_energy')!.steady as { joules: number }).joules;
      const steady_j = integral(pt, ['steady']);
      assert.ok(Math.abs(steady_j - steady) / steady < 0.01, `trace ${steady_j} J vs steady window ${steady} J`);
      assert.deepEqual(lines.find((l) => l.record === 'power_trace')!.power_trace, pt);
      // Boundary layers with --pue: the host (RAPL) measured, the facility modelled.
      assert.deepEqual(r.energy_layers!.covered, ['host', 'idle', 'facility']);
      assert.equal(r.energy_layers!.facility!.pue, 1.5);
      assert.equal(r.suite_window_validity!.meter, 'rapl');
      // The steady-state window (under 5 s, so not the one used) keeps its own validity beside the reason.
      assert.equal(r.load.energy.steady_state, false);
      assert.equal(r.load.energy.steady_window_validity!.meter, 'rapl');
      // `report FILE` gives the run's own report: trace, layers and load block.
      assert.deepEqual(JSON.parse(JSON.stringify(rebuildReport(results).report)), JSON.parse(JSON.stringify(r)));
    } finally {
      await target.close();
      await meter.close?.();
    }
  });

  it('run --request-rate --power-trace FILE.csv --pue writes the CSV, embeds the trace, and report RESULTS gives it back', async () => {
    const csv = join(dir, 'p.csv');
    const out = join(dir, 'r.json');
    const results = join(dir, 'r.results.jsonl');
    const r = await cli(
      ['run', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--suite', 'router', '--limit', '6', '--request-rate', '100', '--max-concurrency', '2',
        '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '50', '--power-trace', csv, '--pue', '1.2', '--results', results, '-q', '--no-history', '-o', out],
      { env: { JOULEBENCH_HOME: dir } },
    );
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(csv, 'utf8');
    assert.match(text, /^t_utc,phase,package-0_w\n/);
    assert.match(text, /,idle,/);
    assert.match(text, /,scored,/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(report.power_trace.domains, ['package-0']);
    assert.equal(report.energy_layers.facility.pue, 1.2);
    const rebuilt = await cli(['report', results, '--json'], { env: { JOULEBENCH_HOME: dir } });
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    const back = JSON.parse(rebuilt.stdout);
    assert.deepEqual(back.power_trace, report.power_trace);
    assert.deepEqual(back.energy_layers, report.energy_layers);
  });
});
