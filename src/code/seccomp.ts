import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A classic-BPF seccomp filter for bubblewrap's `--seccomp FD`: ptrace, process_vm_readv and
 * process_vm_writev fail with EPERM, so a solver cannot reach another process's memory. Everything else
 * is allowed (capabilities are already dropped; mount, unshare, chroot fail on their own).
 */

/** Syscall numbers per seccomp audit arch (linux/audit.h). */
const ARCHES: Record<string, { audit: number; calls: number[]; compat?: { audit: number; calls: number[] } }> = {
  // x86_64: ptrace 101, process_vm_readv 310, process_vm_writev 311; i386 (int 0x80): 26, 347, 348.
  x64: { audit: 0xc000003e, calls: [101, 310, 311], compat: { audit: 0x40000003, calls: [26, 347, 348] } },
  // aarch64: 117, 270, 271.
  arm64: { audit: 0xc00000b7, calls: [117, 270, 271] },
};

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;
/** x32 system calls carry this bit; no task needs them, so all are refused. */
const X32_BIT = 0x40000000;

type Insn = [code: number, jt: number, jf: number, k: number];

/** The filter program for this machine's architecture; `null` where none is defined (the filter is then skipped). */
function seccompProgram(machine: string = arch()): Buffer | null {
  const a = ARCHES[machine];
  if (!a) return null;
  const prog: Insn[] = [];
  // One block per arch: if arch matches, load nr and refuse the listed calls; blocks sit back to back.
  const blocks = [{ audit: a.audit, calls: a.calls, x32: machine === 'x64' }, ...(a.compat ? [{ ...a.compat, x32: false }] : [])];
  prog.push([LD_W_ABS, 0, 0, 4]); // seccomp_data.arch
  for (const b of blocks) {
    const body: Insn[] = [[LD_W_ABS, 0, 0, 0]]; // seccomp_data.nr
    if (b.x32) body.push([JGE_K, b.calls.length + 1, 0, X32_BIT]);
    b.calls.forEach((nr, i) => body.push([JEQ_K, b.calls.length - i, 0, nr]));
    body.push([RET_K, 0, 0, RET_ALLOW]);
    body.push([RET_K, 0, 0, RET_EPERM]);
    // On an arch mismatch skip this block (the accumulator still holds the arch for the next one).
    prog.push([JEQ_K, 0, body.length, b.audit]);
    prog.push(...body);
  }
  prog.push([RET_K, 0, 0, RET_ALLOW]);
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}

let staged: string | null | undefined;

/** The program written once to a file (bwrap reads it through a descriptor); `null` where this arch has none. */
export function seccompFile(): string | null {
  if (staged !== undefined && (staged === null || existsSync(staged))) return staged;
  const program = seccompProgram();
  if (!program) return (staged = null);
  const dir = mkdtempSync(join(tmpdir(), 'joulebench-seccomp-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'filter.bpf');
  writeFileSync(path, program, { mode: 0o644 });
  return (staged = path);
}
