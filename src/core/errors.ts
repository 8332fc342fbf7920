/** Error codes the library throws; the CLI maps them to exit codes (2: the user's input, 1: a run). */
export type ErrorCode =
  | 'E_USAGE'
  | 'E_SUITE'
  | 'E_CONFIG'
  | 'E_REPORT'
  | 'E_INPUT'
  | 'E_RESULTS'
  | 'E_TARGET'
  | 'E_METER'
  | 'E_RUN'
  /** A `--fail-on` threshold was crossed (exit 1). */
  | 'E_GATE'
  /** An output file cannot be written: a folder, read-only, disk full, under /proc (exit 2). */
  | 'E_OUTPUT';

const INPUT_CODES: ReadonlySet<ErrorCode> = new Set(['E_USAGE', 'E_SUITE', 'E_CONFIG', 'E_REPORT', 'E_INPUT', 'E_RESULTS', 'E_OUTPUT']);

/** A typed error with a code; its message is one line meant for a person. */
export class JoulebenchError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JoulebenchError';
    this.code = code;
  }
  /** 2 for bad usage, config or input; 1 for a failed run. */
  get exitCode(): 1 | 2 {
    return INPUT_CODES.has(this.code) ? 2 : 1;
  }
}

export function isJoulebenchError(e: unknown): e is JoulebenchError {
  return e instanceof JoulebenchError;
}
