import type { LoadedRun, ReportInput } from '../inputs.js';
import { readEchartsSource } from './echarts-source.js';
import { buildHtmlModel } from './model.js';
import { renderHtmlPage } from './page.js';

export { buildHtmlModel, type HtmlCase, type HtmlModel } from './model.js';
export { renderHtmlPage } from './page.js';

/** One self-contained HTML file (ECharts inlined, no network) for suite runs, code results and infer run files. */
export function buildHtmlReport(runs: readonly (LoadedRun | ReportInput)[], generated: Date = new Date()): string {
  return renderHtmlPage(buildHtmlModel(runs, generated.toISOString()), readEchartsSource());
}
