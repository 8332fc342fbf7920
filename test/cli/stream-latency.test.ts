import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const DELAY_MS = 20;
const dir = mkdtempSync(join(tmpdir(), 'jb-stream-lat-'));
let streaming: FakeServer;
let plain: FakeServer;
before(async () => {
  // 'Canberra' streams as 3 chunks ('Can', 'ber', 'ra'), DELAY_MS apart; 4 output tokens by usage.
  streaming = await startFakeOpenAI(() => ({ kind: 'stream', text: 'Canberra', usage: { prompt_tokens: 5, completion_tokens: 4 }, chunkDelay_ms: DELAY_MS }));
  plain = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Canberra', usage: { prompt_tokens: 5, completion_tokens: 4 } }));
});
after(async () => {
  await streaming.close();
  await plain.close();
  rmSync(dir, { recursive: true, force: true });
});

type Report = Record<string, unknown> & { case_count: number; error_count: number };
const FIELDS = ['mean', 'median', 'std', 'p99'].flatMap((s) => [`${s}_tpot_ms`, `${s}_itl_ms`]);

describe('closed-loop run against a streaming endpoint: TPOT and ITL in the report', () => {
  it('the report carries vLLM-named TPOT and ITL, the table prints them, every case line keeps its gaps, `report FILE` gives the same bytes', async () => {
    const out = join(dir, 's.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', streaming.url, '--model', 'm', '--meter', 'model', '-o', out, '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const own = readFileSync(out, 'utf8');
    const report = JSON.parse(own) as Report;
    assert.equal(report.error_count, 0);
    for (const f of FIELDS) assert.equal(typeof report[f], 'number', `${f}: ${String(report[f])}`);
    // Two gaps a case, each one chunk delay; TPOT = (E2E − TTFT) ÷ 3 spans three delays (the last before [DONE]).
    // Chunks that reach the client in one read (a busy machine) show a gap near 0: the median stays near the delay.
    const lo = DELAY_MS * 0.5;
    for (const f of ['mean_itl_ms', 'median_itl_ms', 'mean_tpot_ms', 'median_tpot_ms']) {
      assert.ok((report[f] as number) >= lo && (report[f] as number) < 1000, `${f} ${String(report[f])}`);
    }
    assert.ok((report.p99_itl_ms as number) >= (report.median_itl_ms as number));
    assert.match(r.stdout, /TPOT mean \/ median \/ p99\s+[\d.]+ \/ [\d.]+ \/ [\d.]+ ms/);
    assert.match(r.stdout, /ITL mean \/ median \/ p99\s+[\d.]+ \/ [\d.]+ \/ [\d.]+ ms/);

    const results = out.replace(/\.json$/, '.results.jsonl');
    const cases = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.record === 'case');
    assert.equal(cases.length, report.case_count);
    for (const c of cases) assert.equal((c.itl_ms as number[]).length, 2, JSON.stringify(c.itl_ms));

    const rebuilt = await cli(['report', '--json', results]);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.equal(rebuilt.stdout.trim(), own.trim());
  });

  it('a plain (non-streamed) reply: every TPOT and ITL field is null, never 0, and no line is printed', async () => {
    const out = join(dir, 'p.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', plain.url, '--model', 'm', '--meter', 'model', '-o', out, '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    for (const f of FIELDS) assert.equal(report[f], null, f);
    assert.doesNotMatch(r.stdout, /TPOT|ITL/);
    const lines = readFileSync(out.replace(/\.json$/, '.results.jsonl'), 'utf8');
    assert.doesNotMatch(lines, /itl_ms/);
  });

  it('a case line whose itl_ms is not a list of numbers is refused, naming the file, line and key', async () => {
    const out = join(dir, 's.json');
    const results = out.replace(/\.json$/, '.results.jsonl');
    const edited = join(dir, 'edited.results.jsonl');
    const lines = readFileSync(results, 'utf8').split('\n');
    lines[1] = lines[1]!.replace(/"itl_ms":\[[^\]]*\],/, '').replace(/("tpot_ms":[^,]*,)/, '$1"itl_ms":["20"],');
    writeFileSync(edited, lines.join('\n'));
    const r = await cli(['report', '--json', edited]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /edited\.results\.jsonl: line 2 .*itl_ms is \["20"\], not a list of numbers/);
  });
});
