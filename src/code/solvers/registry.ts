import { JoulebenchError } from '../../core/errors.js';
import type { AgentOutputFormat } from '../agent-output.js';
import { cascadeSolver, defaultCacheDir } from './cascade.js';
import { commandSolver } from './command.js';
import { noopSolver } from './noop.js';
import { referenceSolver } from './reference.js';
import type { Solver } from './solver.js';

/** A named agent command: `--solvers claude` is `cmd:<its template>` read with its output parser. */
export interface AgentPreset {
  template: string;
  format: AgentOutputFormat;
  summary: string;
}

/** Headless invocations of the common agent CLIs, each editing files without asking (other flags: use `cmd:`). */
export const AGENT_PRESETS = {
  claude: {
    template: 'claude -p {prompt} --output-format json --permission-mode acceptEdits',
    format: 'claude',
    summary: 'Claude Code; cost from total_cost_usd, tokens from usage',
  },
  gemini: {
    template: 'gemini -p {prompt} --output-format json --approval-mode auto_edit --skip-trust',
    format: 'gemini',
    summary: 'Gemini CLI; tokens from stats.models (it reports no cost)',
  },
  codex: {
    template: 'codex exec --json --full-auto --skip-git-repo-check {prompt}',
    format: 'codex',
    summary: 'Codex CLI; tokens from turn.completed events (it reports no cost)',
  },
  aider: {
    template: 'aider --yes-always --no-git --no-auto-commits --no-check-update --no-show-model-warnings --message {prompt}',
    format: 'aider',
    summary: 'Aider; cost and tokens from its "Tokens: … Cost: …" lines',
  },
} as const satisfies Record<string, AgentPreset>;

type AgentPresetName = keyof typeof AGENT_PRESETS;
const BUILTIN = ['reference', 'noop'] as const;

/** Every solver name that is not a `cmd:` template. */
export const SOLVER_NAMES: readonly string[] = [...BUILTIN, ...Object.keys(AGENT_PRESETS)];

function isPreset(name: string): name is AgentPresetName {
  return Object.hasOwn(AGENT_PRESETS, name);
}

/** True when a piece of a comma-separated list starts a new solver (so commas inside a template survive). */
function startsSpec(piece: string): boolean {
  const body = piece.trim().replace(/^[A-Za-z0-9._-]+=/, '').replace(/^cascade:/, '');
  return body.startsWith('cmd:') || SOLVER_NAMES.includes(body);
}

/** Splits `--solvers` into specs: a comma starts a new solver only before a solver name or `cmd:`. */
export function splitSolverList(list: string): string[] {
  const out: string[] = [];
  for (const piece of list.split(',')) {
    const last = out[out.length - 1];
    if (last !== undefined && /^([A-Za-z0-9._-]+=)?(cascade:)?cmd:/.test(last) && !startsSpec(piece)) out[out.length - 1] = `${last},${piece}`;
    else out.push(piece.trim());
  }
  return out.filter((s) => s !== '');
}

/** Where solvers keep state between runs: `cache_dir`, the `cascade:` cache folder (default `$JOULEBENCH_HOME/code-cache`). */
type SolverOptions = { cache_dir?: string };

/** Makes a solver from `[label=][cascade:]reference|noop|claude|gemini|codex|aider|cmd:<template>`. */
export function createSolver(spec: string, opts: SolverOptions = {}): Solver {
  const m = /^([A-Za-z0-9._-]+)=(.*)$/s.exec(spec);
  const label = m?.[1];
  const body = (m?.[2] ?? spec).trim();
  const id = label ?? body;
  if (body.startsWith('cascade:')) {
    const inner = body.slice('cascade:'.length).trim();
    if (inner === '' || inner.startsWith('cascade:')) throw new JoulebenchError('E_USAGE', '--solvers: "cascade:" wraps one solver, e.g. cascade:claude or cascade:cmd:./agent.sh');
    return cascadeSolver(createSolver(inner, opts), opts.cache_dir ?? defaultCacheDir(), id);
  }
  if (body === 'reference') return { ...referenceSolver(), id };
  if (body === 'noop') return { ...noopSolver(), id };
  if (isPreset(body)) {
    const p = AGENT_PRESETS[body];
    return commandSolver({ id, template: p.template, format: p.format, preset: body });
  }
  if (body.startsWith('cmd:')) {
    const template = body.slice(4).trim();
    if (template === '') throw new JoulebenchError('E_USAGE', '--solvers: "cmd:" needs a command after it, e.g. cmd:my-agent {prompt}');
    return commandSolver({ id, template, format: 'auto' });
  }
  throw new JoulebenchError('E_USAGE', `--solvers: unknown solver "${body}" (known: ${SOLVER_NAMES.join(', ')}, cmd:<template>, or cascade:<solver>)`);
}

/** Makes every solver in a list; labels must be unique. */
export function createSolvers(specs: readonly string[], opts: SolverOptions = {}): Solver[] {
  if (specs.length === 0) throw new JoulebenchError('E_USAGE', '--solvers: name at least one solver');
  const solvers = specs.map((s) => createSolver(s, opts));
  const twice = solvers.find((s, i) => solvers.findIndex((o) => o.id === s.id) !== i);
  if (twice) throw new JoulebenchError('E_USAGE', `--solvers: "${twice.id}" is listed twice (give one a label: name=cmd:…)`);
  return solvers;
}
