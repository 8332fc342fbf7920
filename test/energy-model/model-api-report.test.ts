import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { compare } from '../../src/core/compare.js';
import { armFrontiers, type Arm } from '../../src/core/frontier.js';
import { caseLine } from '../../src/runner/case-line.js';
import { cli } from '../helpers/cli.js';
import { CTX, result } from '../helpers/results.js';

/** A case whose energy came from the model:api estimate: the midpoint, with its range. */
const api = (joules: number, low: number, high: number, passed = true) =>
  result({ joules, energy_source: 'model:api', joules_range: { low, high }, passed });

describe('model:api in the report', () => {
  it('the range rides through to J/correct: Σ low and Σ high over the weighted correct', () => {
    const r = aggregate([api(2, 1, 3), api(4, 2, 6), api(6, 3, 9, false)], { ...CTX, meter: 'model' });
    assert.equal(r.energy_source, 'model:api');
    assert.equal(r.total_joules, 12);
    assert.equal(r.joules_per_correct, 6);
    assert.deepEqual(r.energy_model_range, { method: 'min-max', total_joules: { low: 6, high: 18 }, joules_per_correct: { low: 3, high: 9 } });
    // A model is marginal: no idle to subtract, net is gross.
    assert.equal(r.idle, 'marginal');
    assert.equal(r.net_joules, 12);
    assert.equal(r.net_joules_per_correct, 6);
  });

  it('nothing correct: the J/correct range is null like J/correct, never Infinity', () => {
    const r = aggregate([api(2, 1, 3, false)], CTX);
    assert.equal(r.joules_per_correct, null);
    assert.equal(r.energy_model_range?.joules_per_correct, null);
  });

  it('never summed with a measured source: the total is null, and the parts are listed', () => {
    const r = aggregate([api(2, 1, 3), result({ joules: 5, energy_source: 'rapl' })], CTX);
    assert.equal(r.energy_source, 'mixed');
    assert.deepEqual(r.energy_sources, { 'model:api': 1, rapl: 1 });
    assert.equal(r.total_joules, null);
    assert.equal(r.joules_per_correct, null);
    assert.equal(r.energy_model_range, undefined);
    assert.equal(r.by_dataset.d!.total_joules, null);
  });

  it('reports without a modelled range keep their bytes: no energy_model_range key at all', () => {
    const r = aggregate([result({ joules: 5, energy_source: 'rapl' })], CTX);
    assert.equal('energy_model_range' in r, false);
  });

  it('the results line carries joules_range, in the generated and the plain encoder alike', () => {
    const line = caseLine(api(2, 1, 3));
    const parsed = JSON.parse(line) as Record<string, unknown>;
    assert.deepEqual(parsed.joules_range, { low: 1, high: 3 });
    assert.equal(parsed.energy_source, 'model:api');
    assert.equal('joules_range' in (JSON.parse(caseLine(result())) as object), false);
  });
});

describe('model:api is never compared with a measurement', () => {
  it('compare: no J/correct change between model:api and rapl', () => {
    const side = (j: number, source: string) => ({ joules_per_correct: j, latency_p95_ms: 100, accuracy_pct: 80, energy_source: source });
    const c = compare(side(10, 'model:api'), side(5, 'rapl'));
    assert.equal(c.joules_per_correct_pct, null);
    assert.equal(c.energy_sources_match, false);
    assert.equal(compare(side(10, 'model:api'), side(5, 'model:api')).joules_per_correct_pct, -50);
    assert.equal(compare(side(10, 'model:api'), side(5, 'model')).joules_per_correct_pct, null, 'nor with a cascade cost model');
  });
  it('frontier: an energy frontier over model:api and measured arms is withheld, with the reason', () => {
    const arm = (id: string, jpc: number, source: string): Arm => ({
      id,
      accuracy_pct: 80,
      joules_per_correct: jpc,
      usd_per_correct: null,
      latency_p95_ms: 100,
      energy_source: source,
      below_floor_count: 0,
      asked: 'sha256:same',
    });
    const f = armFrontiers([arm('hosted', 10, 'model:api'), arm('local', 50, 'nvml')]);
    assert.deepEqual(f.frontiers.energy.frontier, []);
    assert.match(f.frontiers.energy.verdicts[0]!.excluded!, /different sources \(model:api, nvml\)/);
    assert.deepEqual(f.frontiers.latency.frontier.sort(), ['hosted', 'local']);
  });
});

describe('joulebench compare (spawned): model:api against a measurement', () => {
  it('prints no J/correct change and says the sources differ', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-cmp-api-'));
    try {
      const report = (jpc: number, source: string) => ({
        case_count: 10, total_joules: jpc * 8, joules_per_correct: jpc, accuracy_pct: 80,
        latency_p50_ms: 1, latency_p95_ms: 100, latency_p99_ms: 1,
        stage_distribution: { cache: 0, kv: 0, graph: 0, neural: 10 }, energy_source: source,
      });
      writeFileSync(join(dir, 'hosted.json'), JSON.stringify(report(30, 'model:api')));
      writeFileSync(join(dir, 'local.json'), JSON.stringify(report(90, 'nvml')));
      const r = await cli(['compare', '--baseline', join(dir, 'hosted.json'), '--candidate', join(dir, 'local.json')]);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { joules_per_correct_pct: number | null; energy_sources_match: boolean | null };
      assert.equal(out.joules_per_correct_pct, null);
      assert.equal(out.energy_sources_match, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
