import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';
import { relativeSnapshot } from './watch.js';

/**
 * Changes a solver made to how the tests run rather than to the code: package.json's runner keys,
 * runner configuration files, `.npmrc` (its `node-options` reach every npm script), node_modules/.
 * Grading runs the solver's tree, so any of them could make failing tests pass: not resolved.
 */

/** package.json keys that configure a test runner. */
const PACKAGE_KEYS = ['scripts.test', 'mocha', 'jest', 'ava', 'c8', 'nyc'] as const;
/**
 * Files (any folder) that configure a test runner or npm itself; for Python, pytest's `conftest.py`
 * (its hooks can rewrite any outcome), `pytest.ini`, and the interpreter's start-up hooks.
 */
const CONFIG_FILE = /(^|\/)(\.mocharc(\.[A-Za-z]+)?|\.npmrc|jest\.config\.[cm]?[jt]s|vitest\.config\.[cm]?[jt]s|ava\.config\.[cm]?js|\.taprc|\.c8rc(\.json)?|\.nycrc(\.json|\.ya?ml)?|conftest\.py|pytest\.ini|sitecustomize\.py|usercustomize\.py|[^/]+\.pth)$/;

/** Files that may hold a pytest section among other settings: only that section is the harness's. */
const PYTEST_SECTIONS: Record<string, RegExp> = {
  'pyproject.toml': /^\[tool\.pytest[^\]]*\]\s*$/,
  'setup.cfg': /^\[tool:pytest\]\s*$/,
  'tox.ini': /^\[pytest\]\s*$/,
};

/** What changed in the test harness between `before` and `workdir`, as report entries (sorted). */
export function harnessChanges(before: string, workdir: string): string[] {
  const out = new Set<string>();
  const pkgBefore = readPackage(join(before, 'package.json'));
  const pkgAfter = readPackage(join(workdir, 'package.json'));
  for (const key of PACKAGE_KEYS) {
    if (JSON.stringify(pick(pkgBefore, key)) !== JSON.stringify(pick(pkgAfter, key))) out.add(`package.json#${key}`);
  }
  for (const [file, header] of Object.entries(PYTEST_SECTIONS)) {
    if (sectionOf(join(before, file), header) !== sectionOf(join(workdir, file), header)) out.add(`${file}#pytest`);
  }
  const a = relativeSnapshot(before);
  const b = relativeSnapshot(workdir);
  for (const p of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(p) === b.get(p)) continue;
    if (CONFIG_FILE.test(p)) out.add(p);
    else if (/(^|\/)node_modules(\/|$)/.test(p)) out.add(p.slice(0, p.indexOf('node_modules') + 'node_modules'.length) + '/');
  }
  return [...out].sort();
}

function readPackage(path: string): unknown {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8');
  // Unparseable: compared as text, so any change still shows.
  return attempt(() => JSON.parse(text) as unknown, { unparseable: text });
}

/** The lines of an INI/TOML section whose header matches, up to the next header; `null` when absent. */
function sectionOf(path: string, header: RegExp): string | null {
  if (!existsSync(path)) return null;
  const lines = readFileSync(path, 'utf8').split(/\r?\n/);
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (/^\[/.test(line.trim())) inside = header.test(line.trim());
    if (inside) out.push(line);
  }
  return out.length > 0 ? out.join('\n') : null;
}

function pick(obj: unknown, dotted: string): unknown {
  let v = obj;
  for (const k of dotted.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}
