import { spawn, type StdioOptions } from 'node:child_process';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { netJoules, type IdleCalibration } from '../core/energy.js';
import type { EnergySource } from '../core/types.js';
import { readCpuTimes, type CpuTimes } from '../meters/cpu-time.js';
import { calibrateIdle, DEFAULT_IDLE_MS } from '../meters/idle.js';
import type { Meter } from '../meters/meter.js';

/** One domain of a metered command. */
export interface CommandDomain {
  gross_joules: number | null;
  net_joules: number | null;
  source: EnergySource;
  idle_watts: number | null;
}

/** What running one command under a meter cost: `perf stat` for energy. */
export interface CommandMeasurement {
  format: 'joulebench-meter/1';
  command: string[];
  /** The command's exit code; for a signal, 128 + its number (as shells report it). */
  exit_code: number;
  signal: string | null;
  /** Set when the command could not be started (then `exit_code` is 127 or 126, and every energy figure is null). */
  spawn_error: string | null;
  wall_ms: number;
  /** CPU time of the command and the children it waited for (`getrusage` children, 10 ms ticks); null where unknown. */
  cpu_ms: number | null;
  meter: string;
  source: EnergySource;
  gross_joules: number | null;
  net_joules: number | null;
  below_floor: boolean;
  floor_ms: number;
  idle: IdleCalibration;
  by_domain: Record<string, CommandDomain>;
  warnings: string[];
}

export interface MeasureOptions {
  meter: Meter;
  /** Idle window before the command, ms (default 1000); 0 skips it. */
  idle_ms?: number;
  /** Where the command's stdin/stdout/stderr go; default: inherited. */
  stdio?: StdioOptions;
  cpuTimes?: () => CpuTimes;
}

/** Runs `command` under the meter (after idle calibration) and says what it cost. */
export async function measureCommand(command: readonly string[], opts: MeasureOptions): Promise<CommandMeasurement> {
  const [file, ...args] = command;
  if (file === undefined) throw new RangeError('measureCommand needs a command');
  const { meter } = opts;
  const cpuTimes = opts.cpuTimes ?? (() => readCpuTimes());
  const idle = await calibrateIdle(meter, opts.idle_ms ?? DEFAULT_IDLE_MS);

  const c0 = cpuTimes();
  const window = await meter.start();
  const t0 = performance.now();
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error: NodeJS.ErrnoException | null }>((resolve) => {
    const child = spawn(file, args, { stdio: opts.stdio ?? 'inherit' });
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal, error: null }));
  });
  const wall_ms = performance.now() - t0;
  const reading = await window.stop();
  const c1 = cpuTimes();

  // A command that never started has no energy: whatever the window read was not its.
  const ran = ended.error === null;
  const gross_joules = ran ? reading.joules : null;
  const by_domain: Record<string, CommandDomain> = {};
  for (const [d, v] of ran ? Object.entries(reading.by_domain) : []) {
    const w = idle.by_domain_watts[d] ?? null;
    by_domain[d] = {
      gross_joules: v.joules,
      net_joules: netJoules(v.joules, { status: idle.status, watts: idle.status === 'measured' ? w : null }, reading.window_ms),
      source: v.source,
      idle_watts: w,
    };
  }
  const spawn_error = ended.error ? `${ended.error.code ?? 'error'}: ${ended.error.message}` : null;
  let exit_code: number;
  if (ended.error) exit_code = ended.error.code === 'ENOENT' ? 127 : 126;
  else if (ended.code !== null) exit_code = ended.code;
  else exit_code = 128 + (ended.signal ? (constants.signals[ended.signal] ?? 0) : 0);

  return {
    format: 'joulebench-meter/1',
    command: [...command],
    exit_code,
    signal: ended.signal,
    spawn_error,
    wall_ms,
    cpu_ms: c0.children_ms === null || c1.children_ms === null ? null : c1.children_ms - c0.children_ms,
    meter: meter.id,
    source: gross_joules === null ? 'none' : reading.source,
    gross_joules,
    net_joules: netJoules(gross_joules, idle, reading.window_ms),
    below_floor: reading.below_floor,
    floor_ms: meter.floor_ms,
    idle,
    by_domain,
    warnings: ran ? (reading.warnings ?? []) : ['the command did not start: no energy is reported'],
  };
}
