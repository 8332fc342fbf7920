import { performance } from 'node:perf_hooks';

/** Something with a deadline: told once when it passes, unless removed first. */
export interface Timed {
  /** `performance.now()` after which it has run out of time. */
  readonly deadline_ms: number;
  onDeadline(): void;
}

/** Longest delay `setTimeout` takes (a longer one fires after 1 ms, with a warning). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The per-attempt deadlines of one pool, one timer for all (a timer a request cost about as much as parsing the reply). */
export class Deadlines {
  private readonly live = new Set<Timed>();
  private timer: NodeJS.Timeout | null = null;
  /** The deadline the timer waits for. */
  private armed_ms = Infinity;
  private refed = false;

  add(t: Timed): void {
    this.live.add(t);
    if (t.deadline_ms < this.armed_ms) this.arm(t.deadline_ms);
    else if (!this.refed) {
      this.timer!.ref();
      this.refed = true;
    }
  }

  delete(t: Timed): void {
    if (this.live.delete(t) && this.live.size === 0 && this.refed) {
      this.timer!.unref();
      this.refed = false;
    }
  }

  /** Requests in flight (for tests). */
  get size(): number {
    return this.live.size;
  }

  private arm(deadline_ms: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.armed_ms = deadline_ms;
    this.timer = setTimeout(onTimer, Math.min(MAX_DELAY_MS, Math.max(1, Math.ceil(deadline_ms - performance.now()))), this);
    this.refed = true;
  }

  /** @internal The timer fired. */
  fire(): void {
    this.timer = null;
    this.armed_ms = Infinity;
    this.refed = false;
    const now = performance.now();
    for (const t of [...this.live]) {
      if (t.deadline_ms > now) continue;
      this.live.delete(t);
      t.onDeadline();
    }
    // Requests added by the ones just told (a retry) armed the timer themselves if earlier.
    let next = Infinity;
    for (const t of this.live) next = Math.min(next, t.deadline_ms);
    if (next < this.armed_ms) this.arm(next);
    if (this.live.size === 0 && this.refed) {
      this.timer!.unref();
      this.refed = false;
    }
  }
}

function onTimer(d: Deadlines): void {
  d.fire();
}
