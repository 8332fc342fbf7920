import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { digestOf } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import { readTextFile } from '../read-text.js';
import { attempt } from './attempt.js';
import { applyPatch } from './solvers/reference.js';
import { codeSuite, type CodeSuite, type CodeTask } from './task.js';
import { defaultTestFormat } from './test-report/setup.js';
import type { TestFormat } from './test-report/types.js';

/**
 * SWE-bench instances (Jimenez et al., ICLR 2024) against local git mirrors: before/ is `base_commit`'s tree in a
 * fresh one-commit repository (no later history holds the fix); files `test_patch` touches are hidden tests.
 */

/** A list field: an array, or (as the published dataset stores them) a JSON-encoded array. */
const testList = z.union([
  z.array(z.string()),
  z.string().transform((s, ctx) => {
    const v = attempt(() => JSON.parse(s) as unknown, null);
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
    ctx.addIssue({ code: 'custom', message: 'must be a list of test names (or a JSON-encoded one)' });
    return z.NEVER;
  }),
]);

/** One instance, as SWE-bench publishes it (other fields pass through). */
const swebenchInstanceSchema = z.looseObject({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/, 'must be owner/name'),
  base_commit: z.string().regex(/^[0-9a-f]{7,40}$/, 'must be a commit hash'),
  problem_statement: z.string().min(1),
  patch: z.string(),
  test_patch: z.string().min(1),
  FAIL_TO_PASS: testList,
  PASS_TO_PASS: testList,
  version: z.union([z.string(), z.number()]).optional(),
  environment_setup_commit: z.string().optional(),
});
export type SwebenchInstance = z.infer<typeof swebenchInstanceSchema>;

/** How to run SWE-bench instances locally. */
export interface SwebenchOptions {
  /** Folder of git mirrors: `<owner>__<name>` (SWE-bench's own naming) or `<owner>/<name>`. */
  repos_dir: string;
  /** The test command; `{test}` is each FAIL_TO_PASS / PASS_TO_PASS name, shell-quoted. */
  test_cmd: string;
  /** Only these instance ids. */
  only?: readonly string[];
  /** Limit of each test run, seconds. */
  test_timeout_s?: number;
  /** How the test command reports each test (default: from the command, `pytest-junit` for pytest). */
  test_format?: TestFormat;
}

/** True when `path` names a SWE-bench instances file (by extension). */
export function isSwebenchFile(path: string): boolean {
  return /\.(jsonl|json|parquet)$/i.test(path) && existsSync(path) && statSync(path).isFile();
}

/** Reads instances from JSON (an array), JSONL or Parquet (via hyparquet, loaded only here). */
export async function readSwebenchInstances(path: string): Promise<SwebenchInstance[]> {
  let rows: unknown[];
  if (/\.parquet$/i.test(path)) {
    const { parquetReadObjects } = await import('hyparquet');
    const bytes = readFileSync(path);
    try {
      rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) });
    } catch (e) {
      throw new JoulebenchError('E_SUITE', `${path}: not a readable Parquet file (${(e as Error).message})`);
    }
  } else {
    const text = readTextFile(path, 'E_SUITE');
    if (/\.jsonl$/i.test(path)) {
      rows = text.split('\n').flatMap((line, i) => {
        if (line.trim() === '') return [];
        try {
          return [JSON.parse(line) as unknown];
        } catch {
          throw new JoulebenchError('E_SUITE', `${path}: line ${i + 1}: not valid JSON`);
        }
      });
    } else {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch (e) {
        throw new JoulebenchError('E_SUITE', `${path}: not valid JSON (${(e as Error).message})`);
      }
      if (!Array.isArray(v)) throw new JoulebenchError('E_SUITE', `${path}: must be a JSON array of SWE-bench instances`);
      rows = v;
    }
  }
  return rows.map((r, i) => {
    const p = swebenchInstanceSchema.safeParse(r);
    if (!p.success) {
      const issue = p.error.issues[0];
      const key = issue?.path.map(String).join('.') || '(instance)';
      throw new JoulebenchError('E_SUITE', `${path}: instance ${i + 1}: ${key}: ${issue?.message ?? 'invalid'}`);
    }
    return p.data;
  });
}

/** The mirror of `owner/name` under `dir`. */
function mirrorPath(dir: string, repo: string): string {
  for (const p of [join(dir, repo.replace('/', '__')), join(dir, repo)]) if (existsSync(p)) return p;
  throw new JoulebenchError('E_SUITE', `--repos ${dir}: no git mirror of ${repo} (expected ${repo.replace('/', '__')}/ or ${repo}/)`);
}

/** Files a unified diff touches (their `b/` side; deletions skipped). */
export function patchedFiles(patch: string): string[] {
  const out = new Set<string>();
  for (const m of patch.matchAll(/^\+\+\+ b\/(.+)$/gm)) if (m[1]) out.add(m[1].trim());
  return [...out].sort();
}

const GIT_ID = ['-c', 'user.name=joulebench', '-c', 'user.email=joulebench@localhost', '-c', 'commit.gpgsign=false'];

/** Loads instances as a coding suite, materialising each one's trees under a temp folder removed at exit. */
export async function loadSwebenchSuite(path: string, opts: SwebenchOptions): Promise<CodeSuite> {
  let instances = await readSwebenchInstances(path);
  if (opts.only && opts.only.length > 0) {
    const ids = new Set(instances.map((i) => i.instance_id));
    const missing = opts.only.filter((n) => !ids.has(n));
    if (missing.length > 0) throw new JoulebenchError('E_USAGE', `--tasks: no instance ${missing.map((m) => `"${m}"`).join(', ')} in ${path}`);
    instances = instances.filter((i) => opts.only!.includes(i.instance_id));
  }
  if (instances.length === 0) throw new JoulebenchError('E_SUITE', `${path}: no instances`);
  const reposDir = resolve(opts.repos_dir);
  if (!existsSync(reposDir)) throw new JoulebenchError('E_USAGE', `--repos ${opts.repos_dir}: not a folder`);
  const root = mkdtempSync(join(tmpdir(), 'joulebench-swebench-'));
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const tasks = instances.map((inst) => materialise(inst, root, reposDir, opts));
  return codeSuite(basename(path).replace(/\.(jsonl|json|parquet)$/i, ''), path, dirname(resolve(path)), tasks);
}

function materialise(inst: SwebenchInstance, root: string, reposDir: string, opts: SwebenchOptions): CodeTask {
  const name = inst.instance_id.replace(/[^A-Za-z0-9._-]/g, '_');
  const dir = join(root, name);
  const before = join(dir, 'before');
  const tests = join(dir, 'tests');
  mkdirSync(before, { recursive: true });
  const mirror = mirrorPath(reposDir, inst.repo);
  const git = (args: string[], cwd: string, input?: Buffer) => execFileSync('git', [...GIT_ID, ...args], { cwd, input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  try {
    const tar = git(['archive', '--format=tar', inst.base_commit], mirror);
    execFileSync('tar', ['-x', '-C', before], { input: tar });
    git(['init', '-q'], before);
    git(['add', '-A'], before);
    git(['commit', '-q', '--allow-empty', '-m', `${inst.repo}@${inst.base_commit}`], before);
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new JoulebenchError('E_SUITE', `${inst.instance_id}: cannot check out ${inst.base_commit} from ${mirror} (${(err.stderr?.toString().trim() || err.message).split('\n')[0]})`);
  }
  // The test files as test_patch leaves them: laid over the tree only for baseline and grading.
  const scratch = join(dir, 'with-tests');
  execFileSync('cp', ['-a', `${before}/.`, scratch]);
  try {
    applyPatch(scratch, inst.test_patch);
  } catch (e) {
    throw new JoulebenchError('E_SUITE', `${inst.instance_id}: test_patch does not apply to ${inst.base_commit} (${((e as { stderr?: Buffer }).stderr?.toString() ?? '').trim().split('\n')[0]})`);
  }
  for (const f of patchedFiles(inst.test_patch)) {
    if (!existsSync(join(scratch, f))) continue;
    mkdirSync(dirname(join(tests, f)), { recursive: true });
    execFileSync('cp', ['-a', join(scratch, f), join(tests, f)]);
  }
  rmSync(scratch, { recursive: true, force: true });
  const format = opts.test_format ?? defaultTestFormat(opts.test_cmd);
  return {
    name,
    prompt: inst.problem_statement,
    test_cmd: opts.test_cmd,
    test_format: format,
    test_files: [],
    tests_dir: existsSync(tests) ? tests : null,
    fail_to_pass: inst.FAIL_TO_PASS,
    pass_to_pass: inst.PASS_TO_PASS,
    private_paths: [reposDir, dir],
    timeout_s: null,
    test_timeout_s: opts.test_timeout_s ?? 300,
    dir,
    before_dir: before,
    reference_dir: null,
    reference_patch: inst.patch,
    swebench: { instance_id: inst.instance_id, base_commit: inst.base_commit, test_patch: inst.test_patch },
    toml_path: `${inst.instance_id} (SWE-bench instance)`,
    // Every member a string or a list of strings: canonical JSON is JSON.stringify's.
    digest: digestOf([inst.instance_id, inst.repo, inst.base_commit, inst.problem_statement, inst.patch, inst.test_patch, inst.FAIL_TO_PASS, inst.PASS_TO_PASS, opts.test_cmd, format]),
  };
}

/**
 * SWE-bench's evaluation image as its harness names it (`TestSpec.instance_image_key`), `__` made `_1776_` (Docker Hub
 * allows no double underscore); a `null` namespace names a locally built image (`--namespace none`).
 */
export function swebenchImage(instanceId: string, o: { namespace?: string | null; tag?: string; arch?: string } = {}): string {
  const namespace = o.namespace === undefined ? 'swebench' : o.namespace;
  const key = `sweb.eval.${o.arch ?? 'x86_64'}.${instanceId.toLowerCase()}:${o.tag ?? 'latest'}`;
  return namespace === null ? key : `${namespace}/${key}`.replaceAll('__', '_1776_');
}

/** The image architecture SWE-bench's harness picks for this machine (`platform.machine()`): arm64 on ARM, else x86_64. */
export function swebenchArch(machine: string): string {
  return machine === 'aarch64' || machine === 'arm64' ? 'arm64' : 'x86_64';
}

/** Why Docker cannot run containers here, or `null` when it can (`docker info` answers). */
export function dockerProblem(bin = 'docker'): string | null {
  try {
    execFileSync(bin, ['info', '--format', '{{.ServerVersion}}'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 });
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') return 'docker is not installed';
    return `docker cannot reach an engine (${(err.stderr?.toString().trim() || err.message).split('\n')[0]})`;
  }
}

/** Where `joulebench fetch swebench-verified` downloads from: the Verified split's Parquet file on Hugging Face. */
const SWEBENCH_VERIFIED_URL = 'https://huggingface.co/datasets/princeton-nlp/SWE-bench_Verified/resolve/main/data/test-00000-of-00001.parquet';

/** Downloads a SWE-bench Parquet file and checks it reads as instances; returns the bytes and the instance count. */
export async function fetchSwebenchParquet(url: string = SWEBENCH_VERIFIED_URL): Promise<{ bytes: Buffer; count: number }> {
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new JoulebenchError('E_RUN', `fetch swebench-verified: ${url}: ${(e as Error).message} (no network? nothing else needs this file)`);
  }
  if (!res.ok) throw new JoulebenchError('E_RUN', `fetch swebench-verified: ${url}: HTTP ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const { parquetReadObjects } = await import('hyparquet');
  const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), columns: ['instance_id'] });
  return { bytes, count: rows.length };
}
