import type { LoadedRun, ReportInput } from '../inputs.js';
import { readEchartsSource } from './assets.js';
import { buildHtmlModel } from './model.js';
import { renderHtmlPage } from './page.js';
import type { SweepComparison } from '../../sweep/comparison.js';

export { buildHtmlModel, type HtmlCase, type HtmlModel } from './model.js';
export { renderHtmlPage } from './page.js';

/** One self-contained HTML file (ECharts inlined, no network) for suite runs, code results and infer run files. */
/** `echarts`: where a server serves the ECharts bundle; absent, the page inlines it (a file that reads offline). */
export function buildHtmlReport(runs: readonly (LoadedRun | ReportInput)[], generated: Date = new Date(), sweeps: readonly SweepComparison[] = [], echarts?: { src: string }): string {
  const model = buildHtmlModel(runs, generated.toISOString());
  if (sweeps.length > 0) model.sweeps = [...sweeps];
  return renderHtmlPage(model, echarts ?? readEchartsSource());
}
