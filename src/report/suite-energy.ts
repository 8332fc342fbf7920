import type { BenchReport } from '../core/aggregate.js';
import { fmtJoules } from './format.js';

/** The whole-suite energy of a report as text parts (`gross 12.30 J [rapl]`, `net 9.10 J`…); older reports say n/a, never 0. */
interface SuiteEnergyText {
  gross: string;
  net: string;
  net_per_correct: string;
  idle: string;
  /** `energy unknown for N cases`, or null when every case has energy. */
  unknown: string | null;
}

/** Whole-suite gross/net energy with its source, idle watts, and the unknown-energy count. */
export function suiteEnergyText(r: Partial<BenchReport>): SuiteEnergyText {
  const has = r.gross_source !== undefined;
  const gross = has ? `gross ${fmtJoules(r.gross_joules ?? null)} [${r.gross_source}]` : 'gross n/a (report predates whole-suite energy)';
  let net: string;
  if (!has) net = 'net n/a';
  else if (r.net_joules !== null && r.net_joules !== undefined) net = `net ${fmtJoules(r.net_joules)}`;
  else net = `net n/a (${netMissingWhy(r)})`;
  const npc = r.net_joules_per_correct;
  const net_per_correct =
    npc !== null && npc !== undefined ? `net ${fmtJoules(npc)} / correct` : `net / correct n/a${(r.correct_count ?? 0) === 0 && has ? ' (nothing correct)' : ''}`;
  const idle = r.idle_watts !== null && r.idle_watts !== undefined ? `idle ${r.idle_watts.toFixed(2)} W` : 'idle n/a';
  const n = r.energy_unknown_count ?? 0;
  return { gross, net, net_per_correct, idle, unknown: n > 0 ? `energy unknown for ${n} case${n === 1 ? '' : 's'}` : null };
}

/** Why net energy is missing; net below idle is not "idle unknown": the run's energy is within idle noise. */
function netMissingWhy(r: Partial<BenchReport>): string {
  if (r.gross_joules === null || r.gross_joules === undefined) return 'gross unknown';
  if (r.net_below_idle) return `net below idle: gross < idle ${r.idle_watts ?? '?'} W × ${r.suite_window_ms ?? '?'} ms, within idle noise`;
  if (r.idle_watts === null || r.idle_watts === undefined) return r.idle === 'skipped' ? 'idle skipped (--no-idle)' : 'idle power unknown';
  return 'net unknown';
}
