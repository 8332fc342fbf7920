import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root: the nearest folder above this module whose package.json is joulebench's. Found
 * by walking up, so it is the same from src/ (tsx) and from dist/ (the built CLI).
 */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'joulebench') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`joulebench package root not found above ${from}`);
    dir = up;
  }
}

/** Where the bundled coding suites live (plain data, shipped as source: see package.json "files"). */
export function bundledCodeSuitesDir(): string {
  return join(packageRoot(), 'src', 'code', 'suites');
}
