import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import { identityMismatch, InferJournal, readJournal, writeFileAtomic, type JournalEvent, type JournalIdentity } from '../../src/infer/journal.js';
import { runInfer, type InferOptions } from '../../src/infer/protocol.js';
import { TransformCounter } from '../../src/infer/utc.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-infer-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const identity = (over: Partial<JournalIdentity> = {}): JournalIdentity => ({
  prompt_sha256: 'a'.repeat(64),
  models: ['m1'],
  threads: ['default', 4],
  base_url: 'http://127.0.0.1:11434',
  protocol: { cold: 3, warmup: 1, runs: 5, num_predict: 128, seed: 42, temperature: 0, num_ctx: null },
  ...over,
});

describe('the infer journal', () => {
  it('names the first field that differs, or null when the run is the same', () => {
    assert.equal(identityMismatch(identity(), identity()), null);
    assert.match(identityMismatch(identity(), identity({ prompt_sha256: 'b'.repeat(64) }))!, /^prompt sha256 aaaaaaaaaaaa… in the journal, bbbbbbbbbbbb… now$/);
    assert.equal(identityMismatch(identity(), identity({ models: ['m1', 'm2'] })), 'models m1 in the journal, m1,m2 now');
    assert.equal(identityMismatch(identity(), identity({ threads: ['default'] })), 'threads default,4 in the journal, default now');
    assert.equal(identityMismatch(identity(), identity({ base_url: 'http://h:1' })), 'base URL http://127.0.0.1:11434 in the journal, http://h:1 now');
    assert.equal(identityMismatch(identity(), identity({ protocol: { ...identity().protocol, runs: 3 } })), 'runs 5 in the journal, 3 now');
  });

  it('reads back finished arms and half-finished ones; a torn last line is cut off the file', () => {
    const path = join(dir, 'a.partial.jsonl');
    const j = InferJournal.create(path, identity(), '2026-11-29T00:00:00.000Z');
    const run = { phase: 'cold' } as unknown as Extract<JournalEvent, { event: 'run' }>['run'];
    j.write({ event: 'arm-start', arm: 'm1@t=default', utc: 'x' });
    j.write({ event: 'run', arm: 'm1@t=default', run });
    j.write({ event: 'arm', arm: { id: 'm1@t=default' } as never, transforms: { counts: { 'local-offset-to-utc': 1 }, source_offsets: ['-07:00'] } });
    j.write({ event: 'arm-start', arm: 'm1@t=4', utc: 'x' });
    j.write({ event: 'run', arm: 'm1@t=4', run });
    j.close();
    appendFileSync(path, '{"event":"run","arm":"m1@t=4","ru'); // killed mid-write
    const s = readJournal(path);
    assert.deepEqual([...s.finished.keys()], ['m1@t=default']);
    assert.deepEqual([...s.partial], [['m1@t=4', 1]]);
    assert.equal(s.run_lines, 2);
    assert.equal(s.started_utc, '2026-11-29T00:00:00.000Z');
    assert.ok(readFileSync(path, 'utf8').endsWith('}\n'), 'the torn line is gone, appends start on a clean line');
    assert.deepEqual(TransformCounter.from(s.transforms!).toJSON(), { counts: { 'local-offset-to-utc': 1 }, source_offsets: ['-07:00'] });
    assert.throws(() => InferJournal.create(path, identity(), 'x'), /unfinished run's journal is here: add --resume/);
  });

  it('a run file is written whole or not at all (temp file, then rename)', () => {
    const out = join(dir, 'run.json');
    writeFileAtomic(out, '{"ok":true}');
    assert.equal(readFileSync(out, 'utf8'), '{"ok":true}');
    assert.equal(existsSync(`${out}.tmp-${process.pid}`), false, 'no temp file left');
  });

  it('a server that goes away mid-run: every run finished before it is in the journal, and the run rejects', async () => {
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 1, prefill_ms_per_token: 0 });
    const url = await fake.start();
    const events: JournalEvent[] = [];
    fake.opts.onGeneration = (n) => {
      if (n === 3) void fake.stop();
    };
    const opts: InferOptions = {
      baseUrl: url, models: ['m1'], threads: ['default'], runs: 3, warmup: 1, cold: 1, prompt: 'p q r', prompt_source: 't',
      num_predict: 2, seed: 1, temperature: 0, meter: null, gpu_snapshot_cmd: null, peak: null, cpu_default_peak: null,
      poll_interval_ms: 1, unload_timeout_ms: 500, request_timeout_ms: 2000, host: {}, argv: [], journal: { write: (e) => events.push(e) },
    };
    await assert.rejects(runInfer(opts), (e: unknown) => {
      assert.ok(isJoulebenchError(e), 'a JoulebenchError');
      assert.equal(e.exitCode, 1);
      return true;
    });
    await fake.stop();
    const runs = events.filter((e) => e.event === 'run').map((e) => (e as Extract<JournalEvent, { event: 'run' }>).run.phase);
    assert.deepEqual(runs, ['cold', 'warmup'], 'the two runs finished before the server went are journaled');
    assert.equal(events.some((e) => e.event === 'arm'), false, 'no arm finished');
  });
});
