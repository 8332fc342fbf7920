import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { EnergyReading, Meter } from '../../src/meters/meter.js';

/** A fresh temp folder for one test. */
export function tempDir(prefix = 'jb-code-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Enterable by the sandbox's unprivileged uid (root-started bwrap runs solvers as 65534).
  chmodSync(dir, 0o755);
  return dir;
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
}

export interface FakeTask {
  name: string;
  toml?: string;
  before?: Record<string, string>;
  reference?: Record<string, string>;
}

/**
 * A shell test that reports one TAP test point (to `$JOULEBENCH_TEST_REPORT`, as `test_format = "tap"`
 * asks) passing iff `condition` holds, and exits with its status.
 */
export function tapCheck(condition: string, name = 'check'): string {
  return `if ${condition}; then r=ok; else r='not ok'; fi\nprintf 'TAP version 13\\n1..1\\n%s 1 - ${name}\\n' "$r" > "$JOULEBENCH_TEST_REPORT"\n[ "$r" = ok ]\n`;
}

/** The default shell test: src/value.txt must say "fixed". */
export const CHECK = tapCheck('grep -qx fixed src/value.txt');

/**
 * A fast task whose "tests" are a shell check: test/check.sh passes when src/value.txt holds "fixed".
 * No Node start-up per test run, so oracle mechanics can be tested in milliseconds.
 */
export function writeShellTask(suiteDir: string, t: FakeTask): string {
  const dir = join(suiteDir, t.name);
  const toml =
    t.toml ??
    [
      `name = "${t.name}"`,
      `prompt = "make src/value.txt say fixed"`,
      `test_cmd = "sh test/check.sh"`,
      `test_format = "tap"`,
      `test_files = ["test/check.sh"]`,
      `test_timeout_s = 10`,
    ].join('\n');
  writeTree(dir, { 'task.toml': toml + '\n' });
  writeTree(join(dir, 'before'), t.before ?? { 'src/value.txt': 'broken\n', 'test/check.sh': CHECK });
  writeTree(join(dir, 'reference'), t.reference ?? { 'src/value.txt': 'fixed\n' });
  return dir;
}

/**
 * A meter that reports a fixed number of joules per window, optionally flagged below its floor
 * (`true`, or a function of the 1-based window number).
 */
export function fakeMeter(
  joulesPerWindow: number | ((window: number) => number),
  opts: { below_floor?: boolean | ((window: number) => boolean); source?: 'rapl' | 'nvml' } = {},
): Meter & { windows: number } {
  const m = {
    id: 'fake',
    source: opts.source ?? 'rapl',
    floor_ms: 10,
    windows: 0,
    probe: async () => ({ available: true as const }),
    async start() {
      const n = ++m.windows;
      const t0 = performance.now();
      return {
        stop: async (): Promise<EnergyReading> => ({
          joules: typeof joulesPerWindow === 'function' ? joulesPerWindow(n) : joulesPerWindow,
          source: m.source,
          by_domain: {},
          window_ms: performance.now() - t0,
          below_floor: typeof opts.below_floor === 'function' ? opts.below_floor(n) : (opts.below_floor ?? false),
        }),
      };
    },
    describe: () => ({ meter: 'fake' }),
  };
  return m;
}
