/**
 * Keeps V8's young generation small in the CLI process. Left to itself V8 doubles the semi-space
 * (1 → 16 MiB) after scavenges whose survivors add up to its capacity, which any long allocation-heavy
 * loop reaches (a million-case suite's passes, the run loop): ~32 MiB of resident young generation
 * whatever the suite's size, where 10,000 cases needed 8. The maximum (`--max-semi-space-size`) is
 * fixed when the heap is set up and cannot be set from inside the process, but the growth factor is
 * read at each growth: it is 1 (no growth) while the new space is at its cap, and V8's 2 below it.
 * The synchronous first pass over a suite sees only the starting 1 MiB; a timer (which runs while the
 * run loop awaits) lets the young generation grow to the cap, where scavenges cost less CPU.
 * Measured in docs/benchmarks.md ("Scale"): peak RSS and CPU time at 10k, 100k and 1M cases.
 *
 * Imported first by the CLI's entry (src/cli/bin.ts), never by the library: a flag is process-wide.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The new space's cap (two 4 MiB semi-spaces), bytes: where its CPU cost stopped being measurable (docs/benchmarks.md). */
export const NEW_SPACE_CAP = 8 * 2 ** 20;

/** Whether the user sized the young generation themselves (then it is theirs: nothing is changed). */
function userSized(): boolean {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor/.test(a));
}

let growing = false;
/** Growth factor 2 while the new space is below the cap, 1 from there. */
function govern(): void {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  const below = s !== undefined && s.space_size < NEW_SPACE_CAP;
  if (below === growing) return;
  growing = below;
  setFlagsFromString(`--semi-space-growth-factor=${below ? 2 : 1}`);
}

if (!userSized()) {
  setFlagsFromString('--semi-space-growth-factor=1');
  setInterval(govern, 20).unref();
}
