import type { LoadedRun, ReportInput } from '../inputs.js';
import { readEchartsSource } from './assets.js';
import { buildHtmlModel } from './model.js';
import { renderHtmlPage } from './page.js';
import type { SweepComparison } from '../../sweep/comparison.js';

export { buildHtmlModel, type HtmlCase, type HtmlModel } from './model.js';
export { renderHtmlPage } from './page.js';

/** One self-contained HTML file (ECharts inlined, no network) for suite runs, code results and infer run files. */
export function buildHtmlReport(runs: readonly (LoadedRun | ReportInput)[], generated: Date = new Date(), sweeps: readonly SweepComparison[] = []): string {
  const model = buildHtmlModel(runs, generated.toISOString());
  if (sweeps.length > 0) model.sweeps = [...sweeps];
  return renderHtmlPage(model, readEchartsSource());
}
