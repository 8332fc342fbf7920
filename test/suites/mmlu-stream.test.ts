import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { prettyJson } from '../../src/core/canonical.js';
import { JoulebenchError } from '../../src/core/errors.js';
import { mmluMeasurements, MmluTally } from '../../src/core/measurements.js';
import type { Answer, AnswerRequest, Case, CaseResult, Suite, Target } from '../../src/core/types.js';
import { createModelMeter } from '../../src/meters/model.js';
import { MemorySink } from '../../src/runner/results-file.js';
import { run } from '../../src/runner/run.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { loadMmlu, streamMmlu, type MmluOptions } from '../../src/suites/mmlu.js';
import { selectCases, type Selection } from '../../src/suites/select.js';
import { csvLine, generatedRows, TOY_ROWS, writeMmluFixtures } from '../helpers/mmlu-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-mmlu-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const fx = writeMmluFixtures(dir);

/** Every case a streamed suite hands over in one pass, checking the batches' sizes. */
function drain(s: ReturnType<typeof streamMmlu>): Case[] {
  const out: Case[] = [];
  for (const b of s.stream.batches()) {
    assert.ok(b.length > 0 && b.length <= 256);
    out.push(...b);
  }
  assert.equal(out.length, s.stream.count);
  return out;
}

/** What `run` took before MMLU streamed: the whole-file loader, then the selection. */
function whole(path: string, o: MmluOptions, sel: Selection): { version: string; digest: string; cases: Case[] } {
  const s = selectCases(loadMmlu(path, o), sel);
  return { version: s.version, digest: suiteDigest(s), cases: s.cases };
}

function streamed(path: string, o: MmluOptions, sel: Selection, chunkBytes?: number): { version: string; digest: string; cases: Case[] } {
  const s = streamMmlu(path, { ...o, selection: sel, ...(chunkBytes !== undefined ? { chunkBytes } : {}) });
  assert.equal(s.name, 'mmlu');
  assert.equal(s.scorer, 'choice');
  assert.equal(s.source, `mmlu ${path}`);
  return { version: s.version, digest: s.digest, cases: drain(s) };
}

describe('MMLU data streamed: the whole-file loader\'s suite, byte for byte', () => {
  // Taken with the whole-file loader of main 3e65445 (before MMLU streamed), on these fixtures.
  const GOLDEN: Record<string, [version: string, digest: string, cases: number]> = {
    jsonl: ['mmlu/local-cef649c0b3a0', 'sha256:6e257180a2ebac864eea2277362d4f8ef3241a5a39663713dccb3e5196849581', 4],
    json: ['mmlu/local-cef649c0b3a0', 'sha256:6e257180a2ebac864eea2277362d4f8ef3241a5a39663713dccb3e5196849581', 4],
    rows: ['mmlu/local-cef649c0b3a0', 'sha256:6e257180a2ebac864eea2277362d4f8ef3241a5a39663713dccb3e5196849581', 4],
    arrayJsonl: ['mmlu/local-cef649c0b3a0', 'sha256:6e257180a2ebac864eea2277362d4f8ef3241a5a39663713dccb3e5196849581', 4],
    ids: ['mmlu/local-5e5c6dbf521b', 'sha256:c7541a0803ad7fa775c8e39d98b1807f2bf5e0d094d8e1153a1014cd0e4d40c6', 5],
    csv: ['mmlu/local-24bfe9c09c82', 'sha256:43078b056b5a2eb0ef486668702f932e978deedd859b5fcddb4857e8bf0a0928', 7],
    mixed: ['mmlu/local-e8882bb5cf97', 'sha256:1674286fcee1327676a7ee3207ceef9ff5e0d9c61b9a20c9818eec84b5bad796', 4],
    genJsonl: ['mmlu/local-2eddb6d26620', 'sha256:9126f0c97f8115d394707f693673d9cab7c3c2d2910d7e1bd3be070c7a57aece', 3000],
    genCsv: ['mmlu/local-b5960565e77c', 'sha256:a1a30a0768c0ba69b8f6fb4c5486230867e88d2b6cbf9ba75a80e0ded6ddde40', 3700],
  };

  it('every form (CSV with CR, CRLF, BOM, header, quoted newlines; JSONL; JSON; a JSONL array; a mixed folder): the version and digest main gave', () => {
    for (const [name, [version, digest, n]] of Object.entries(GOLDEN)) {
      const s = streamed(fx[name]!, {}, {});
      assert.deepEqual([s.version, s.digest, s.cases.length], [version, digest, n], name);
      assert.deepEqual(s, whole(fx[name]!, {}, {}), name);
    }
  });

  it('with params.subjects, params.limit, a fixed version, retry, --filter and --limit, read in chunks of any size: the same version, digest and cases', () => {
    const opts: MmluOptions[] = [{}, { subjects: ['toy_words', 'subj_3', 'a', 'b', 'other', 'bom'], limit: 2, version: 'toy/v1' }, { retry_max_attempts: 3 }];
    const sels: Selection[] = [{}, { filter: 'math|subj_2|-1$', limit: 300 }, { limit: 5 }];
    for (const [name, path] of Object.entries(fx)) {
      const small = !name.startsWith('gen');
      for (const o of opts) {
        for (const sel of sels) {
          let want: ReturnType<typeof whole> | string;
          try {
            want = whole(path, o, sel);
          } catch (e) {
            want = (e as Error).message; // a subject missing from this data, or a selection of nothing
          }
          for (const chunk of small ? [16, 61, undefined] : [4093, undefined]) {
            let got: ReturnType<typeof streamed> | string;
            try {
              got = streamed(path, o, sel, chunk);
            } catch (e) {
              got = (e as Error).message;
            }
            assert.deepEqual(got, want, `${name} ${JSON.stringify(o)} ${JSON.stringify(sel)} chunk ${chunk}`);
          }
        }
      }
    }
  });

  it('a pass stopped after its first batch (a run that stops) closes its file', () => {
    const fds = (): number => readdirSync('/proc/self/fd').length;
    const s = streamMmlu(fx.genCsv!);
    const before = fds();
    for (let k = 0; k < 20; k++) {
      const it = s.stream.batches()[Symbol.iterator]();
      assert.equal(it.next().value?.length, 256);
      it.return?.();
    }
    assert.equal(fds(), before);
  });

  it('a pass of 3,700 rows comes in batches of 256, in file order', () => {
    const s = streamMmlu(fx.genCsv!);
    const sizes = [...s.stream.batches()].map((b) => b.length);
    assert.deepEqual(sizes, [...Array(14).fill(256), 3700 - 14 * 256]);
  });
});

describe('bad MMLU data: the whole-file loader\'s message and code, before any case is handed over', () => {
  const bad = join(dir, 'bad');
  mkdirSync(bad);
  const file = (name: string, body: string | Buffer): string => {
    const p = join(bad, name);
    writeFileSync(p, body);
    return p;
  };
  const line = (o: Record<string, unknown>): string => JSON.stringify({ ...TOY_ROWS[0], ...o }) + '\n';
  const twelve = (): string => file('twelve.jsonl', generatedRows(100, 12).reverse().map((r) => JSON.stringify(r) + '\n').join(''));
  const many = (n: number): string => Array.from({ length: n }, (_, i) => line({ question: `q${i}?` })).join('');
  const cases: [string, () => string, MmluOptions?, Selection?][] = [
    ['a bad row on the last line of a long file', () => file('last.jsonl', many(2000) + line({ answer: 7 }))],
    ['a bad row, then a line that is not JSON further on (the JSON error comes first)', () => file('order.jsonl', line({}) + line({ choices: ['a'] }) + many(300) + '{oops\n')],
    ['a bad row, then bad UTF-8 further on (the UTF-8 error comes first)', () => file('utf_test.csv', Buffer.concat([Buffer.from('q,a,b,c,d,Z\n' + 'q,a,b,c,d,A\n'.repeat(5000)), Buffer.from([0xc0, 0xaf, 0x0a])]))],
    ['bad UTF-8 inside a quoted field spanning lines', () => file('quoted_test.csv', Buffer.concat([Buffer.from('"q\n'.repeat(3000)), Buffer.from([0xff]), Buffer.from('",a,b,c,d,A\n')]))],
    ['a CSV row of 5 fields on its last line', () => file('five_test.csv', 'q,a,b,c,d,A\n'.repeat(3000) + '"x\ny",a,b,c,D\n')],
    ['a subject missing', () => file('nosubject.jsonl', many(10) + line({ subject: '' }))],
    ['a JSON document that is not JSON', () => file('doc.json', JSON.stringify(TOY_ROWS).slice(0, -3) + '\n\n')],
    ['a .jsonl that is one array, cut short', () => file('arr.jsonl', '\n ' + JSON.stringify(TOY_ROWS).slice(0, -1))],
    ['a JSON object without rows', () => file('obj.json', '{"items": []}')],
    ['an empty file', () => file('empty.jsonl', '\n  \n')],
    ['an unknown file type', () => file('data.txt', 'q,a,b,c,d,A\n')],
    ['no such file', () => join(bad, 'missing.csv')],
    ['an empty folder', () => (mkdirSync(join(bad, 'none')), join(bad, 'none'))],
    [
      'an id in two files of a folder',
      () => {
        const d = join(bad, 'dup');
        mkdirSync(d);
        writeFileSync(join(d, 'a.jsonl'), many(5) + line({ id: 'same' }));
        writeFileSync(join(d, 'b.jsonl'), line({ id: 'other' }) + line({ id: 'same' }));
        return d;
      },
    ],
    ['a generated id repeated', () => file('gen.jsonl', line({ subject: 'x' }) + line({ subject: 'x', id: 'x-2' }) + line({ subject: 'x' }))],
    ['params.subjects naming subjects the data lacks (twelve subjects there)', () => twelve(), { subjects: ['subj_1', 'nope', 'neither'], config_path: 'run.yaml' }],
    ['params.subjects naming a subject the data lacks (a few there)', () => fx.mixed!, { subjects: ['zz'] }],
    ['a --filter that selects nothing', () => fx.csv!, {}, { filter: '^nothing$' }],
  ];
  for (const [what, path, o = {}, sel = {}] of cases) {
    it(what, () => {
      const p = path();
      let want: JoulebenchError | null = null;
      try {
        selectCases(loadMmlu(p, o), sel);
      } catch (e) {
        want = e as JoulebenchError;
      }
      assert.ok(want instanceof JoulebenchError, 'the whole-file loader refuses it');
      for (const chunkBytes of [64, undefined]) {
        assert.throws(
          () => streamMmlu(p, { ...o, selection: sel, ...(chunkBytes ? { chunkBytes } : {}) }),
          (e: unknown) => e instanceof JoulebenchError && e.code === want.code && e.message === want.message,
          `expected ${want.code}: ${want.message}`,
        );
      }
    });
  }
  it('the twelve-subject message names the first eight, sorted, then …', () => {
    assert.throws(() => streamMmlu(twelve(), { subjects: ['nope'] }), /subjects there: subj_0, subj_1, subj_10, subj_11, subj_2, subj_3, subj_4, subj_5, …\)$/);
  });
});

describe('MMLU data changed on disk during a run', () => {
  const rows = generatedRows(600);
  const write = (p: string, rs: typeof rows): void => writeFileSync(p, rs.map(csvLine).join(''));

  it('a file whose size or mtime changed is refused when the pass opens it', () => {
    const p = join(dir, 'grow_test.csv');
    write(p, rows);
    const s = streamMmlu(p);
    assert.equal(drain(s).length, 600);
    write(p, [...rows, rows[0]!]);
    assert.throws(() => drain(s), /mmlu .*grow_test\.csv: changed on disk since the run checked it \(.*size, modification time or inode differ\); this run is incomplete/);
  });

  it('an edit that keeps the size and mtime is caught by the digest before the last batch is handed over', () => {
    const p = join(dir, 'same_test.csv');
    write(p, rows);
    utimesSync(p, 1e9, 1e9); // whole seconds, so it can be put back exactly
    const s = streamMmlu(p);
    // The last row's answer letter changes; size and mtime are put back as they were.
    const text = readFileSync(p, 'utf8');
    const last = text.lastIndexOf(',');
    const letter = text[last + 1] === 'A' ? 'B' : 'A';
    writeFileSync(p, text.slice(0, last + 1) + letter + text.slice(last + 2));
    utimesSync(p, 1e9, 1e9);
    const handed: number[] = [];
    assert.throws(() => {
      for (const b of s.stream.batches()) handed.push(b.length);
    }, /changed on disk since the run checked it \(its rows no longer have the digest checked\)/);
    assert.deepEqual(handed, [256, 256], 'the last batch (with the changed row) was never handed over');
  });

  it('a row that no longer reads is refused as a changed file, naming the row', () => {
    const p = join(dir, 'broken_test.csv');
    write(p, rows);
    utimesSync(p, 1e9, 1e9);
    const s = streamMmlu(p);
    writeFileSync(p, readFileSync(p, 'utf8').replace(/,([ABCD])\n$/, ',Q\n'));
    utimesSync(p, 1e9, 1e9);
    assert.throws(() => drain(s), /changed on disk since the run checked it \(mmlu .*broken_test\.csv: line \d+: answer must be an index 0-3 or a letter A-D, got "Q"\)/);
  });
});

/** A target that answers a letter from the case id, with usage and a cost: every MMLU measurement is made. */
function letterTarget(): Target {
  let n = 0;
  return {
    id: 'letters',
    kind: 'letters',
    answer(req: AnswerRequest): Answer {
      n++;
      const id = req.case.id;
      const letter = 'ABCD'[[...id].reduce((s, ch) => s + ch.charCodeAt(0), 0) % 4]!;
      return { text: `The answer is ${letter}.`, usage: { prompt_tokens: 40 + (n % 7), completion_tokens: 3 }, cost_usd: 1e-6 * (n % 5) };
    },
    describe: () => ({ kind: 'letters' }),
  };
}

describe('a run of streamed MMLU data', () => {
  it('writes the results header and report of the same data held in memory, byte for byte (a counting clock), and the same measurements block', async () => {
    // Every clock reading advances 0.25 ms: both runs see the same times, so their reports can be compared whole.
    const realNow = performance.now.bind(performance);
    const runWith = async (suite: Suite | ReturnType<typeof streamMmlu>, concurrency: number) => {
      let t = 0;
      performance.now = () => (t += 0.25);
      try {
        const sink = new MemorySink();
        const tally = new MmluTally();
        const kept: CaseResult[] = [];
        const out = await run({
          suite,
          target: letterTarget(),
          meter: createModelMeter(),
          sink,
          warmup: 1,
          repeats: 2,
          concurrency,
          idle_ms: 0,
          bootstrap: 200,
          keepResults: false,
          onScored: (r) => (tally.add(r), kept.push(r)),
        });
        const block = tally.block({ retry_enabled: true, prices_set: true });
        return { header: JSON.stringify(out.header), report: prettyJson(out.report), block: prettyJson(block), whole: prettyJson(mmluMeasurements(kept, { retry_enabled: true, prices_set: true })), results: sink.results.length };
      } finally {
        performance.now = realNow;
      }
    };
    for (const [path, o, sel] of [
      [fx.genCsv!, {}, {}],
      [fx.ids!, { retry_max_attempts: 2 }, {}],
      [fx.genJsonl!, { subjects: ['subj_1', 'subj_4'] }, { filter: '[05]$', limit: 100 }],
    ] as [string, MmluOptions, Selection][]) {
      for (const concurrency of [1, 3]) {
        const held = await runWith(selectCases(loadMmlu(path, o), sel), concurrency);
        const streamedRun = await runWith(streamMmlu(path, { ...o, selection: sel }), concurrency);
        assert.equal(streamedRun.header, held.header);
        // Concurrent passes run a batch at a time: the pool drains every 256 cases, and the clock is read
        // a few times more per batch, which moves the run's wall time (only it: throughput and suite_window_ms).
        const comparable = (r: string): string => (concurrency === 1 ? r : r.replace(/"throughput": \{[^}]*\}/, '').replace(/"suite_window_ms": [\d.]+/, ''));
        assert.equal(comparable(streamedRun.report), comparable(held.report));
        assert.equal(streamedRun.block, held.block);
        assert.equal(streamedRun.block, streamedRun.whole, 'the tally is mmluMeasurements of the same results');
        assert.equal(streamedRun.results, held.results);
        assert.match(held.block, /"mmlu\.cost_usd"/);
      }
    }
  });
});
