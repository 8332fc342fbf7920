import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { digestOf } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import { bundledCodeSuitesDir } from './paths.js';
import { readTextFile } from '../read-text.js';
import { MAX_TIMER_S, timerLimitText } from '../core/bounds.js';
import { defaultTestFormat } from './test-report/setup.js';
import { TEST_FORMATS, type TestFormat } from './test-report/types.js';

/** The bundled coding suites (folders under src/code/suites/). */
export const BUNDLED_CODE_SUITES = ['smoke'] as const;

/** One coding task: a buggy tree with tests that fail, a prompt, and a known-good fix. */
export interface CodeTask {
  name: string;
  prompt: string;
  /** Shell command run in the workdir; it reports each test's outcome in `test_format`. */
  test_cmd: string;
  /** How `test_cmd` reports each test (the oracle grades from that report, never from the exit status). */
  test_format: TestFormat;
  /** Paths (files or folders, relative to before/) restored from before/ ahead of grading. */
  test_files: string[];
  /** Hidden tests (`tests/`), laid over the tree only for the baseline and grading runs; `null` when none. */
  tests_dir: string | null;
  /** SWE-bench's FAIL_TO_PASS: tests that must fail before and pass after (each run through `test_cmd`'s `{test}`). */
  fail_to_pass: string[];
  /** SWE-bench's PASS_TO_PASS: tests that must pass before and after. */
  pass_to_pass: string[];
  /** Folders no solver or test run may read (hidden inside the sandbox): the task folder, a repo mirror. */
  private_paths: string[];
  /** The solver's time limit, seconds; `null` uses the run's default. */
  timeout_s: number | null;
  /** The limit for each run of `test_cmd`, seconds. */
  test_timeout_s: number;
  /** The task folder, its before/ and reference/ trees, and its task.toml. */
  dir: string;
  before_dir: string;
  /** The fixed files copied over before/ by the `reference` solver (`null` when `reference_patch` is used). */
  reference_dir: string | null;
  /** A unified diff the `reference` solver applies with `git apply` (SWE-bench's `patch`), else `null`. */
  reference_patch?: string | null;
  toml_path: string;
  /** A SWE-bench instance's identity, for the docker runner (its image, its `/testbed` commit, its test_patch). */
  swebench?: { instance_id: string; base_commit: string; test_patch: string };
  /** sha256 over task.toml, before/ and reference/ (paths and bytes). */
  digest: string;
}

/** A folder of tasks. */
export interface CodeSuite {
  name: string;
  /** `bundled suite "smoke"` or the folder given. */
  source: string;
  dir: string;
  tasks: CodeTask[];
  /** sha256 over the task digests, in order: two runs are comparable only when these match. */
  digest: string;
}

const relPath = z
  .string()
  .min(1, 'must be a non-empty path')
  .refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), 'must be a relative path inside before/ (no "/" start, no "..")');

/** task.toml as written. Unknown keys are errors, so a typo never passes silently. */
const taskTomlSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be letters, digits, ".", "_" or "-"'),
    prompt: z.string().trim().min(1, 'must be a non-empty string'),
    test_cmd: z.string().trim().min(1, 'must be a non-empty string'),
    test_format: z.enum(TEST_FORMATS as [TestFormat, ...TestFormat[]]).optional(),
    test_files: z.array(relPath).default([]),
    fail_to_pass: z.array(z.string().min(1)).default([]),
    pass_to_pass: z.array(z.string().min(1)).default([]),
    timeout_s: z.number().positive('must be > 0').finite().max(MAX_TIMER_S, timerLimitText('s')).optional(),
    test_timeout_s: z.number().positive('must be > 0').finite().max(MAX_TIMER_S, timerLimitText('s')).default(60),
    description: z.string().optional(),
    tags: z.array(z.string()).default([]),
  })
  .strict();

/** Loads a bundled suite by name or a suite folder (each subfolder holding a task.toml is a task). */
export function loadCodeSuite(spec: string, only?: readonly string[]): CodeSuite {
  const bundled = (BUNDLED_CODE_SUITES as readonly string[]).includes(spec);
  const dir = bundled ? join(bundledCodeSuitesDir(), spec) : resolve(spec);
  const source = bundled ? `bundled suite "${spec}"` : spec;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new JoulebenchError('E_SUITE', `--suite ${spec}: not a folder (bundled coding suites: ${BUNDLED_CODE_SUITES.join(', ')})`);
  }
  let tasks: CodeTask[];
  if (existsSync(join(dir, 'task.toml'))) {
    tasks = [loadCodeTask(dir)];
  } else {
    tasks = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'task.toml')))
      .map((d) => d.name)
      .sort()
      .map((name) => loadCodeTask(join(dir, name)));
  }
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.name)) throw new JoulebenchError('E_SUITE', `${t.toml_path}: name: "${t.name}" is used by another task in ${source}`);
    seen.add(t.name);
  }
  if (only && only.length > 0) {
    const missing = only.filter((n) => !seen.has(n));
    if (missing.length > 0) throw new JoulebenchError('E_USAGE', `--tasks: no task named ${missing.map((m) => `"${m}"`).join(', ')} in ${source}`);
    tasks = tasks.filter((t) => only.includes(t.name));
  }
  if (tasks.length === 0) throw new JoulebenchError('E_SUITE', `--suite ${spec}: no task folders (a task is a folder with task.toml, before/ and reference/)`);
  return codeSuite(bundled ? spec : basename(dir), source, dir, tasks);
}

/** A suite of `tasks`, its digest over theirs in order. */
export function codeSuite(name: string, source: string, dir: string, tasks: CodeTask[]): CodeSuite {
  return { name, source, dir, tasks, digest: digestOf(tasks.map((t) => ({ name: t.name, digest: t.digest }))) };
}

/** Reads and validates one task folder; every problem is one line naming the file and key. */
export function loadCodeTask(dir: string): CodeTask {
  const tomlPath = join(dir, 'task.toml');
  const text = readTextFile(tomlPath, 'E_SUITE');
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (e) {
    throw new JoulebenchError('E_SUITE', `${tomlPath}: not valid TOML (${(e as Error).message.split('\n')[0]})`);
  }
  const parsed = taskTomlSchema.safeParse(raw);
  if (!parsed.success) throw new JoulebenchError('E_SUITE', `${tomlPath}: ${describeIssue(parsed.error)}`);
  const t = parsed.data;

  const before = join(dir, 'before');
  const reference = join(dir, 'reference');
  for (const [key, path] of [['before/', before], ['reference/', reference]] as const) {
    if (!existsSync(path) || !statSync(path).isDirectory()) {
      throw new JoulebenchError('E_SUITE', `${dir}: ${key} is missing (a task holds task.toml, before/ and reference/)`);
    }
  }
  const testsDir = join(dir, 'tests');
  const hasHidden = existsSync(testsDir) && statSync(testsDir).isDirectory();
  if (t.test_files.length === 0 && !hasHidden) {
    throw new JoulebenchError('E_SUITE', `${tomlPath}: test_files: must list at least one test file (or hold hidden tests in tests/)`);
  }
  if ((t.fail_to_pass.length > 0 || t.pass_to_pass.length > 0) && t.fail_to_pass.length === 0) {
    throw new JoulebenchError('E_SUITE', `${tomlPath}: fail_to_pass: must name at least one test when pass_to_pass is set (a task needs a test its fix turns green)`);
  }
  t.test_files.forEach((f, i) => {
    if (!existsSync(join(before, f))) {
      throw new JoulebenchError('E_SUITE', `${tomlPath}: test_files[${i}]: "${f}" does not exist in before/`);
    }
  });
  const refFiles = listFiles(reference);
  if (refFiles.length === 0) throw new JoulebenchError('E_SUITE', `${dir}: reference/ is empty (it holds the fixed files)`);
  for (const f of refFiles) {
    if (isUnder(f, t.test_files)) {
      throw new JoulebenchError('E_SUITE', `${tomlPath}: test_files: reference/${f} changes a test file (the fix must leave the tests alone)`);
    }
  }
  return {
    name: t.name,
    prompt: t.prompt,
    test_cmd: t.test_cmd,
    test_format: t.test_format ?? defaultTestFormat(t.test_cmd),
    test_files: t.test_files,
    tests_dir: hasHidden ? testsDir : null,
    fail_to_pass: t.fail_to_pass,
    pass_to_pass: t.pass_to_pass,
    private_paths: [dir],
    timeout_s: t.timeout_s ?? null,
    test_timeout_s: t.test_timeout_s,
    dir,
    before_dir: before,
    reference_dir: reference,
    toml_path: tomlPath,
    digest: treeDigest([
      ['task.toml', Buffer.from(text)],
      ...listFiles(before).map((f) => [`before/${f}`, readFileSync(join(before, f))] as [string, Buffer]),
      ...refFiles.map((f) => [`reference/${f}`, readFileSync(join(reference, f))] as [string, Buffer]),
      ...(hasHidden ? listFiles(testsDir).map((f) => [`tests/${f}`, readFileSync(join(testsDir, f))] as [string, Buffer]) : []),
    ]),
  };
}

/** True when `file` (posix, relative) is one of `paths` or inside one of them. */
export function isUnder(file: string, paths: readonly string[]): boolean {
  const norm = (p: string) => p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
  const f = norm(file);
  return paths.some((p) => {
    const q = norm(p);
    return f === q || f.startsWith(q + '/');
  });
}

/** Every regular file under `root`, as sorted posix paths relative to it. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else out.push(relative(root, p).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

export function treeDigest(entries: [string, Buffer][]): string {
  const h = createHash('sha256');
  for (const [name, bytes] of entries) {
    h.update(name).update('\0').update(createHash('sha256').update(bytes).digest('hex')).update('\n');
  }
  return 'sha256:' + h.digest('hex');
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid task';
  if (issue.code === 'unrecognized_keys') {
    return `${((issue as { keys?: string[] }).keys ?? []).join(', ')}: unknown key (known: ${Object.keys(taskTomlSchema.shape).join(', ')})`;
  }
  const key = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || '(top level)';
  const message = issue.code === 'invalid_type' && /received undefined/.test(issue.message) ? 'is required' : issue.message;
  return `${key}: ${message}`;
}
