import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: two folders above this module, from src/ (tsx) and from dist/ (the built CLI) alike. */
export function packageRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** Where the bundled coding suites live (plain data, shipped as source: see package.json "files"). */
export function bundledCodeSuitesDir(): string {
  return join(packageRoot(), 'src', 'code', 'suites');
}
