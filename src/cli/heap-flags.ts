/**
 * V8 heap settings for the CLI process, so that its memory does not grow with a suite's size where the
 * work itself does not (measured in docs/benchmarks.md, "Scale"). Applied by src/cli/heap-setup.ts,
 * imported first by the CLI's entry (src/cli/bin.ts), never by the library: flags are process-wide. Left alone when the user sized
 * the heap's generations themselves (`--max-semi-space-size` and the like in the command line or
 * NODE_OPTIONS).
 *
 * - **The young generation.** V8 doubles the semi-space (1 → 16 MiB) after scavenges whose survivors
 *   add up to its capacity, which any long allocation-heavy loop reaches (a million-case suite's
 *   passes, the run loop): ~32 MiB of young generation whatever the suite's size, where 10,000 cases
 *   needed 8. The maximum (`--max-semi-space-size`) is fixed when the heap is set up, but the growth
 *   factor is read at each growth: it is 1 (no growth) from the start and while the new space is at
 *   its cap, and V8's 2 below the cap while a timer sees it (the timer runs while the run loop awaits;
 *   a suite's synchronous first pass keeps the starting 1 MiB).
 * - **The old generation's growth.** V8's JSON parser interns string values of up to 10 characters
 *   (short case ids: `"c123456"`), straight into the old generation and the string table, where only
 *   a full collection frees them; after each one V8 lets the old generation grow to up to 4× what
 *   survived before the next. Over a million cases that is tens of MB of dead ids. Growing by 1.5× at
 *   most collects them sooner, for a few more (small) full collections.
 */
/** The new space's cap (two 4 MiB semi-spaces), bytes: where its CPU cost stopped being measurable. */
export const NEW_SPACE_CAP = 8 * 2 ** 20;
/** The old generation grows by at most this percentage over what survived a full collection. */
export const HEAP_GROWING_PERCENT = 50;

/** The flags to set at start, given the process's own (nothing when the user sized the heap's generations). */
export function heapFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const user = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) =>
    /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor|^--heap[-_]growing[-_]percent/.test(a),
  );
  return user ? [] : ['--semi-space-growth-factor=1', `--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}
