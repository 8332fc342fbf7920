import cliProgress from 'cli-progress';
import type { CliIO } from './io.js';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

/** A progress bar on stderr when stderr is a terminal; nothing otherwise. */
export function createProgress(io: CliIO, total: number): Progress | null {
  if (!io.errIsTTY || total === 0) return null;
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'joulebench {bar} {value}/{total} cases · {eta_formatted} left', hideCursor: true, clearOnComplete: true, fps: 10 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return { update: (done) => bar.update(done), stop: () => bar.stop() };
}
