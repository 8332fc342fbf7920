import type { LoadBlock } from './block.js';
import type { RatePoint } from './curve.js';
import { LATENCY_FAMILIES } from './metrics.js';

const fmt = (v: unknown, digits = 2): string => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : 'n/a');

/** The serving section of the terminal output for a load run (plain text; the caller colours nothing). */
export function renderLoadTable(b: LoadBlock): string {
  const s = b.serving;
  const pcts = Object.keys(s)
    .map((k) => /^p([\d.]+)_ttft_ms$/.exec(k)?.[1])
    .filter((p): p is string => p !== undefined);
  const lines: string[] = [];
  lines.push(
    `load: ${b.num_requests} requests at ${b.request_rate === 'inf' ? 'inf' : `${b.request_rate}/s`} (burstiness ${b.burstiness}, seed ${b.seed}, max concurrency ${b.max_concurrency ?? 'unbounded'})`,
  );
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
  const widths = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) lines.push('  ' + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  if (s.slo) {
    lines.push(
      `  goodput (${Object.entries(s.slo).map(([k, v]) => `${k}≤${v}`).join(', ')}): ${fmt(s.request_goodput)} req/s; correct goodput ${fmt(s.correct_goodput)} req/s (${s.good_correct_requests}/${s.good_requests} good requests correct)`,
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
export function renderCurveTable(points: readonly RatePoint[]): string {
  const head = ['rate/s', 'acc %', 'req/s', 'out tok/s', 'p99 TTFT ms', 'p99 TPOT ms', 'goodput', 'correct goodput', 'J/out tok'];
  const rows = points.map((p) => [
    String(p.request_rate),
    fmt(p.accuracy_pct, 1),
    fmt(p.request_throughput),
    fmt(p.output_throughput),
    fmt(p.p99_ttft_ms),
    fmt(p.p99_tpot_ms),
    fmt(p.request_goodput),
    fmt(p.correct_goodput),
    fmt(p.joules_per_output_token, 6) + (p.client_bottleneck ? ' (client-bound)' : ''),
  ]);
  const widths = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n') + '\n';
}
