import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { blockingFolder, runWrappedSync, statOrNull, type Sandbox } from './sandbox.js';
import { commandWords, whichOnPath } from './solvers/command.js';
import type { PreflightCheck, Solver } from './solvers/solver.js';
import type { CodeTask } from './task.js';

/**
 * The preflight: before the first task, the paths each solver needs and each task's test interpreter are
 * tried inside the sandbox, as its user. What fails makes that solver's (or task's) datapoints invalid
 * with the reason and the fix, rather than a 0 % score for the machine's sake.
 */

/** One thing that cannot run inside the sandbox. */
export interface PreflightProblem {
  /** Whose datapoints it makes invalid. */
  scope: 'solver' | 'task';
  /** The solver id or the task name. */
  name: string;
  path: string;
  /** What is wrong, then how to fix it: one line. */
  reason: string;
}

/** Interpreters worth starting (`--version`) rather than only testing for the exec bit: a shim that fails shows here. */
const START_TO_CHECK = /^(node|nodejs|python[\d.]*|pytest|py\.test|npm|npx|deno|bun)$/;

interface PreflightOptions {
  solvers: readonly Solver[];
  /** Tasks whose tests run in the local sandbox (not a container runner). */
  tasks: readonly CodeTask[];
  sandbox: Sandbox;
  env: NodeJS.ProcessEnv;
  tmp_base?: string;
}

export function runPreflight(o: PreflightOptions): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  const scratch = mkdtempSync(join(resolve(o.tmp_base ?? tmpdir()), 'joulebench-preflight-'));
  try {
    chmodSync(scratch, 0o711);
    if (o.sandbox.run_as_uid !== null) chownSync(scratch, o.sandbox.run_as_uid, o.sandbox.run_as_uid);
    for (const solver of o.solvers) {
      const plan = solver.preflight?.(o.env);
      for (const c of plan?.checks ?? []) {
        const why = check(c, o.sandbox, scratch, o.env, plan?.ro_binds ?? []);
        if (why) problems.push({ scope: 'solver', name: solver.id, path: c.path, reason: why });
      }
    }
    const seen = new Map<string, string | null>();
    for (const task of o.tasks) {
      const c = interpreterOf(task.test_cmd, o.env);
      if (!c) continue;
      const key = `${c.path}\0${c.missing ?? ''}`;
      if (!seen.has(key)) seen.set(key, check(c, o.sandbox, scratch, o.env, []));
      const why = seen.get(key);
      if (why) problems.push({ scope: 'task', name: task.name, path: c.path, reason: why });
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return problems;
}

/** The program a test command starts (after `VAR=value` words and `env`/`exec`), as a check; `null` for a script inside the tree. */
function interpreterOf(testCmd: string, env: NodeJS.ProcessEnv): PreflightCheck | null {
  const words = commandWords(testCmd).filter((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  while (words[0] === 'env' || words[0] === 'exec' || words[0] === 'command') words.shift();
  const word = words[0];
  if (!word) return null;
  const what = `the test interpreter ${word}`;
  if (word.includes('/')) return word.startsWith('/') ? { path: word, need: 'exec', what } : null;
  const found = whichOnPath(word, env.PATH);
  return found ? { path: found, need: 'exec', what } : { path: word, need: 'exec', what, missing: `${word} is not found on PATH` };
}

/** Why `c` fails inside the sandbox (reason, then fix), or `null` when it works. */
function check(c: PreflightCheck, sandbox: Sandbox, scratch: string, env: NodeJS.ProcessEnv, roBinds: readonly string[]): string | null {
  if (c.missing) return `${c.what}: ${c.missing} — install it or put it on PATH`;
  const uid = sandbox.run_as_uid;
  const isDir = statOrNull(c.path)?.isDirectory() ?? false;
  const start = c.need === 'exec' && START_TO_CHECK.test(c.path.split('/').pop() ?? '');
  const script = c.need === 'exec' ? (start ? '"$1" --version >/dev/null' : 'test -x "$1"') : isDir ? 'test -r "$1" && test -x "$1"' : 'test -r "$1"';
  const w = sandbox.wrap(['sh', '-c', script, 'preflight', c.path], scratch, { ro_binds: roBinds });
  try {
    runWrappedSync(w, { cwd: scratch, env, timeout_ms: 30_000 });
    return null;
  } catch (e) {
    const said = ((e as { stderr?: Buffer }).stderr?.toString() ?? '').trim().split('\n').filter(Boolean).pop() ?? (e as Error).message.split('\n')[0];
    const as = uid !== null ? `as uid ${uid} (the sandbox's user)` : 'in the sandbox';
    const blocked = uid !== null ? blockingFolder(uid, c.path) : null;
    if (blocked) return `${c.what} ${c.path} cannot run ${as}: ${blocked} is closed to other users — chmod o+x ${blocked} (or install it where every user can reach it)`;
    const inTmp = resolve(c.path).startsWith('/tmp/') && sandbox.kind === 'bwrap';
    const fix = inTmp ? `--allow-read ${isDir ? c.path : resolve(c.path, '..')} (the sandbox has its own /tmp)` : `--allow-read the folder it needs, chmod o+rx its files, or --sandbox none`;
    return `${c.what} ${c.path} does not ${c.need === 'exec' ? 'run' : 'read'} ${as}${said ? ` (${said})` : ''} — ${fix}`;
  }
}
