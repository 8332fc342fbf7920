import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { defaultHistoryPath, History } from '../../src/report/history.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-history-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = fileURLToPath(new URL('./fixtures/history-writer.ts', import.meta.url));
const HOLDER = fileURLToPath(new URL('./fixtures/history-lock-holder.ts', import.meta.url));

function writer(path: string, label: string, count: number, startAt: number, timeout?: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', WRITER, path, label, String(count), String(startAt), ...(timeout === undefined ? [] : [String(timeout)])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', process.env.JB_DEBUG ? 'inherit' : 'ignore'] });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

describe('history', () => {
  it('lives under JOULEBENCH_HOME, else ~/.joulebench', () => {
    assert.equal(defaultHistoryPath({ JOULEBENCH_HOME: '/x/y' }), join('/x/y', 'history.sqlite'));
    assert.match(defaultHistoryPath({}), /\.joulebench[/\\]history\.sqlite$/);
  });

  it('records a run and reads it back with its report and receipt', async () => {
    const h = await History.open(join(dir, 'one', 'history.sqlite'));
    const report = { format: 'joulebench-report/1', target: 't', suite: { name: 'router', digest: 'sha256:abc' }, accuracy_pct: 50, joules_per_correct: null, energy_source: 'model' };
    const id = h.record({ report, receipt: { started_utc: '2026-01-01T00:00:00.000Z', finished_utc: '2026-01-01T00:01:00.000Z' }, config_digest: 'sha256:cfg' });
    const e = h.get(id)!;
    assert.equal(e.suite, 'router');
    assert.equal(e.suite_digest, 'sha256:abc');
    assert.equal(e.config_digest, 'sha256:cfg');
    assert.equal(e.joules_per_correct, null, 'null stays null, never 0');
    assert.equal(e.finished_utc, '2026-01-01T00:01:00.000Z');
    assert.match(e.recorded_utc, /Z$/);
    assert.deepEqual(e.report, report);
    assert.equal(h.latestId(), id);
    assert.equal(h.get(id + 1), null);
    h.close();
  });

  it('opening an old database while another process upgrades it waits for that upgrade instead of failing', async () => {
    // The other process holds the write lock while it adds the sweep column. Reading the columns before
    // taking the lock saw the column missing and the ALTER then failed ("duplicate column name").
    const path = join(dir, 'upgrade', 'history.sqlite');
    mkdirSync(dirname(path), { recursive: true });
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLDER, path, '600'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => holder.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (b: Buffer) => b.toString().includes('locked') && resolve());
      holder.on('exit', () => reject(new Error('the lock holder exited before taking the lock')));
    });
    const h = await History.open(path);
    const id = h.record({ report: { format: 'joulebench-report/1', target: 't' }, receipt: { labels: { sweep_id: 'sw1' } } });
    assert.equal(h.list({ sweepId: 'sw1' })[0]?.id, id);
    h.close();
    assert.equal(await exited, 0);
  });

  it('two processes writing at once lose nothing', async () => {
    const path = join(dir, 'concurrent', 'history.sqlite');
    const N = 300;
    const startAt = Date.now() + 2500;
    const codes = await Promise.all([writer(path, 'a', N, startAt), writer(path, 'b', N, startAt)]);
    assert.deepEqual(codes, [0, 0]);
    const h = await History.open(path);
    const rows = h.list();
    h.close();
    assert.equal(rows.length, 2 * N);
    const targets = new Set(rows.map((r) => r.target));
    for (const l of ['a', 'b']) for (let i = 0; i < N; i++) assert.ok(targets.has(`${l}-${i}`), `${l}-${i} is missing`);
    assert.equal(new Set(rows.map((r) => r.id)).size, 2 * N);
  });
});
