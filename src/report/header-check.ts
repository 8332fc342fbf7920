import { JoulebenchError } from '../core/errors.js';
import type { ResultsHeader } from '../core/types.js';
import { checkLoadHeader } from '../load/options.js';
import { isMaxUnits } from '../stats/bootstrap.js';
import { localPriceProblem } from '../core/usd-parts.js';

/** Checks the header fields a report is built from: a bad one is one line naming file and key (E_RESULTS). */
export function checkReportHeader(h: ResultsHeader, path: string): void {
  const bad = (key: string, want: string): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: line 1: header key ${key} must be ${want}`);
  };
  if (h.concurrency !== undefined && !(Number.isInteger(h.concurrency) && h.concurrency >= 1)) bad('concurrency', 'a whole number >= 1');
  if (h.bootstrap !== undefined && !(Number.isInteger(h.bootstrap) && h.bootstrap >= 0)) bad('bootstrap', 'a whole number >= 0');
  if (h.bootstrap_max_units !== undefined && !isMaxUnits(h.bootstrap_max_units)) bad('bootstrap_max_units', 'a whole number >= 0 or "inf"');
  if (h.shared !== undefined && typeof h.shared !== 'boolean') bad('shared', 'true or false');
  if (h.cluster !== undefined && h.cluster !== 'question' && h.cluster !== 'subject') bad('cluster', '"question" or "subject"');
  if (h.prompts !== undefined && h.prompts !== 'text' && h.prompts !== 'index' && h.prompts !== 'none') bad('prompts', '"text", "index" or "none"');
  const prices = h.prices !== undefined ? localPriceProblem(h.prices) : null;
  if (prices !== null) bad('prices', `{electricity_usd_per_kwh, hardware_usd_per_hour} numbers >= 0 (it ${prices})`);
  const load = (h as { load?: unknown }).load;
  if (load !== undefined) checkLoadHeader(load, bad);
}
