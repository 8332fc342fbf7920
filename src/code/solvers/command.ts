import { parseAgentOutput, type AgentOutputFormat } from '../agent-output.js';
import { execTree } from '../process.js';
import type { Solver } from './solver.js';

/** A solver that runs an agent CLI in the workdir. */
export interface CommandSolverOptions {
  id: string;
  /** Shell command; `{prompt}`, `{workdir}` and `{task}` are replaced by shell-quoted values. */
  template: string;
  /** How to read cost and tokens from its stdout. */
  format: AgentOutputFormat;
  /** The preset it came from, if any. */
  preset?: string;
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

/** `cmd:<template>`: any agent CLI, run under the sandbox with the task's prompt. */
export function commandSolver(opts: CommandSolverOptions): Solver {
  return {
    id: opts.id,
    kind: 'cmd',
    async solve(ctx) {
      const line = expandTemplate(opts.template, { prompt: ctx.task.prompt, workdir: ctx.workdir, task: ctx.task.name });
      const env = {
        ...ctx.env,
        JOULEBENCH_PROMPT: ctx.task.prompt,
        JOULEBENCH_TASK: ctx.task.name,
        JOULEBENCH_WORKDIR: ctx.workdir,
      };
      const r = await execTree(ctx.sandbox.wrap(['sh', '-c', line], ctx.workdir), {
        cwd: ctx.workdir,
        env,
        timeout_ms: ctx.timeout_ms,
        kill_grace_ms: ctx.kill_grace_ms,
        sweep_dir: ctx.workdir,
      });
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
        output_tail: tail.length > TAIL_CHARS ? tail.slice(-TAIL_CHARS) : tail,
      };
    },
    describe: () => ({ kind: 'cmd', template: opts.template, output_format: opts.format, ...(opts.preset ? { preset: opts.preset } : {}) }),
  };
}
