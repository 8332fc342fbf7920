import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BIN } from './helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from './helpers/fake-openai.js';
import { FakeOllama } from './helpers/fake-ollama.js';

const ROOT = dirname(fileURLToPath(new URL('../package.json', import.meta.url)));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const MARK = '<!-- readme-test -->';

/** Runs `code` with bash (errexit, pipefail), killed after 180 s. */
function runBash(code: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

/** The fenced bash blocks of the README, each with whether the line before it marks it for testing. */
function bashBlocks(md: string): { marked: boolean; code: string; line: number }[] {
  const lines = md.split('\n');
  const out: { marked: boolean; code: string; line: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```bash') continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && lines[i] !== '```') body.push(lines[i]!);
    out.push({ marked: lines[start - 1] === MARK, code: body.join('\n'), line: start + 1 });
  }
  return out;
}

describe('README: a guide whose every command runs', () => {
  const work = mkdtempSync(join(tmpdir(), 'jb-readme-'));
  const shims = join(work, '.bin');
  let openai: FakeServer;
  const ollama = new FakeOllama({ models: { 'llama3.2': { parameter_count: 1e9 } }, load_ms: 2, prefill_ms_per_token: 0.01, decode_tok_s: () => 40, reply: () => 'Lima' });
  let ollamaUrl = '';

  before(async () => {
    openai = await startFakeOpenAI((req) => {
      const model = String(req.body.model);
      // Two "models" that answer differently, so the comparison has something to compare.
      return { kind: 'stream', text: model.startsWith('qwen') ? '42 Lima' : 'I do not know', usage: { prompt_tokens: 20, completion_tokens: 3 } };
    });
    ollamaUrl = await ollama.start();
    // `npx joulebench` resolves to this checkout's bin (a separate test below runs the real npx);
    // any other npx call goes to the real one.
    mkdirSync(shims);
    const npx = join(shims, 'npx');
    writeFileSync(npx, `#!/bin/sh\nif [ "$1" = joulebench ]; then shift; exec "${process.execPath}" "${BIN}" "$@"; fi\nexec /usr/bin/env -S npx "$@"\n`);
    chmodSync(npx, 0o755);
  });
  after(async () => {
    await openai.close();
    await ollama.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('is a guide: at most 250 lines, the two set-up commands on the first screen, no seed numbers', () => {
    const lines = README.split('\n');
    assert.ok(lines.length <= 250, `${lines.length} lines`);
    const firstScreen = lines.slice(0, 24).join('\n');
    assert.match(firstScreen, /npm ci && npm start/);
    assert.match(firstScreen, /npm ci && npm test/);
    assert.doesNotMatch(README, /seed \d{3}|seeds\//i, 'words a user knows, not the seed documents');
    for (const h of ['Measure an endpoint', 'Compare two models', 'Measure a local model', 'Benchmark a coding agent', 'Gate a pull request in CI', 'Read the report']) {
      assert.match(README, new RegExp(`^## ${h}`, 'm'), h);
    }
  });

  it('npm start and npm test are what package.json and CI run', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    assert.equal(pkg.scripts.start, 'node bin/joulebench.js run --suite all');
    assert.equal(pkg.bin.joulebench, 'bin/joulebench.js');
    assert.match(readFileSync(join(ROOT, '.ci/run'), 'utf8'), /npm ci\nnpm test/);
    // What `npm start` runs, in a scratch folder: the embedded default works offline.
    const r = spawnSync('sh', ['-c', pkg.scripts.start.replace('node bin/joulebench.js', `"${process.execPath}" "${BIN}"`)], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: join(work, 'home') },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /accuracy +\d/);
    // The sample output in the README is what npm start prints, figure for figure.
    const sample = /```\n(joulebench · suite all[\s\S]*?)```/.exec(README)?.[1] ?? '';
    const sampleLines = sample.split('\n').filter((l) => /^ {2}(accuracy|total energy|J \/ correct)/.test(l));
    assert.equal(sampleLines.length, 3, sample);
    for (const l of sampleLines) assert.ok(r.stderr.includes(l), `README sample line not in npm start's output: ${l}`);
  });

  it('every link to docs/ resolves, and every docs page is linked from the README', () => {
    const links = [...README.matchAll(/\]\((docs\/[^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]!);
    for (const l of links) assert.ok(existsSync(join(ROOT, l)), `${l} exists`);
    for (const page of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
      assert.ok(links.includes(`docs/${page}`), `docs/${page} is linked from the README`);
    }
  });

  it('every bash block is marked for testing, and the CI snippet runs only tested commands', () => {
    const blocks = bashBlocks(README);
    const unmarked = blocks.filter((b) => !b.marked && !b.code.startsWith('npm ci && npm start'));
    assert.deepEqual(unmarked.map((b) => b.line), [], 'a bash block the test does not run');
    const tested = blocks.filter((b) => b.marked).map((b) => b.code).join('\n');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    for (const m of yaml.matchAll(/- run: (.+)/g)) {
      if (m[1] === 'npm ci') continue;
      assert.ok(tested.includes(m[1]!), `the CI step "${m[1]}" is a tested command`);
    }
  });

  it('runs every marked block, in order, in one folder, against servers on 127.0.0.1', async () => {
    const blocks = bashBlocks(README).filter((b) => b.marked);
    assert.ok(blocks.length >= 6);
    const port = (u: string) => new URL(u).port;
    for (const b of blocks) {
      // The README's addresses are the usual ones (vLLM on 8000, Ollama on 11434); here they are the fakes'.
      const code = b.code.replaceAll('127.0.0.1:8000', `127.0.0.1:${port(openai.url)}`).replaceAll('127.0.0.1:11434', `127.0.0.1:${port(ollamaUrl)}`);
      // Asynchronously: the fake servers live in this process and must keep answering.
      const r = await runBash(code, {
        cwd: work,
        env: {
          ...process.env,
          PATH: `${shims}:${process.env.PATH}`,
          NO_COLOR: '1',
          JOULEBENCH_HOME: join(work, 'home'),
          // No GPU snapshot command on a machine without one; the README's infer line uses the default.
          CUDA_VISIBLE_DEVICES: '',
        },
      });
      assert.equal(r.status, 0, `README line ${b.line}:\n${b.code}\n--- stderr:\n${r.stderr}`);
    }
    // What the blocks promised to write is there, in the format its extension names.
    assert.equal((JSON.parse(readFileSync(join(work, 'qwen.json'), 'utf8')) as { target: string }).target, 'openai:qwen2.5-7b');
    assert.match(readFileSync(join(work, 'models.html'), 'utf8'), /^<!doctype html>/i);
    assert.match(readFileSync(join(work, 'comparison.md'), 'utf8'), /Gate: passed/);
    assert.match(readFileSync(join(work, 'first-cases.csv'), 'utf8'), /^run,phase,pass,index,case_id/);
    assert.equal((JSON.parse(readFileSync(join(work, 'local-infer.json'), 'utf8')) as { format: string }).format, 'joulebench-infer/1');
    assert.ok(existsSync(join(work, 'agents.html')));
  });

  it('npx joulebench works in this folder after npm ci (the real npx, no install)', () => {
    // npm exec in the package's own folder runs its `prepare` script (a full rebuild of dist/) first;
    // while other test files import dist/, that rewrite is a race, so scripts are off here.
    const r = spawnSync('npx', ['--no-install', 'joulebench', '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NO_COLOR: '1', npm_config_ignore_scripts: 'true' } });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/);
  });
});
