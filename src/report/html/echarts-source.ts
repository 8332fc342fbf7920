import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { JoulebenchError } from '../../core/errors.js';

/**
 * The ECharts browser bundle, read from the installed package at run time so the HTML report can inline
 * it (a report must open with no network). Resolved through the package's own `exports` map.
 */
export function readEchartsSource(): string {
  const require = createRequire(import.meta.url);
  let path: string;
  try {
    path = require.resolve('echarts/dist/echarts.min');
  } catch (e) {
    throw new JoulebenchError('E_CONFIG', `echarts: cannot find dist/echarts.min.js (${(e as Error).message.split('\n')[0]}); reinstall joulebench`);
  }
  return readFileSync(path, 'utf8');
}
