import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { renderReportMarkdown } from '../../src/report/markdown.js';
import { renderReportTable } from '../../src/report/table.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { CTX, result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-tput-'));
let server: FakeServer;
before(async () => {
  server = await startFakeOpenAI(() => ({ kind: 'stream', text: 'Canberra', usage: { prompt_tokens: 5, completion_tokens: 4 }, chunkDelay_ms: 5 }));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('concurrency reports throughput', () => {
  it('--concurrency 4: cases/s and output tokens/s over the scored passes, in the JSON and the table', async () => {
    const out = join(dir, 'c4.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--concurrency', '4', '--meter', 'model', '-o', out, '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { throughput: { wall_ms: number; cases_per_s: number; output_tokens_per_s: number } | null; case_count: number };
    assert.ok(report.throughput, 'throughput present');
    assert.ok(report.throughput.wall_ms > 0);
    assert.ok(Math.abs(report.throughput.cases_per_s - (report.case_count * 1000) / report.throughput.wall_ms) < 0.01);
    assert.ok(Math.abs(report.throughput.output_tokens_per_s - (4 * report.case_count * 1000) / report.throughput.wall_ms) < 0.05);
    assert.match(r.stdout, /throughput\s+[\d.]+ cases\/s\s+[\d.]+ output tokens\/s/);
    // Cases were correct; energy is what is unknown (the endpoint reports none): the line says so.
    assert.doesNotMatch(r.stdout, /nothing correct/);
    assert.match(r.stdout, /J \/ correct\s+n\/a\s+energy unknown for \d+ case/);
  });

  it('a concurrent openai run whose energy comes from the target (no meter window) carries suite_window_ms, its throughput\'s wall time; `report FILE` gives both back', async () => {
    const out = join(dir, 'c2-auto.json');
    // --meter auto: without a readable counter it takes the target's energy and opens no window.
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--concurrency', '2', '-o', out, '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const own = JSON.parse(readFileSync(out, 'utf8')) as { suite_window_ms: number | null; throughput: { wall_ms: number } | null };
    assert.ok(own.throughput !== null, 'throughput present');
    assert.equal(typeof own.suite_window_ms, 'number');
    assert.ok(own.suite_window_ms! > 0 && Math.abs(own.suite_window_ms! - own.throughput.wall_ms) < 50, `suite_window_ms ${own.suite_window_ms}, wall ${own.throughput.wall_ms}`);
    const rebuilt = await cli(['report', '--json', out.replace(/\.json$/, '.results.jsonl')]);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    const again = JSON.parse(rebuilt.stdout) as typeof own;
    assert.deepEqual([again.suite_window_ms, again.throughput], [own.suite_window_ms, own.throughput]);
  });

  it('a sequential run carries its throughput and wall time too; a run whose wall time is unknown has neither', () => {
    const rep = aggregate([result()], { ...CTX, scored_wall_ms: 1234 });
    assert.deepEqual(rep.throughput, { wall_ms: 1234, cases_per_s: 0.8104, output_tokens_per_s: null });
    assert.equal(rep.suite_window_ms, 1234);
    const unknown = aggregate([result()], { ...CTX, scored_wall_ms: null });
    assert.deepEqual([unknown.throughput, unknown.suite_window_ms], [null, null]);
  });

  it('a sequential openai run (no meter window): `run` and `report FILE` both carry suite_window_ms and throughput', async () => {
    const out = join(dir, 'c1.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '-o', out, '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const own = JSON.parse(readFileSync(out, 'utf8')) as { suite_window_ms: number | null; throughput: { wall_ms: number; cases_per_s: number } | null; case_count: number };
    assert.ok(own.throughput !== null && own.throughput.wall_ms > 0, 'throughput present');
    assert.equal(own.suite_window_ms, own.throughput.wall_ms);
    assert.match(r.stdout, /throughput\s+[\d.]+ cases\/s/);
    const rebuilt = await cli(['report', '--json', out.replace(/\.json$/, '.results.jsonl')]);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    const again = JSON.parse(rebuilt.stdout) as typeof own;
    assert.deepEqual([again.suite_window_ms, again.throughput], [own.suite_window_ms, own.throughput]);
  });

  it('J/correct n/a says what is unknown; "nothing correct" only when nothing was', () => {
    const shared = aggregate([result({ energy_source: 'rapl', joules: 1 })], { ...CTX, meter: 'rapl', concurrency: 2 });
    assert.match(renderReportTable(shared), /J \/ correct\s+n\/a\s+total energy unknown/);
    assert.match(renderReportMarkdown(shared), /total energy unknown/);
    const none = aggregate([result({ passed: false })], CTX);
    assert.match(renderReportTable(none), /J \/ correct\s+n\/a\s+nothing correct/);
  });
});
