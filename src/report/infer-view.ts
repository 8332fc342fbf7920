import type { InferRunFile } from '../infer/protocol.js';
import { summariseFile } from '../infer/summary-file.js';
import { SPREAD_OVER_MEDIAN } from '../infer/stats.js';
import { inferArmIds } from './arms.js';

/** One infer arm (model × threads) as the HTML and Markdown reports show it. Every figure is recomputed from the runs. */
export type InferArmView = ReturnType<typeof inferArmViews>[number];

/** The legend lines printed under the infer table. */
export const INFER_LEGEND = [
  `decode tok/s: median of scored runs (warmup discarded) · spread: ${SPREAD_OVER_MEDIAN} of scored decode tok/s`,
  'cold prefill tok/s: cold runs only (a warm figure is a cached-prefix artifact, never shown as prefill)',
  'J / decoded token: gross whole-request energy ÷ eval_count, median of scored runs; n/a when nothing measured energy',
];

/** The arms of an infer run file, in file order. Contaminated arms keep their name and no figure. */
export function inferArmViews(label: string, file: InferRunFile) {
  const s = summariseFile(file.arms, file.receipts.machine_peak.configured, file.receipts.machine_peak.cpu_default, file.prices, file.pue);
  const ids = inferArmIds(label, s.arms.map((a) => a.id));
  return s.arms.map((row, i) => {
    const arm = file.arms.find((a) => a.id === row.id)!;
    const st = row.stats;
    const receipt =
      arm.receipts.cpu_only_receipt === true ? 'CPU-only' : arm.receipts.cpu_only_receipt === false ? `GPU (size_vram ${arm.receipts.size_vram})` : 'size_vram n/a';
    const flags = st ? [...st.flags] : [`contaminated: ${arm.contamination ?? 'GPU snapshot changed'}; excluded from every summary`];
    if (st && st.energy.j_per_decoded_token_median === null) flags.push(`energy n/a: ${st.energy.source === 'none' ? 'no meter measured this arm' : 'no scored run has a reading'}`);
    return {
      /** `label · model@t=…`. */
      id: ids[i]!,
      file: label,
      model: row.model,
      /** `null`: the default arm. */
      num_thread: row.num_thread,
      decode_tok_s_median: st?.decode_tok_s_median.value ?? null,
      /** (max − min) ÷ median of scored decode tok/s, as a fraction. */
      decode_spread: st?.decode_spread.value ?? null,
      /** Median over cold runs; null when there were none or it was flagged implausible (see `flags`). */
      prefill_tok_s_cold: st?.prefill_tok_s_cold.value ?? null,
      /** Rule 3's four numbers, each with its label and rule. */
      first_token: st ? st.first_token : null,
      j_per_decoded_token: st?.energy.j_per_decoded_token_median ?? null,
      energy_source: st?.energy.source ?? 'none',
      receipt,
      contaminated: row.contaminated,
      flags,
      scored_runs: st?.scored_runs ?? arm.runs.length,
      cold_runs: st?.cold_runs ?? arm.cold_load.length,
    };
  });
}
