import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JoulebenchError } from '../../core/errors.js';

/** vendor/echarts/echarts.min.js, from both src/report/html (tsx) and dist/report/html (built). */
const ECHARTS_PATH = fileURLToPath(new URL('../../../vendor/echarts/echarts.min.js', import.meta.url));

/** The vendored ECharts browser bundle, read at run time so the HTML report can inline it (no network). */
export function readEchartsSource(): string {
  try {
    return readFileSync(ECHARTS_PATH, 'utf8');
  } catch (e) {
    throw new JoulebenchError('E_CONFIG', `echarts: cannot read ${ECHARTS_PATH} (${(e as Error).message.split('\n')[0]}); reinstall joulebench`);
  }
}
