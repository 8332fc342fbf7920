import { readFileSync } from 'node:fs';
import { arch, cpus, type, version as osVersion, release } from 'node:os';
import { execa } from 'execa';
import { hostFacts, type Receipt } from '../report/receipt.js';

/** The GPU snapshot seed 004 rule 7 takes: the device list and memory used, compared byte for byte. */
export const DEFAULT_GPU_SNAPSHOT_CMD = 'nvidia-smi --query-gpu=index,name,uuid,memory.used --format=csv,noheader';

/** One snapshot: the command's stdout verbatim, or why it could not be taken. */
export interface GpuSnapshot {
  output: string | null;
  error: string | null;
}

/** Runs the snapshot command through the shell (so a user may pass a pipeline); never throws. */
export async function gpuSnapshot(cmd: string, timeout_ms = 15_000): Promise<GpuSnapshot> {
  try {
    const r = await execa(cmd, { shell: true, timeout: timeout_ms, reject: false, stripFinalNewline: false, stdin: 'ignore' });
    if (r.failed || r.exitCode !== 0) {
      const why = r.timedOut ? `timed out after ${timeout_ms} ms` : `exit ${r.exitCode ?? 'none'}: ${String(r.stderr).trim().split('\n')[0] ?? ''}`;
      return { output: null, error: `${cmd}: ${why}` };
    }
    return { output: String(r.stdout), error: null };
  } catch (e) {
    return { output: null, error: `${cmd}: ${(e as Error).message.split('\n')[0]}` };
  }
}

/** SIMD register width in bits, from /proc/cpuinfo flags where readable; otherwise a guess by architecture. */
export function simdWidth(cpuinfoPath = '/proc/cpuinfo'): { bits: number; source: string } {
  try {
    const flags = /^flags\s*:\s*(.*)$/m.exec(readFileSync(cpuinfoPath, 'utf8'))?.[1]?.split(/\s+/) ?? [];
    if (flags.includes('avx512f')) return { bits: 512, source: `${cpuinfoPath}: avx512f` };
    if (flags.includes('avx2') || flags.includes('avx')) return { bits: 256, source: `${cpuinfoPath}: avx/avx2` };
    if (flags.length > 0) return { bits: 128, source: `${cpuinfoPath}: no avx flag` };
  } catch {
    /* not Linux, or unreadable: guess below */
  }
  return arch() === 'x64' ? { bits: 512, source: 'guess for x64 (widest x86 SIMD)' } : { bits: 128, source: `guess for ${arch()} (NEON width)` };
}

/** Host receipt: CPU model, cores, memory, OS. */
export function inferHostFacts(): Receipt['host'] & { os: string; os_version: string; logical_cpus: number } {
  return { ...hostFacts(), os: `${type()} ${release()}`, os_version: osVersion(), logical_cpus: cpus().length };
}
