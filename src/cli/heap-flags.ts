/**
 * V8 heap settings for the CLI process (never the library: flags are process-wide), so its memory does
 * not grow with a suite's size (docs/benchmarks.md, "Scale"); left alone when the user sized the heap.
 * - The young generation: V8 doubles the semi-space after scavenges whose survivors fill it, which any
 *   long loop reaches (~32 MiB whatever the suite); growth factor 1 holds it at the cap.
 * - The old generation: short JSON string values (case ids) are interned there and freed only by a
 *   full collection; growing 1.5× rather than 4× between them collects tens of MB of dead ids sooner.
 */
/** The new space's cap (two 4 MiB semi-spaces), bytes: where its CPU cost stopped being measurable. */
export const NEW_SPACE_CAP = 8 * 2 ** 20;
/** The old generation grows by at most this percentage over what survived a full collection. */
const HEAP_GROWING_PERCENT = 50;

/** The flags to set at start, given the process's own (nothing when the user sized the heap's generations). */
export function heapFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const user = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) =>
    /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor|^--heap[-_]growing[-_]percent/.test(a),
  );
  return user ? [] : ['--semi-space-growth-factor=1', `--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
}
