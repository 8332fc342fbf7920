import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { parseResultsText, readResultsFile, type ResultsFileContents, streamResultsFile } from '../../src/runner/results-stream.js';
import { rebuildReport } from '../../src/report/rebuild.js';
import { readTextFile } from '../../src/read-text.js';
import { jb } from '../cli/helpers.js';
import { result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-results-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string): string => join(dir, f);

/** The streamed reading of `path`, in readResultsFile's shape. */
function streamed(path: string, chunk: number): ResultsFileContents {
  const out: ResultsFileContents = { header: null, results: [], other: [], good_bytes: 0, torn_bytes: 0 };
  const end = streamResultsFile(path, { header: (h) => (out.header = h), case: (r) => out.results.push(r), other: (o) => out.other.push(o) }, chunk);
  return { ...out, ...end };
}

const header = { record: 'header', format: 'joulebench-results/1', suite: 's', suite_version: '1', suite_digest: 'd', config_digest: 'c', target: 't', meter: 'none', warmup: 0, repeats: 1 };
const caseLine = (i: number, answer: string) => JSON.stringify(result({ index: i, case_id: `c${i}`, dataset: 'x', response: answer, latency_ms: i, joules: null }));

describe('streamResultsFile: line by line, same rules as parseResultsText', () => {
  it('gives what parseResultsText gives on the whole text at any chunk size: multi-byte text across chunk edges, other records, a torn last line', () => {
    const text = [JSON.stringify(header), caseLine(0, 'héllo ✓ 𝄞'), JSON.stringify({ record: 'resume', at: 1 }), '', caseLine(1, 'x'.repeat(100)), caseLine(2, '日本語')].join('\n') + '\n{"record":"case","pha';
    writeFileSync(p('a.jsonl'), text);
    const whole = parseResultsText(text, p('a.jsonl'));
    assert.equal(whole.results.length, 3);
    assert.deepEqual(readResultsFile(p('a.jsonl')), whole);
    assert.ok(whole.torn_bytes > 0);
    for (const chunk of [16, 17, 31, 64, 1000, 1 << 20]) assert.deepEqual(streamed(p('a.jsonl'), chunk), whole, `chunk ${chunk}`);
  });

  it('a torn last line cut mid-character is dropped, not called bad UTF-8', () => {
    const full = Buffer.from(`${JSON.stringify(header)}\n${caseLine(0, 'a')}\n{"record":"case","answer":"✓`);
    writeFileSync(p('torn.jsonl'), full.subarray(0, full.length - 1)); // cut inside ✓ (3 bytes)
    const s = streamed(p('torn.jsonl'), 16);
    assert.equal(s.results.length, 1);
    assert.equal(s.good_bytes + s.torn_bytes, full.length - 1);
  });

  it('refuses bad UTF-8 with the same message (and byte offset) as readTextFile, and skips a BOM', () => {
    const good = Buffer.from(`${JSON.stringify(header)}\n${caseLine(0, 'a')}\n`);
    const bad = Buffer.concat([good, Buffer.from('{"record":"other","x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    writeFileSync(p('bad.jsonl'), bad);
    let whole = '';
    try {
      readTextFile(p('bad.jsonl'), 'E_RESULTS');
    } catch (e) {
      whole = (e as Error).message;
    }
    assert.match(whole, new RegExp(`byte offset ${good.length + 23}\\b`));
    for (const chunk of [16, 1 << 20]) assert.throws(() => streamed(p('bad.jsonl'), chunk), (e: Error) => e instanceof JoulebenchError && e.message === whole);
    writeFileSync(p('bom.jsonl'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), good]));
    const s = streamed(p('bom.jsonl'), 16);
    assert.equal(s.header?.suite, 's');
    assert.equal(s.results.length, 1);
  });

  it('names the file and line of a bad line, as the in-memory reader does', () => {
    const text = `${JSON.stringify(header)}\n${caseLine(0, 'a')}\n{not json}\n`;
    writeFileSync(p('badline.jsonl'), text);
    let expected = '';
    try {
      parseResultsText(text, p('badline.jsonl'));
    } catch (e) {
      expected = (e as Error).message;
    }
    assert.match(expected, /line 3: not valid JSON/);
    assert.throws(() => streamed(p('badline.jsonl'), 16), { message: expected });
  });

  it("refuses a case line its run could not have had (a pass past the header's, a negative key), in memory and streamed; a load run's passes are not limited", () => {
    const warmupLine = JSON.stringify(result({ phase: 'warmup', pass: 0, index: 0, case_id: 'c0', dataset: 'x', response: 'a', joules: null }));
    const refusals: [string, string, RegExp][] = [
      ['pass-past', caseLine(0, 'a').replace('"pass":0', '"pass":1'), /line 2: a scored case line of pass 1, index 0, which the run could not have had \(its header says repeats 1: passes 0 to 0\)/],
      ['negative', caseLine(0, 'a').replace('"index":0', '"index":-1'), /line 2: a scored case line of pass 0, index -1, which the run could not have had \(pass and index count from 0\)/],
      ['no-warmup', warmupLine, /line 2: a warmup case line of pass 0, index 0, which the run could not have had \(its header says warmup 0: no warmup passes\)/],
      ['index-past', caseLine(1, 'a'), /line 2: a scored case line of pass 0, index 1, which the run could not have had \(its header says cases 1: index 0 to 0\)/],
    ];
    for (const [name, line, message] of refusals) {
      const text = `${JSON.stringify({ ...header, cases: 1 })}\n${line}\n`;
      writeFileSync(p(`${name}.jsonl`), text);
      assert.throws(() => parseResultsText(text, p(`${name}.jsonl`)), (e: Error) => e instanceof JoulebenchError && e.code === 'E_RESULTS' && message.test(e.message) && e.message.startsWith(p(`${name}.jsonl`)), name);
      assert.throws(() => streamed(p(`${name}.jsonl`), 16), message, name);
    }
    // A load run cycles its suite: pass 7 of a header saying repeats 1 is a request of the eighth cycle.
    const load = `${JSON.stringify({ ...header, load: { request_rate: 'inf' } })}\n${caseLine(0, 'a').replace('"pass":0', '"pass":7')}\n`;
    assert.equal(parseResultsText(load, p('load.jsonl')).results[0]?.pass, 7);
    // A header written before it said how many cases: any index from 0 is read.
    assert.equal(parseResultsText(`${JSON.stringify(header)}\n${caseLine(5, 'a')}\n`, p('old.jsonl')).results[0]?.index, 5);
  });

  it('refuses a FIFO at once instead of waiting for a writer', () => {
    execFileSync('mkfifo', [p('fifo.jsonl')]);
    assert.throws(() => streamed(p('fifo.jsonl'), 16), /not a regular file/);
  });
});

describe('report rebuilt from a results file as it streams', () => {
  it("equals the run's own report byte for byte (report --json), and field for field from the library", () => {
    const home = p('home');
    const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--warmup', '1', '-o', p('run.json')], { home });
    assert.equal(r.code, 0, r.stderr);
    const own = readFileSync(p('run.json'), 'utf8');
    const rebuilt = jb(['report', '--json', p('run.results.jsonl')], { home });
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.equal(rebuilt.stdout, own);
    for (const keep of ['none', 'scored', 'paired'] as const) {
      const { report, scored, paired, in_order } = rebuildReport(p('run.results.jsonl'), { keep });
      assert.deepEqual(JSON.parse(JSON.stringify(report)), JSON.parse(own));
      assert.ok(in_order);
      assert.equal(scored === null, keep !== 'scored');
      assert.equal(paired === null, keep !== 'paired');
      for (const kept of [scored, paired]) if (kept) assert.equal(kept.length, (JSON.parse(own) as { case_count: number }).case_count);
    }
  });
});
