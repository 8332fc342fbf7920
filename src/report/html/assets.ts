import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JoulebenchError } from '../../core/errors.js';

/** A file shipped beside the code (package.json "files"), from both src/report/html (tsx) and dist/report/html (built). */
function readShipped(rel: string): string {
  const path = fileURLToPath(new URL(`../../../${rel}`, import.meta.url));
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new JoulebenchError('E_CONFIG', `html: cannot read ${path} (${(e as Error).message.split('\n')[0]}); reinstall joulebench`);
  }
}

/** The vendored ECharts browser bundle, read at run time so the HTML report can inline it (no network). */
export function readEchartsSource(): string {
  return readShipped('vendor/echarts/echarts.min.js');
}

/** The page's browser code and style, plain files under src/report/html/assets (no build step). */
export function readPageAsset(name: 'client.js' | 'rate.js' | 'mt-bench.js' | 'power.js' | 'page.css'): string {
  return readShipped(`src/report/html/assets/${name}`);
}
