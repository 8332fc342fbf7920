import type { LoadBlock } from './block.js';
import type { RatePoint } from './curve.js';
import { LATENCY_FAMILIES } from './metrics.js';
import type { LoadRepeatsComparison, LoadRepeatsDoc, RepeatInterval } from './repeats.js';
import type { RateSearch } from './search.js';

const fmt = (v: unknown, digits = 2): string => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : 'n/a');

/** The rows as aligned lines, two spaces between columns: the `left` columns padded on the right, the others on the left. */
function aligned(rows: string[][], left: readonly number[] = []): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd());
}

/** The serving section of the terminal output for a load run (plain text; the caller colours nothing). */
export function renderLoadTable(b: LoadBlock): string {
  const s = b.serving;
  const pcts = Object.keys(s)
    .map((k) => /^p([\d.]+)_ttft_ms$/.exec(k)?.[1])
    .filter((p): p is string => p !== undefined);
  const lines: string[] = [];
  lines.push(
    `load: ${b.num_requests} ${b.conversations ? 'conversations' : 'requests'} at ${b.request_rate === 'inf' ? 'inf' : `${b.request_rate}/s`} (burstiness ${b.burstiness}, seed ${b.seed}, max concurrency ${b.max_concurrency ?? 'unbounded'})`,
  );
  const c = b.conversations;
  if (c) lines.push(`  ${c.count} conversations started, ${fmt(c.turns_per_conversation_mean)} turns each on average, ${c.think_time_ms} ms think time between turns`);
  lines.push(
    `  completed ${s.completed}, failed ${s.failed}, duration ${fmt(s.duration)} s; throughput ${fmt(s.request_throughput)} req/s, ${fmt(s.output_throughput)} output tok/s (tokens from ${s.output_tokens_from})`,
  );
  const head = ['', 'mean', 'median', 'std', ...pcts.map((p) => `p${p}`)];
  const rows = LATENCY_FAMILIES.map((f) => [
    `${f.toUpperCase()} ms`,
    fmt(s[`mean_${f}_ms`]),
    fmt(s[`median_${f}_ms`]),
    fmt(s[`std_${f}_ms`]),
    ...pcts.map((p) => fmt(s[`p${p}_${f}_ms`])),
  ]);
  for (const line of aligned([head, ...rows], [0])) lines.push('  ' + line);
  if (s.slo) {
    lines.push(
      `  goodput (${Object.entries(s.slo).map(([k, v]) => `${k}≤${v}`).join(', ')}): ${fmt(s.request_goodput)} req/s; correct goodput ${fmt(s.correct_goodput)} req/s (${s.good_correct_requests}/${s.good_requests} good requests correct); output goodput ${fmt(s.output_goodput)} tok/s, ${fmt(b.good_output_tokens_per_joule, 4)} good output tok/J`,
    );
  }
  const d = b.dataset;
  if (d) {
    const st = (x: typeof d.input, src: string | null): string => (x ? `mean ${fmt(x.mean, 1)}, p50 ${fmt(x.p50, 1)}, p99 ${fmt(x.p99, 1)} [${src}]` : 'unknown (no usage)');
    lines.push(
      d.asked.kind === 'random'
        ? `  dataset random (prompts sized ${d.asked.tokenizer !== undefined ? `by the tokenizer of ${d.asked.tokenizer}` : 'in words, one word ≈ one token'}): input asked ${d.asked.prefix_len > 0 ? `${d.asked.prefix_len} prefix + ` : ''}${d.asked.input_len}${d.asked.range_ratio > 0 ? ` ± ${d.asked.range_ratio * 100} %` : ''}, realised ${st(d.input, d.input_len_source)}${d.input_usage ? `, ${st(d.input_usage, 'usage')}` : ''}; output asked ${d.asked.output_len}, realised ${st(d.output, d.output_len_source)}`
        : `  dataset sharegpt ${d.asked.path} (output asked = each reply's ${d.asked.tokenizer !== undefined ? 'tokens' : 'words'}): input realised ${st(d.input, d.input_len_source)}; output realised ${st(d.output, d.output_len_source)}`,
    );
  }
  const e = b.energy;
  lines.push(
    `  energy (${e.steady_state ? 'steady state' : 'whole run'}, ${e.source}): ${fmt(e.joules, 3)} J over ${fmt(e.energy_window_s, 2)} s, ${fmt(e.avg_power_w)} W, ${fmt(e.joules_per_output_token, 6)} J/output token` +
      (e.reason ? ` — ${e.reason}` : ''),
  );
  const g = b.scheduling;
  lines.push(
    `  scheduling lag mean ${fmt(g.mean_lag_ms, 3)} ms, p50 ${fmt(g.p50_lag_ms, 3)}, p90 ${fmt(g.p90_lag_ms, 3)}, p99 ${fmt(g.p99_lag_ms, 3)} ms` +
      (g.client_bottleneck ? ' — the client was the bottleneck' : ''),
  );
  lines.push(
    `  slot queue mean ${fmt(g.mean_queue_ms, 3)} ms, p50 ${fmt(g.p50_queue_ms, 3)}, p90 ${fmt(g.p90_queue_ms, 3)}, p99 ${fmt(g.p99_queue_ms, 3)} ms` +
      (g.queued_requests > 0 ? ` — ${g.queued_requests} request${g.queued_requests === 1 ? '' : 's'} waited for a slot: the server (or the cap) limited the rate` : ''),
  );
  return lines.join('\n') + '\n';
}

/** A rate sweep's curve as a table. */
export function renderCurveTable<P extends RatePoint>(points: readonly P[], first: { head: string; cell: (p: P) => string } = { head: 'rate/s', cell: (p) => String(p.request_rate) }): string {
  const head = [first.head, 'acc %', 'req/s', 'out tok/s', 'p99 TTFT ms', 'p99 TPOT ms', 'goodput', 'correct goodput', 'J/out tok'];
  const rows = points.map((p) => [
    first.cell(p),
    fmt(p.accuracy_pct, 1),
    fmt(p.request_throughput),
    fmt(p.output_throughput),
    fmt(p.p99_ttft_ms),
    fmt(p.p99_tpot_ms),
    fmt(p.request_goodput),
    fmt(p.correct_goodput),
    fmt(p.joules_per_output_token, 6) + (p.client_bottleneck ? ' (client-bound)' : ''),
  ]);
  return aligned([head, ...rows]).join('\n') + '\n';
}

/** A repeated load run's figures over its runs: mean, Student-t interval, CV (figures no run has are left out). */
export function renderRepeatsTable(doc: LoadRepeatsDoc): string {
  const head = ['figure', 'mean', `${Math.round(doc.level * 100)} % interval (t)`, 'CV %', 'runs'];
  const rows = Object.entries(doc.figures)
    .filter(([, f]) => f.values.some((v) => v !== null))
    .map(([name, f]) => [name, sigFmt(f.mean), intervalText(f.ci), f.cv === null ? 'n/a' : (f.cv * 100).toFixed(1), f.values.map((v) => sigFmt(v)).join(' ')]);
  const rate = doc.request_rate === 'inf' ? 'inf' : `${doc.request_rate}/s`;
  const lines = [`${doc.runs} load runs at ${rate} (same schedule, ${doc.cooldown_s} s cooldown between runs)`, ...aligned([head, ...rows], [0, 4])];
  for (const n of doc.notes) lines.push(`note: ${n}`);
  return lines.join('\n') + '\n';
}

/** The comparison of two repeated load runs, paired run by run. */
export function renderRepeatsComparisonTable(c: LoadRepeatsComparison): string {
  const head = ['figure', 'baseline mean', 'candidate mean', 'mean difference', `${Math.round(c.level * 100)} % interval (paired t)`];
  const mean = (xs: (number | null)[]) => (xs.some((x) => x === null) || xs.length === 0 ? null : (xs as number[]).reduce((s, v) => s + v, 0) / xs.length);
  const rows = Object.entries(c.figures)
    .filter(([, f]) => f.baseline.some((v) => v !== null) || f.candidate.some((v) => v !== null))
    .map(([name, f]) => [name, sigFmt(mean(f.baseline)), sigFmt(mean(f.candidate)), sigFmt(f.mean_difference), intervalText(f.ci)]);
  const lines = [`${c.paired_runs} paired runs: ${c.pairing}`, ...aligned([head, ...rows], [0])];
  for (const n of c.notes) lines.push(`note: ${n}`);
  return lines.join('\n') + '\n';
}

function intervalText(ci: RepeatInterval): string {
  if ('reason' in ci) return `n/a (${ci.reason})`;
  if (ci.method === 'degenerate') return `degenerate [${sigFmt(ci.low)}, ${sigFmt(ci.high)}]`;
  return `[${sigFmt(ci.low)}, ${sigFmt(ci.high)}]`;
}

/** Five significant digits (figures over runs range from J/token to tokens/s). */
function sigFmt(v: unknown): string {
  return typeof v === 'number' ? String(Number(v.toPrecision(5))) : 'n/a';
}

/** A rate search's steps, its result and its stopping rule. */
export function renderSearchTable(s: RateSearch): string {
  const head = ['step', 'rate/s', 'goodput share', 'pass', 'goodput req/s', 'p99 TTFT ms', 'p99 TPOT ms', 'J/out tok'];
  const rows = s.steps.map((p) => [String(p.step), String(p.request_rate), fmt(p.goodput_share, 3), p.passed ? 'yes' : 'no', fmt(p.request_goodput), fmt(p.p99_ttft_ms), fmt(p.p99_tpot_ms), fmt(p.joules_per_output_token, 6)]);
  const lines = [`rate search (SLO ${Object.entries(s.slo).map(([k, v]) => `${k}≤${v}`).join(', ')}, goodput share ≥ ${s.goodput_target})`, ...aligned([head, ...rows])];
  lines.push(`max_request_rate ${s.max_request_rate === null ? 'none' : `${s.max_request_rate}/s`} (stopped: ${s.stopped})`, `rule: ${s.stopping_rule}`);
  return lines.join('\n') + '\n';
}
