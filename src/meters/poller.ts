/** Runs `tick` every `ms` while at least one window is open; the timer never keeps the process alive. */
export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private open = 0;

  constructor(
    private readonly tick: () => void,
    private readonly ms: number,
  ) {}

  /** A window opens; the timer starts unless `poll` is false or it already runs. */
  acquire(poll = true): void {
    this.open++;
    if (poll && this.timer === null) {
      this.timer = setInterval(this.tick, this.ms);
      this.timer.unref();
    }
  }

  /** A window closes; the last one stops the timer. */
  release(): void {
    this.open = Math.max(0, this.open - 1);
    if (this.open === 0) this.stop();
  }

  /** Stops the timer whatever windows are open (meter close). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
