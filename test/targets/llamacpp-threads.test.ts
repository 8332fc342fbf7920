import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLlamaCppTarget } from '../../src/targets/llamacpp/target.js';
import { capAtIdle, defaultThreadChoice, firstCaseCollapse, idleCpus, parseCpuList } from '../../src/targets/llamacpp/threads.js';
import { cli } from '../helpers/cli.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';

let dir: string;
let model: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'jb-threads-'));
  model = join(dir, 'tiny.gguf');
  writeTinyGguf(model);
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface FakeCpus {
  /** Cpus_allowed_list, or null for no status file. */
  allowed: string | null;
  /** Per logical CPU: [package, core]; null writes no sysfs topology. */
  topology: [number, number][] | null;
  /** Lines of /proc/self/cgroup and files under sys/fs/cgroup. */
  cgroup?: { self: string; files: Record<string, string> };
  cpuinfo?: string;
}

/** Writes a fake `/proc` + `/sys` tree under a new folder and returns its root. */
function fakeRoot(name: string, f: FakeCpus): string {
  const root = join(dir, name);
  const put = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  if (f.allowed !== null) put('proc/self/status', `Name:\tnode\nCpus_allowed:\tf\nCpus_allowed_list:\t${f.allowed}\nMems_allowed_list:\t0\n`);
  for (const [i, [pkg, core]] of (f.topology ?? []).entries()) {
    put(`sys/devices/system/cpu/cpu${i}/topology/physical_package_id`, `${pkg}\n`);
    put(`sys/devices/system/cpu/cpu${i}/topology/core_id`, `${core}\n`);
  }
  if (f.cgroup) {
    put('proc/self/cgroup', f.cgroup.self);
    for (const [p, t] of Object.entries(f.cgroup.files)) put(join('sys/fs/cgroup', p), t);
  }
  if (f.cpuinfo !== undefined) put('proc/cpuinfo', f.cpuinfo);
  return root;
}

/** Two logical CPUs that are hyperthreads of one physical core: llama.cpp gets one thread. */
const oneCoreTwoThreads = (): string => fakeRoot('one-core', { allowed: '0-1', topology: [[0, 0], [0, 0]] });

describe('the default llama.cpp thread count: physical cores this process may use', () => {
  it('counts physical cores among the CPUs the affinity mask allows, not logical CPUs', () => {
    // 8 logical CPUs on 4 cores (SMT pairs 0/4, 1/5, …); the mask allows 0-1 and 4-5: two cores.
    const root = fakeRoot('smt', { allowed: '0-1,4-5', topology: [0, 1, 2, 3, 0, 1, 2, 3].map((c) => [0, c] as [number, number]) });
    const c = defaultThreadChoice({ root, available_parallelism: 4 });
    assert.equal(c.threads, 2);
    assert.match(c.threads_source, /^physical cores allowed \(affinity 0-1,4-5 \(4 logical CPUs\); 2 physical cores among them \(sysfs topology\); cgroup quota none; availableParallelism 4\)$/);
  });

  it('a cgroup v2 cpu.max quota caps it (rounded down), ancestors included', () => {
    const root = fakeRoot('v2', {
      allowed: '0-7',
      topology: [0, 1, 2, 3, 4, 5, 6, 7].map((c) => [0, c] as [number, number]),
      cgroup: { self: '0::/jobs/bench\n', files: { 'jobs/bench/cpu.max': 'max 100000\n', 'jobs/cpu.max': '250000 100000\n' } },
    });
    const c = defaultThreadChoice({ root, available_parallelism: 8 });
    assert.equal(c.threads, 2);
    assert.match(c.threads_source, /cgroup quota 2\.5 \(cpu\.max 250000 100000\)/);
  });

  it('a cgroup v1 cfs quota caps it; never below 1', () => {
    const root = fakeRoot('v1', {
      allowed: '0-3',
      topology: [0, 1, 2, 3].map((c) => [0, c] as [number, number]),
      cgroup: { self: '4:memory:/x\n2:cpu,cpuacct:/docker/abc\n', files: { 'cpu,cpuacct/docker/abc/cpu.cfs_quota_us': '50000\n', 'cpu,cpuacct/docker/abc/cpu.cfs_period_us': '100000\n' } },
    });
    const c = defaultThreadChoice({ root, available_parallelism: 4 });
    assert.equal(c.threads, 1);
    assert.match(c.threads_source, /cgroup quota 0\.5 \(cpu\.cfs_quota_us 50000/);
  });

  it('reads /proc/cpuinfo when sysfs has no topology, and never exceeds availableParallelism', () => {
    const block = (p: number, core: number) => `processor\t: ${p}\nphysical id\t: 0\ncore id\t\t: ${core}\n`;
    const root = fakeRoot('cpuinfo', { allowed: '0-5', topology: null, cpuinfo: [0, 1, 2, 3, 4, 5].map((p) => block(p, p)).join('\n') });
    const c = defaultThreadChoice({ root, available_parallelism: 3 });
    assert.equal(c.threads, 3);
    assert.match(c.threads_source, /6 physical cores among them \(\/proc\/cpuinfo\).*availableParallelism 3/);
    assert.deepEqual(parseCpuList('0-2,7'), [0, 1, 2, 7]);
    assert.equal(parseCpuList('3-1'), null);
  });

  it('the llamacpp target uses it and records the number and how it was chosen (tiny GGUF, fake topology)', async () => {
    const t = await createLlamaCppTarget({ model_path: model, max_tokens: 4, cpu_root: oneCoreTwoThreads() });
    try {
      const a = await t.answer({ prompt: 'Name a colour.', case: { id: 'c', prompt: 'Name a colour.', expected: null, dataset: 'router', weight: 1, tags: [] } });
      assert.equal((a.meta as { llamacpp: { threads_used: number } }).llamacpp.threads_used, 1, 'llama.cpp ran with one thread');
      const d = t.describe();
      assert.equal(d.threads, 1);
      assert.match(String(d.threads_source), /^physical cores allowed \(affinity 0-1 \(2 logical CPUs\); 1 physical cores among them/);
    } finally {
      await t.close?.();
    }
  });

  it('run --target llamacpp without --threads: the receipt says threads and threads_source', async () => {
    const out = join(dir, 'run.json');
    const r = await cli(['run', '--suite', 'router', '--limit', '2', '--target', 'llamacpp', '--model-path', model, '--max-tokens', '2', '--meter', 'estimate', '--no-history', '-q', '-o', out], {
      env: { JOULEBENCH_CPU_ROOT: oneCoreTwoThreads() },
    });
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(readFileSync(join(dir, 'run.receipt.json'), 'utf8'));
    assert.equal(receipt.target.threads, 1);
    assert.match(receipt.target.threads_source, /physical cores allowed/);
  });
});

/** `/proc/stat` with per-CPU lines: [busy, idle] jiffies each (user and idle columns; the rest 0). */
const procStat = (cpus: [number, number][]): string =>
  `cpu  ${cpus.reduce((t, c) => t + c[0], 0)} 0 0 ${cpus.reduce((t, c) => t + c[1], 0)} 0 0 0 0 0 0\n` +
  cpus.map(([busy, idle], i) => `cpu${i} ${busy} 0 0 ${idle} 0 0 0 0 0 0\n`).join('') +
  'intr 0\nctxt 0\nprocs_running 1\n';

describe('the default is capped at the CPUs other processes leave idle (spinning threads collapse on a busy core)', () => {
  it('idle CPUs over the window, from two readings of /proc/stat, among the allowed CPUs only', async () => {
    const root = fakeRoot('stat', { allowed: '0-3', topology: [0, 1, 2, 3].map((c) => [0, c] as [number, number]) });
    const stat = join(root, 'proc', 'stat');
    writeFileSync(stat, procStat([[100, 100], [100, 100], [100, 100], [100, 100]]));
    // Over the window: cpu0 and cpu1 busy throughout, cpu2 idle throughout, cpu3 half idle.
    const later = () => void writeFileSync(stat, procStat([[200, 100], [200, 100], [100, 200], [150, 150]]));
    assert.equal(await idleCpus(root, null, 250, async () => later()), 1.5);
    writeFileSync(stat, procStat([[100, 100], [100, 100], [100, 100], [100, 100]]));
    assert.equal(await idleCpus(root, [0, 2], 250, async () => later()), 1);
    // Garbage is not a reading.
    writeFileSync(stat, 'cpu0 1 2 -3 4\n');
    assert.equal(await idleCpus(root, null, 250, async () => undefined), null);
    assert.equal(await idleCpus(join(dir, 'no-such-root'), null, 250, async () => undefined), null);
  });

  it('caps at the idle CPUs rounded (at least 1), says so in threads_source, and never raises the count', () => {
    const base = { threads: 4, threads_source: 'physical cores allowed (…)' };
    assert.deepEqual(capAtIdle(base, 1.5), { threads: 2, threads_source: 'physical cores allowed (…); 1.5 CPUs idle over 250 ms before loading (other processes busy on the rest): 2' });
    assert.equal(capAtIdle(base, 0.1).threads, 1);
    assert.deepEqual(capAtIdle(base, 3.8), { threads: 4, threads_source: 'physical cores allowed (…); 3.8 CPUs idle over 250 ms before loading' });
    assert.deepEqual(capAtIdle(base, null), { threads: 4, threads_source: 'physical cores allowed (…); idle CPUs unreadable' });
  });

  for (const [state, expected] of [['busy', 1], ['idle', 2]] as const) {
    it(`the llamacpp target on 2 free cores whose CPUs are ${state} while it loads gets ${expected} thread(s) (tiny GGUF, /proc/stat the test keeps writing)`, async () => {
      const root = fakeRoot(`two-cores-${state}`, { allowed: '0-1', topology: [[0, 0], [0, 1]] });
      const stat = join(root, 'proc', 'stat');
      let tick = 0;
      const write = () => {
        tick += 10;
        writeFileSync(stat, procStat(state === 'busy' ? [[tick, 5], [tick, 5]] : [[5, tick], [5, tick]]));
      };
      write();
      const timer = setInterval(write, 20);
      try {
        const t = await createLlamaCppTarget({ model_path: model, max_tokens: 2, cpu_root: root });
        const d = t.describe();
        await t.close?.();
        assert.equal(d.threads, expected);
        assert.match(String(d.threads_source), state === 'busy' ? /2 physical cores among them.*0\.0 CPUs idle over 250 ms before loading \(other processes busy on the rest\): 1$/ : /2\.0 CPUs idle over 250 ms before loading$/);
      } finally {
        clearInterval(timer);
      }
    });
  }
});

describe('infer --target llamacpp --threads runs only the arms listed', () => {
  const args = (out: string, threads: string) => [
    'infer', '--target', 'llamacpp', '--model-path', model, '--threads', threads, '--cold', '1', '--warmup', '0', '--runs', '1',
    '--num-predict', '2', '--gpu-snapshot-cmd', '', '--meter', 'none', '--no-history', '-q', '--json', '--out', out,
  ];
  it('--threads 1: one arm at one thread, no default arm', async () => {
    const r = await cli(args(join(dir, 'one.json'), '1'), { env: { JOULEBENCH_CPU_ROOT: oneCoreTwoThreads() } });
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(readFileSync(join(dir, 'one.json'), 'utf8'));
    assert.deepEqual(file.arms.map((a: { id: string }) => a.id), [`${model}@t=1`]);
    assert.deepEqual(file.protocol.threads, [1]);
  });
  it('--threads default,1: the default arm records its thread count and how it was chosen', async () => {
    const r = await cli(args(join(dir, 'both.json'), 'default,1'), { env: { JOULEBENCH_CPU_ROOT: oneCoreTwoThreads() } });
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(readFileSync(join(dir, 'both.json'), 'utf8'));
    assert.deepEqual(file.arms.map((a: { id: string }) => a.id), [`${model}@t=default`, `${model}@t=1`]);
    const def = file.arms[0];
    assert.equal(def.threads, 1);
    assert.match(def.threads_source, /physical cores allowed \(affinity 0-1/);
    assert.equal(def.runs[0].llamacpp.threads_used, 1);
    assert.equal(file.arms[1].threads_source, 'configured');
    // The table names whose default the default arm is, and the count it came to.
    const table = await cli(['infer', '--report', join(dir, 'both.json')]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /@t=default \(llama\.cpp's default: 1 thread\)/);
    assert.doesNotMatch(table.stdout, /Ollama/);
  });
  it('--threads rejects anything but counts and default (exit 2)', async () => {
    const r = await cli(args(join(dir, 'bad.json'), '2,auto'));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /integers >= 1 and\/or default, got "2,auto"/);
  });
});

describe('a collapsed first case is reported against a one-thread probe', () => {
  it('warns, naming oversubscribed threads, when the first case decodes under 1/10 of one thread', () => {
    const w = firstCaseCollapse(0.55, 4630, 4);
    assert.ok(w);
    assert.match(w, /0\.550 tok\/s with 4 threads, under 0\.1 of the 4\.63e\+3 tok\/s one thread did.*oversubscribed threads/);
    assert.equal(firstCaseCollapse(600, 4630, 4), null, 'slower but not collapsed');
    assert.equal(firstCaseCollapse(0.55, null, 4), null, 'no probe, no verdict');
    assert.equal(firstCaseCollapse(0.55, 4630, 1), null, 'one thread is the probe itself');
  });
  it('a target on more than one thread runs the probe and reports it in describe()', async () => {
    const t = await createLlamaCppTarget({ model_path: model, threads: 2, max_tokens: 4 });
    try {
      await t.answer({ prompt: 'Name a colour.', case: { id: 'c', prompt: 'Name a colour.', expected: null, dataset: 'router', weight: 1, tags: [] } });
      const check = t.describe().thread_check as { one_thread_probe_tok_s: number | null; first_case_decode_tok_s: number | null; warning: string | null };
      assert.ok(check.one_thread_probe_tok_s !== null && check.one_thread_probe_tok_s > 0);
      assert.ok(check.first_case_decode_tok_s !== null && check.first_case_decode_tok_s > 0);
      assert.deepEqual(t.warnings?.() ?? [], check.warning === null ? [] : [check.warning]);
    } finally {
      await t.close?.();
    }
  });
});
