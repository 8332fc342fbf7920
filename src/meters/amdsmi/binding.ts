/** AMD SMI's "not supported on this device" status (`AMDSMI_STATUS_NOT_SUPPORTED`). */
export const AMDSMI_STATUS_NOT_SUPPORTED = 2;
/** `AMDSMI_INIT_AMD_GPUS`: initialise for GPUs only. */
const AMDSMI_INIT_AMD_GPUS = 1 << 1;

/** An AMD SMI call that returned a non-success status. */
export class AmdSmiError extends Error {
  constructor(
    readonly amdsmi_status: number,
    message: string,
  ) {
    super(message);
    this.name = 'AmdSmiError';
  }
}

/** An opaque `amdsmi_processor_handle`. */
export type AmdSmiProcessor = unknown;

/** `amdsmi_get_energy_count`'s three outputs. */
export interface AmdSmiEnergyCount {
  /** The raw accumulator, in ticks of `resolution_uj` (uint64, hence a bigint). */
  ticks: bigint;
  /** µJ per tick (a float, e.g. 15.259 on MI300X). */
  resolution_uj: number;
}

/** The slice of AMD SMI the meter uses, one method per C call; each throws `AmdSmiError` on a non-success status. */
export interface AmdSmiBinding {
  init(): void;
  shutdown(): void;
  /** Every GPU processor handle, socket by socket, in AMD SMI's enumeration order. */
  processors(): AmdSmiProcessor[];
  uuid(p: AmdSmiProcessor): string;
  energyCount(p: AmdSmiProcessor): AmdSmiEnergyCount;
  /** `current_socket_power` from `amdsmi_get_power_info`, W. */
  power_w(p: AmdSmiProcessor): number;
}

/** The shared library's name (ROCm installs it under /opt/rocm/lib; ld.so.conf usually lists it). */
export const AMDSMI_LIBRARY = 'libamd_smi.so';

/** Bytes for `amdsmi_get_power_info`'s struct: 68 in ROCm 6.x, 192 later; a larger buffer suits both. */
const POWER_INFO_BYTES = 512;

/** Binds the AMD SMI C library through koffi, imported here so machines that never ask never load it. */
export async function loadAmdSmiBinding(library = AMDSMI_LIBRARY): Promise<AmdSmiBinding> {
  const koffi = (await import('koffi')).default;
  const lib = koffi.load(library);
  const fInit = lib.func('amdsmi_init', 'int', ['uint64_t']);
  const fShutdown = lib.func('amdsmi_shut_down', 'int', []);
  const fStatus = lib.func('amdsmi_status_code_to_string', 'int', ['int', koffi.out(koffi.pointer('const char *'))]);
  const fSockets = lib.func('amdsmi_get_socket_handles', 'int', ['uint32_t *', 'void *']);
  const fProcessors = lib.func('amdsmi_get_processor_handles', 'int', ['void *', 'uint32_t *', 'void *']);
  const fUuid = lib.func('amdsmi_get_gpu_device_uuid', 'int', ['void *', 'uint32_t *', 'char *']);
  const fEnergy = lib.func('amdsmi_get_energy_count', 'int', ['void *', 'uint64_t *', 'float *', 'uint64_t *']);
  const fPower = lib.func('amdsmi_get_power_info', 'int', ['void *', 'void *']);

  const check = (what: string, rc: unknown): void => {
    if (rc === 0) return;
    const text: [string | null] = [null];
    const known = fStatus(rc, text) === 0 && typeof text[0] === 'string';
    throw new AmdSmiError(Number(rc), `${what}: ${known ? text[0] : 'unknown status'} (AMD SMI status ${String(rc)})`);
  };
  /** The two-call pattern of AMD SMI lists: ask the count, then fill an array of that many handles. */
  const handles = (what: string, call: (count: Buffer, out: Buffer | null) => unknown): unknown[] => {
    const count = Buffer.alloc(4);
    check(what, call(count, null));
    const n = count.readUInt32LE(0);
    if (n === 0) return [];
    const out = Buffer.alloc(8 * n);
    check(what, call(count, out));
    const got = Math.min(n, count.readUInt32LE(0));
    return Array.from({ length: got }, (_, i) => koffi.decode(out, 8 * i, 'void *') as unknown);
  };
  return {
    init: () => check('amdsmi_init', fInit(AMDSMI_INIT_AMD_GPUS)),
    shutdown: () => check('amdsmi_shut_down', fShutdown()),
    processors: () =>
      handles('amdsmi_get_socket_handles', (c, o) => fSockets(c, o)).flatMap((s) =>
        handles('amdsmi_get_processor_handles', (c, o) => fProcessors(s, c, o)),
      ),
    uuid: (p) => {
      const len = Buffer.alloc(4);
      len.writeUInt32LE(64, 0);
      const b = Buffer.alloc(64);
      check('amdsmi_get_gpu_device_uuid', fUuid(p, len, b));
      const end = b.indexOf(0);
      return b.toString('utf8', 0, end < 0 ? b.length : end);
    },
    energyCount: (p) => {
      const ticks = Buffer.alloc(8);
      const res = Buffer.alloc(4);
      const ts = Buffer.alloc(8);
      check('amdsmi_get_energy_count', fEnergy(p, ticks, res, ts));
      // A float holds about 7 significant digits: 15.259f reads back as 15.258999824…
      return { ticks: ticks.readBigUInt64LE(0), resolution_uj: Number(res.readFloatLE(0).toPrecision(7)) };
    },
    power_w: (p) => {
      const b = Buffer.alloc(POWER_INFO_BYTES);
      check('amdsmi_get_power_info', fPower(p, b));
      // current_socket_power comes first in both layouts: its low 32 bits sit at offset 0 (little-endian) either way.
      return b.readUInt32LE(0);
    },
  };
}
