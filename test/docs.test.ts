import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BIN } from './helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from './helpers/fake-openai.js';
import { writePowercapTree } from './meters/powercap-tree.js';
import { COMMANDS } from '../src/cli/program.js';
import { loadCodeSuite } from '../src/code/task.js';

const ROOT = dirname(fileURLToPath(new URL('../package.json', import.meta.url)));
const DOCS = join(ROOT, 'docs');
const pages = readdirSync(DOCS).filter((f) => f.endsWith('.md')).sort();

/**
 * The `joulebench` commands of docs/*.md's bash and sh blocks that cannot run offline here, each with why.
 * Every other one is run (its block in order, in one folder); a line with a placeholder (`…`, `[--flag]`) is
 * never run. A key that no longer matches a command in the docs fails the test, so this list stays true.
 */
const OFFLINE_SKIP: Record<string, string> = {
  'joulebench code': 'the smoke suite: 18 sandboxed test runs (test/code/ runs it)',
  'joulebench code --suite smoke --solvers reference,noop,claude': 'needs the claude CLI and its key',
  'joulebench code --suite ./my-tasks': 'needs your own tasks and agent',
  'joulebench code --report results.json': 'reads the results.json of a run with claude',
  'joulebench fetch': 'needs a network',
  'joulebench code --suite swebench-verified.parquet': 'needs SWE-bench Verified and repository mirrors',
  'joulebench run --suite mmlu --data ./mmlu/test': 'needs your copy of MMLU in ./mmlu/test',
  'joulebench run --suite mmlu --config qwen.yaml': 'a remote endpoint and its key',
  'joulebench run --meter rapl --powercap-root /host/sys/class/powercap': "a container's bind mount",
  'joulebench meter -- python train.py': 'your own program',
  'joulebench meter --meter rapl --json -- ./bench.sh': 'your own program',
  'joulebench run --suite router --target openai --endpoint http://127.0.0.1:8000/v1 --model m --request-rate 4': '200 requests at 4/s: 50 s',
  'joulebench report sweep': 'the files of the rate sweep above',
  'joulebench run --target openai --endpoint http://127.0.0.1:8000/v1 --model m --request-rate 8': '500 requests at 8/s: 62 s (test/cli/load-dataset.test.ts runs the random dataset)',
  'joulebench infer': 'needs an Ollama server on its default address',
  'joulebench run --suite mt-bench': 'needs the fetched MT-Bench questions and a judge endpoint',
  'joulebench rescore mtb.results.jsonl': 'the MT-Bench run above',
  'joulebench report r.json 12 last': 'history run 12 of your own history',
  'joulebench report r.json agents.json infer.json': 'files of other commands',
  'joulebench compare 11 12': 'history runs 11 and 12 of your own history',
  'joulebench compare a.json b.json': 'the load runs above',
  'joulebench sweep plan.yaml --queue': 'a Redis queue and workers on other machines',
  'joulebench view': 'a web server that runs until stopped (test/view/view.test.ts starts it)',
};

interface Command {
  page: string;
  line: number;
  text: string;
}
interface Block {
  page: string;
  line: number;
  /** Each logical line (continuations joined), with the number of physical lines it spans. */
  lines: { text: string; span: number }[];
}

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(DOCS, page), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```bash' && lines[i] !== '```sh') continue;
    const block: Block = { page, line: i + 1, lines: [] };
    while (++i < lines.length && lines[i] !== '```') {
      let text = lines[i]!;
      let span = 1;
      while (text.endsWith('\\') && i + 1 < lines.length) {
        text = `${text.slice(0, -1)} ${lines[++i]!.trim()}`;
        span++;
      }
      block.lines.push({ text, span });
    }
    out.push(block);
  }
  return out;
}

const isJoulebench = (text: string): boolean => /^(?:[A-Z_]+=\S+ )*joulebench /.test(text.trim());
const placeholder = (text: string): boolean => /…|\.\.\.|\[--/.test(text.replace(/#.*$/, ''));
/** The longest skip key the command starts with (comments dropped, spaces collapsed). */
function skipKey(text: string): string | undefined {
  const norm = text.replace(/\s+#.*$/, '').replace(/\s+/g, ' ').trim();
  return Object.keys(OFFLINE_SKIP)
    .filter((k) => norm.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
}

const blocks = pages.flatMap(blocksOf);
const commands: Command[] = blocks.flatMap((b) => b.lines.filter((l) => isJoulebench(l.text)).map((l) => ({ page: b.page, line: b.line, text: l.text })));

describe('docs/*.md are true when tried', () => {
  const work = mkdtempSync(join(tmpdir(), 'jb-docs-'));
  const shims = join(work, '.bin');
  const rapl = writePowercapTree([
    { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1000 },
    { entry: 'intel-rapl:0:0', name: 'dram', energy_uj: 100 },
  ]);
  let openai: FakeServer;
  before(async () => {
    openai = await startFakeOpenAI(() => ({ kind: 'plain', text: 'B', usage: { prompt_tokens: 20, completion_tokens: 1 } }));
    mkdirSync(shims);
    writeFileSync(join(shims, 'joulebench'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, 'joulebench'), 0o755);
  });
  after(async () => {
    await openai.close();
    rapl.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('every command in a bash or sh block is run below, or skipped here with its reason; every skip still names one', () => {
    assert.ok(commands.length >= 20, `${commands.length} commands`);
    const used = new Set(commands.map((c) => skipKey(c.text)).filter((k): k is string => k !== undefined));
    assert.deepEqual(Object.keys(OFFLINE_SKIP).filter((k) => !used.has(k)), [], 'a skip that names no command in docs/');
  });

  it('runs every block with a command that can run offline, in order, in one folder', async () => {
    let ran = 0;
    for (const b of blocks) {
      const runnable = b.lines.filter((l) => isJoulebench(l.text) && !placeholder(l.text) && skipKey(l.text) === undefined);
      if (runnable.length === 0) continue;
      // The block as written, its skipped commands (and only those) left out; the usual vLLM address is the fake's.
      const code = b.lines
        .map((l) => (isJoulebench(l.text) && !runnable.includes(l) ? ': skipped' : l.text))
        .join('\n')
        .replaceAll('127.0.0.1:8000', new URL(openai.url).host);
      const r = await runBash(code, {
        cwd: work,
        env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, NO_COLOR: '1', JOULEBENCH_HOME: join(work, 'home'), JOULEBENCH_POWERCAP_ROOT: rapl.root, CUDA_VISIBLE_DEVICES: '' },
      });
      assert.equal(r.status, 0, `docs/${b.page} line ${b.line}:\n${code}\n--- stderr:\n${r.stderr}`);
      ran += runnable.length;
    }
    assert.ok(ran >= 8, `${ran} commands ran`);
  });

  it("docs/code.md's sample output names the smoke suite's digest", () => {
    const text = readFileSync(join(DOCS, 'code.md'), 'utf8');
    const shown = /suite smoke \(\d+ tasks, (sha256:[0-9a-f]{12})…\)/.exec(text)?.[1];
    assert.equal(shown, loadCodeSuite('smoke').digest.slice(0, 'sha256:'.length + 12));
  });

  it("docs/commands.md's command table is the CLI's own (scripts/gen-commands-doc.mjs)", () => {
    const text = readFileSync(join(DOCS, 'commands.md'), 'utf8');
    const rows = [...text.matchAll(/^\| `joulebench ([^`]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]!.replaceAll('\\|', '|')]);
    assert.deepEqual(rows, Object.values(COMMANDS).map((c) => [c.term, c.summary]), 'run: npm run build && node scripts/gen-commands-doc.mjs');
  });

  it('docs/dependencies.md names every package in package.json', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const text = readFileSync(join(DOCS, 'dependencies.md'), 'utf8');
    const names = ['dependencies', 'optionalDependencies', 'devDependencies'].flatMap((k) => Object.keys(pkg[k] ?? {}));
    for (const n of names.filter((n) => !n.startsWith('@types/'))) assert.match(text, new RegExp('`' + n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') + '(@\\d+)?`'), n);
  });
});

/** Runs `code` with bash (errexit, pipefail), killed after 120 s; asynchronous, so the fake server keeps answering. */
function runBash(code: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', code], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}
