import { pc } from '../report/colors.js';
import { table } from '../report/format.js';
import type { InferRunFile } from './protocol.js';
import type { InferArm } from './types.js';
import { summariseFile } from './summary-file.js';
import { pct, SPREAD_OVER_MEDIAN } from './stats.js';

/** The table of arms, statistics recomputed from each file's runs (never its summary); contaminated arms named, no figures. */
export function renderInferTable(files: readonly { path: string; file: InferRunFile }[], width: number | null = null): string {
  const { head, rows: body, notes } = inferTableRows(files);
  const rows: string[][] = [head.map((h) => pc.dim(h)), ...body];
  const wide = table(rows);
  const fits = width === null || Math.max(...wide.split('\n').map((l) => l.length)) <= width;
  return [fits ? wide : foldedArms(head, body), '', ...LEGEND.map((l) => pc.dim(l)), ...(notes.length ? ['', ...notes] : [])].join('\n') + '\n';
}

/** The wide table's figures folded for a narrow terminal: one block per arm, a figure a line. */
function foldedArms(head: readonly string[], body: readonly string[][]): string {
  const label = Math.max(...head.slice(2).map((h) => h.length));
  return body
    .map((row) => [`  ${pc.bold(`${row[0]} · ${row[1]}`)}`, ...head.slice(2).map((h, i) => `    ${pc.dim(h.padEnd(label))}  ${row[i + 2] ?? ''}`)].join('\n'))
    .join('\n\n');
}

/** The table's header and rows (no colour) and its notes: the figures every rendering of arms shares. */
export function inferTableRows(files: readonly { path: string; file: InferRunFile }[]): { head: string[]; rows: string[][]; notes: string[] } {
  const head = [
    'file',
    'arm',
    'decode tok/s',
    'spread',
    'prefill tok/s (cold)',
    'cached-prefix ms',
    'fresh, loaded ms',
    'fully cold ms',
    'loaded-rule ×',
    'cold-rule ×',
    'best/default',
    'J/token (gross)',
    'tok/J (gross)',
    'receipt',
  ];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const { path, file } of files) {
    const s = summariseFile(file.arms, file.receipts.machine_peak.configured, file.receipts.machine_peak.cpu_default);
    const sweepBest = new Map<string, string>();
    for (const sw of s.thread_sweeps) {
      if (sw.best_arm) sweepBest.set(sw.best_arm, `${fx(sw.best_over_default.value)}×${sw.tie ? ' (tie→stability)' : ''}`);
      if (sw.default_arm && sw.default_arm !== sw.best_arm) sweepBest.set(sw.default_arm, 'default');
      if (sw.tie) notes.push(`${path}: ${sw.model}: ${sw.tie.note}`);
      if (sw.best_over_default.value !== null) notes.push(`${path}: ${sw.model}: best/default = ${sw.best_over_default.numerator} ÷ ${sw.best_over_default.denominator}`);
    }
    // Power-limit arms of one model × thread count, compared in one line each.
    const byLimit = new Map<string, string[]>();
    for (const row of s.arms) {
      const arm = file.arms.find((a) => a.id === row.id)!;
      if (arm.gpu_power_limit_w !== undefined && row.stats) {
        const key = row.id.replace(/@pl=[^@]*$/, '');
        byLimit.set(key, [...(byLimit.get(key) ?? []), `${arm.gpu_power_limit_w} W: ${fx(row.stats.decode_tok_s_median.value)} tok/s, ${sci(row.stats.energy.j_per_decoded_token_median)} J/token`]);
      }
      const receipt = [
        row.contaminated ? 'CONTAMINATED' : null,
        arm.receipts.cpu_only_receipt === true ? 'CPU-only' : arm.receipts.cpu_only_receipt === false ? `GPU (size_vram ${arm.receipts.size_vram})` : 'size_vram n/a',
        arm.receipts.gpu_snapshot === 'unavailable' ? 'no GPU snapshot' : arm.receipts.gpu_snapshot === 'identical' ? 'snapshot identical' : null,
      ]
        .filter(Boolean)
        .join(', ');
      const st = row.stats;
      if (!st) {
        rows.push([path, armLabel(arm), ...Array<string>(10).fill('—'), 'excluded', receipt]);
        notes.push(`${path}: ${row.id}: ${arm.contamination ?? 'contaminated'}; excluded from every summary`);
        continue;
      }
      for (const f of st.flags) notes.push(`${path}: ${row.id}: ${f}`);
      rows.push([
        path,
        armLabel(arm),
        fx(st.decode_tok_s_median.value),
        pct(st.decode_spread.value),
        st.plausibility.cold_prefill.plausible === false ? 'FLAGGED' : fx(st.prefill_tok_s_cold.value),
        fx(st.first_token.cached_prefix_ms.value),
        fx(st.first_token.fresh_prompt_model_loaded_ms.value),
        fx(st.first_token.fully_cold_ms.value),
        fx(st.first_token_ratios.model_loaded_rule.value),
        fx(st.first_token_ratios.cold_start_rule.value),
        sweepBest.get(row.id) ?? '',
        sci(st.energy.j_per_decoded_token_median),
        fx(st.energy.decoded_tokens_per_j_median),
        receipt,
      ]);
    }
    for (const [key, parts] of byLimit) notes.push(`${path}: ${key}: by GPU power limit (decode tok/s median, J/token gross median): ${parts.join('; ')}`);
  }
  return { head, rows, notes };
}

/** An arm's name in the table; the default arm says whose default it is (`model@t=default (llama.cpp's default: 2 threads)`). */
function armLabel(arm: Pick<InferArm, 'id' | 'num_thread' | 'threads'>): string {
  if (arm.num_thread !== null) return arm.id;
  return arm.threads !== undefined ? `${arm.id} (llama.cpp's default: ${arm.threads} thread${arm.threads === 1 ? '' : 's'})` : `${arm.id} (Ollama's default)`;
}

function fx(v: number | null): string {
  if (v === null) return 'n/a';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
}
function sci(v: number | null): string {
  return v === null ? 'n/a' : v.toPrecision(3);
}

const LEGEND = [
  `decode tok/s: median of scored runs (warmup discarded) · spread: ${SPREAD_OVER_MEDIAN} of scored decode tok/s`,
  'prefill tok/s (cold): cold runs only; the warm figure is a cached-prefix artifact and is not shown as prefill',
  'cached-prefix ms: identical prompt re-sent (not a TTFT) · fresh, loaded ms: cold ttft − load_duration · fully cold ms: load + prefill',
  'loaded-rule ×: fresh, loaded ÷ cached-prefix · cold-rule ×: fully cold ÷ cached-prefix (medians of cold runs ÷ median of scored runs)',
  'best/default: decode median at the best thread count ÷ at the default arm (configuration-inclusive; per model; n/a without a default arm)',
  'J/token (gross), tok/J (gross): whole-request energy ÷ eval_count, median of scored runs; gross = idle draw not subtracted; n/a when nothing measured energy',
];