/** Cost and tokens from what an agent CLI prints, as its agent documents them; not found is `null`, never 0. Pure. */
import { attempt } from './attempt.js';

/** Which agent's output format to read; `auto` tries each JSON shape in turn. */
export type AgentOutputFormat = 'claude' | 'gemini' | 'codex' | 'aider' | 'auto';

/** What an agent said it spent. */
export interface AgentUsage {
  cost_usd: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Which rule matched (`claude:total_cost_usd`, `codex:turn.completed`, …), or `null`. */
  parsed_from: string | null;
}

const NOTHING: AgentUsage = { cost_usd: null, prompt_tokens: null, completion_tokens: null, parsed_from: null };

/** Parses an agent's stdout in the given format. */
export function parseAgentOutput(stdout: string, format: AgentOutputFormat = 'auto'): AgentUsage {
  if (format === 'aider') return parseAider(stdout);
  const objects = jsonObjects(stdout);
  const agents = { claude: fromClaude, codex: fromCodex, gemini: fromGemini };
  // `auto`: each agent's JSON shape in turn, then any cost/usage object, then aider's lines.
  const readers = format === 'auto' ? [...Object.values(agents), fromGeneric] : [agents[format]];
  for (const read of readers) {
    const u = read(objects);
    if (u.parsed_from !== null) return u;
  }
  return format === 'auto' ? parseAider(stdout) : NOTHING;
}

/** The whole output as one JSON value, else every line that parses as a JSON object. */
export function jsonObjects(text: string): Record<string, unknown>[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const whole = tryParse(trimmed);
  if (whole !== undefined) return Array.isArray(whole) ? whole.filter(isObject) : isObject(whole) ? [whole] : [];
  const out: Record<string, unknown>[] = [];
  for (const line of trimmed.split('\n')) {
    const l = line.trim();
    if (!l.startsWith('{')) continue;
    const v = tryParse(l);
    if (isObject(v)) out.push(v);
  }
  return out;
}

/** Claude Code `--output-format json`: a `result` object with `total_cost_usd` and `usage`. */
function fromClaude(objects: Record<string, unknown>[]): AgentUsage {
  for (const o of [...objects].reverse()) {
    const cost = num(o.total_cost_usd) ?? num(o.cost_usd);
    if (cost === null && o.type !== 'result') continue;
    const usage = isObject(o.usage) ? o.usage : {};
    // OpenAI-style names (`prompt_tokens`) with no `type: result`: not Claude Code's; the generic rule reads it.
    if (o.type !== 'result' && openaiStyle(usage)) continue;
    const input = sumOrNull([num(usage.input_tokens), num(usage.cache_creation_input_tokens), num(usage.cache_read_input_tokens)]);
    return {
      cost_usd: cost,
      prompt_tokens: input,
      completion_tokens: num(usage.output_tokens),
      parsed_from: cost !== null ? 'claude:total_cost_usd' : 'claude:result',
    };
  }
  return NOTHING;
}

/** Codex `exec --json`: JSONL events; each `turn.completed` carries that turn's `usage`. No cost. */
function fromCodex(objects: Record<string, unknown>[]): AgentUsage {
  const turns = objects.filter((o) => o.type === 'turn.completed' && isObject(o.usage));
  if (turns.length === 0) return NOTHING;
  const usages = turns.map((t) => t.usage as Record<string, unknown>);
  return {
    cost_usd: null,
    prompt_tokens: sumOrNull(usages.map((u) => num(u.input_tokens))),
    completion_tokens: sumOrNull(usages.map((u) => num(u.output_tokens))),
    parsed_from: 'codex:turn.completed',
  };
}

/** Gemini CLI `--output-format json`: `stats.models.<name>.tokens` (`prompt`, `candidates`, `thoughts`). No cost. */
function fromGemini(objects: Record<string, unknown>[]): AgentUsage {
  for (const o of [...objects].reverse()) {
    const stats = isObject(o.stats) ? o.stats : null;
    const models = stats && isObject(stats.models) ? stats.models : null;
    if (!models) continue;
    const tokens = Object.values(models)
      .map((m) => (isObject(m) && isObject(m.tokens) ? m.tokens : null))
      .filter((t): t is Record<string, unknown> => t !== null);
    return {
      cost_usd: null,
      prompt_tokens: sumOrNull(tokens.map((t) => num(t.prompt))),
      // Thinking tokens are billed as output.
      completion_tokens: sumOrNull(tokens.flatMap((t) => [num(t.candidates), num(t.thoughts)])),
      parsed_from: 'gemini:stats.models',
    };
  }
  return NOTHING;
}

function openaiStyle(usage: Record<string, unknown>): boolean {
  return num(usage.prompt_tokens) !== null || num(usage.completion_tokens) !== null;
}

/**
 * Any JSON with `cost_usd` / an OpenAI-style `usage` (`prompt_tokens`, `completion_tokens`, where reasoning
 * tokens are already counted; `input_tokens`/`output_tokens` too), the last such object.
 */
function fromGeneric(objects: Record<string, unknown>[]): AgentUsage {
  for (const o of [...objects].reverse()) {
    const usage = isObject(o.usage) ? o.usage : {};
    const cost = num(o.cost_usd);
    const p = num(usage.prompt_tokens) ?? num(usage.input_tokens);
    const c = num(usage.completion_tokens) ?? num(usage.output_tokens);
    if (cost === null && p === null && c === null) continue;
    return { cost_usd: cost, prompt_tokens: p, completion_tokens: c, parsed_from: 'generic:cost_usd/usage' };
  }
  return NOTHING;
}

/**
 * Aider prints, per message, `Tokens: 2.3k sent, 114 received. Cost: $0.0012 message, $0.0050 session.`
 * The last session cost is the run's; tokens are summed over messages (aider rounds them to 0.1k).
 */
function parseAider(text: string): AgentUsage {
  const re = /Tokens:\s*([\d.,]+)(k?)\s*sent,\s*([\d.,]+)(k?)\s*received\.(?:\s*Cost:\s*\$([\d.]+)\s*message,\s*\$([\d.]+)\s*session)?/g;
  let sent = 0;
  let received = 0;
  let session: number | null = null;
  let seen = false;
  for (const m of text.matchAll(re)) {
    seen = true;
    sent += scaled(m[1], m[2]);
    received += scaled(m[3], m[4]);
    if (m[6] !== undefined) session = Number(m[6]);
  }
  if (!seen) return NOTHING;
  return { cost_usd: session, prompt_tokens: Math.round(sent), completion_tokens: Math.round(received), parsed_from: 'aider:tokens-line' };
}

function scaled(n: string | undefined, k: string | undefined): number {
  const v = Number((n ?? '0').replace(/,/g, ''));
  return k === 'k' ? v * 1000 : v;
}

function tryParse(s: string): unknown {
  return attempt(() => JSON.parse(s) as unknown, undefined);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function sumOrNull(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}
