import { readFileSync } from 'node:fs';
import { JoulebenchError, type ErrorCode } from './core/errors.js';

/**
 * Reads a UTF-8 file the user named, or throws one line with a code: `<where>: no such file` (or the
 * system's reason), so every loader reports a missing or unreadable file the same way.
 */
export function readTextFile(path: string, code: ErrorCode, opts: { where?: string; missing?: string; suffix?: string } = {}): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? (opts.missing ?? 'no such file') : (e as Error).message;
    throw new JoulebenchError(code, `${opts.where ?? path}: ${why}${opts.suffix ?? ''}`);
  }
}
