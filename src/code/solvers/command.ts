import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { parseAgentOutput, type AgentOutputFormat } from '../agent-output.js';
import { execSandboxed } from '../process.js';
import { inProcessOutcome, type PreflightCheck, type SolveOutcome, type Solver } from './solver.js';

/** A solver that runs an agent CLI in the workdir. */
interface CommandSolverOptions {
  id: string;
  /** Shell command; `{prompt}`, `{workdir}` and `{task}` are replaced by shell-quoted values. */
  template: string;
  /** How to read cost and tokens from its stdout. */
  format: AgentOutputFormat;
  /** The preset it came from, if any. */
  preset?: string;
  /** Where a relative command path (`./agent.sh`) is resolved: the folder joulebench was started from. */
  cwd?: string;
}

const TAIL_CHARS = 2000;

/** Single-quotes a value for `sh`. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The template with its placeholders replaced (each value quoted, so do not quote them again). */
export function expandTemplate(template: string, values: { prompt: string; workdir: string; task: string }): string {
  return template.replace(/\{(prompt|workdir|task)\}/g, (_m, key: 'prompt' | 'workdir' | 'task') => shellQuote(values[key]));
}

/**
 * A command word that is a path is made absolute against `cwd` (`./agent.sh` is the user's, not the workdir's):
 * the rewritten template and that path (bound read-only into the sandbox), or `null` for a bare name on PATH.
 */
function resolveCommandPath(template: string, cwd: string): { template: string; path: string | null } {
  const m = /^(\s*)('([^']*)'|"([^"$`\\]*)"|([^\s'"()|&;<>]+))/.exec(template);
  const word = m ? (m[3] ?? m[4] ?? m[5] ?? '') : '';
  if (!m || !word.includes('/') || word.includes('{')) return { template, path: null };
  const abs = isAbsolute(word) ? word : resolve(cwd, word);
  return { template: `${m[1]}${shellQuote(abs)}${template.slice(m[0].length)}`, path: abs };
}

/** The words of a shell command line, unquoted; a word holding an expansion or a placeholder is left out. */
export function commandWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"([^"$`\\]*)"|((?:\\.|[^\s'"()|&;<>])+)|([()|&;<>]+)|\s+/gy;
  let word: string | null = null;
  let m: RegExpExecArray | null;
  while (re.lastIndex < line.length && (m = re.exec(line)) !== null) {
    if (m[0] === '') break;
    if (m[4] !== undefined || /^\s+$/.test(m[0])) {
      if (word !== null) words.push(word);
      word = null;
      continue;
    }
    const part = m[1] ?? m[2] ?? (m[3] ?? '').replace(/\\(.)/g, '$1');
    word = (word ?? '') + part;
  }
  if (word !== null) words.push(word);
  return words.filter((w) => !/[$`{}*?]/.test(w));
}

/** Absolute paths a command line names that exist (each is bound read-only into the sandbox at its own path). */
function pathsNamed(line: string): string[] {
  return [...new Set(commandWords(line).filter((w) => isAbsolute(w) && existsSync(w)))];
}

/** The first PATH entry holding an executable `name`, or `null`. */
export function whichOnPath(name: string, path: string | undefined): string | null {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

/** The outcome of a solver that could not start because its command is missing. */
function unavailableOutcome(why: string): SolveOutcome {
  return { ...inProcessOutcome(), exit_code: null, cost_usd: null, error: why, unavailable: why };
}

/** `cmd:<template>`: any agent CLI, run under the sandbox with the task's prompt. */
export function commandSolver(opts: CommandSolverOptions): Solver {
  const resolved = resolveCommandPath(opts.template, opts.cwd ?? process.cwd());
  const presetBin = opts.preset ? opts.template.split(/\s/)[0] ?? null : null;
  // Every existing path the command names (not only its first word) is visible inside the sandbox.
  const binds = [...new Set([...(resolved.path !== null ? [resolved.path] : []), ...pathsNamed(resolved.template)])];
  return {
    id: opts.id,
    kind: 'cmd',
    preflight: (env) => {
      const checks: PreflightCheck[] = [];
      if (presetBin) {
        const found = whichOnPath(presetBin, env.PATH);
        checks.push(found ? { path: found, need: 'exec', what: `${opts.preset}'s CLI` } : { path: presetBin, need: 'exec', what: `${opts.preset}'s CLI`, missing: `${presetBin} is not installed (not found on PATH)` });
      } else if (resolved.path !== null) {
        checks.push({ path: resolved.path, need: 'exec', what: 'the command' });
      } else {
        const word = commandWords(resolved.template)[0];
        const found = word && !word.includes('/') ? whichOnPath(word, env.PATH) : null;
        if (found) checks.push({ path: found, need: 'exec', what: `the command ${word}` });
      }
      for (const p of binds) if (p !== resolved.path) checks.push({ path: p, need: 'read', what: 'a path the command names' });
      return { checks, ro_binds: binds };
    },
    async solve(ctx) {
      if (presetBin && !whichOnPath(presetBin, ctx.env.PATH)) {
        return unavailableOutcome(`${presetBin} is not installed (not found on PATH); --solvers ${opts.preset} needs its CLI`);
      }
      if (resolved.path !== null && !existsSync(resolved.path)) return unavailableOutcome(`${resolved.path}: no such file`);
      const line = expandTemplate(resolved.template, { prompt: ctx.task.prompt, workdir: ctx.workdir, task: ctx.task.name });
      const env = {
        ...ctx.env,
        JOULEBENCH_PROMPT: ctx.task.prompt,
        JOULEBENCH_TASK: ctx.task.name,
        JOULEBENCH_WORKDIR: ctx.workdir,
      };
      const { timeout_ms, kill_grace_ms, memory_limit_bytes } = ctx;
      const wrap = { hide: ctx.hide, ro_binds: binds };
      const r = await execSandboxed(ctx.sandbox, line, ctx.workdir, wrap, { env, timeout_ms, kill_grace_ms, memory_limit_bytes });
      // 127 (not found) and 126 (not executable) are sh's own: the agent never ran. bwrap failing to bind a
      // path it cannot reach says the same. Such a datapoint is invalid, never "not resolved".
      const lastErr = r.stderr.trim().split('\n').pop() ?? '';
      const bwrapFailed = r.stderr.split('\n').find((l) => /bwrap: Can't find source path/.test(l)) ?? null;
      const notFound =
        bwrapFailed !== null
          ? `the sandbox could not bind a path the command needs (${bwrapFailed.trim()}); see --allow-read and docs/safety.md`
          : r.exit_code === 127
            ? `command not found (exit 127: ${lastErr || 'command not found'})`
            : r.exit_code === 126
              ? `command not executable (exit 126: ${lastErr || 'permission denied'})`
              : null;
      const usage = parseAgentOutput(r.stdout, opts.format);
      const tail = `${r.stdout}${r.stderr ? `\n[stderr]\n${r.stderr}` : ''}`;
      return {
        exit_code: r.exit_code,
        signal: r.signal,
        timed_out: r.timed_out,
        stragglers_killed: r.stragglers_killed,
        cost_usd: usage.cost_usd,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        usage_parsed_from: usage.parsed_from,
        error: r.spawn_error,
        output_tail: tail.slice(-TAIL_CHARS),
        unavailable: r.spawn_error ?? notFound,
        memory_exceeded: r.tracking?.memory_exceeded_bytes != null,
        tracking: r.tracking?.method ?? null,
        peak_rss_bytes: r.tracking?.peak_rss_bytes ?? null,
      };
    },
    describe: () => ({
      kind: 'cmd',
      template: opts.template,
      ...(resolved.path !== null ? { command_path: resolved.path } : {}),
      output_format: opts.format,
      ...(opts.preset ? { preset: opts.preset } : {}),
    }),
  };
}
