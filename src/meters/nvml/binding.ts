/** NVML's "this device does not support the call" return code. */
export const NVML_ERROR_NOT_SUPPORTED = 3;

/** An NVML call that returned a non-success code. */
export class NvmlError extends Error {
  constructor(
    readonly nvml_code: number,
    message: string,
  ) {
    super(message);
    this.name = 'NvmlError';
  }
}

/** An opaque NVML device handle. */
export type NvmlDevice = unknown;

/** The slice of NVML the meter uses, one method per C call; each throws `NvmlError` on a non-success return. */
export interface NvmlBinding {
  init(): void;
  shutdown(): void;
  deviceCount(): number;
  handleByIndex(index: number): NvmlDevice;
  uuid(device: NvmlDevice): string;
  name(device: NvmlDevice): string;
  /** `nvmlDeviceGetTotalEnergyConsumption`: mJ since the driver loaded (Volta and newer). */
  totalEnergy_mj(device: NvmlDevice): number;
  /** `nvmlDeviceGetPowerUsage`: current draw, mW. */
  power_mw(device: NvmlDevice): number;
}

/** The meter's slice plus the power-limit calls (`--gpu-power-limits`). */
export interface NvmlPowerBinding extends NvmlBinding {
  /** `nvmlDeviceGetPowerManagementLimit`, mW. */
  powerLimit_mw(device: NvmlDevice): number;
  /** `nvmlDeviceGetPowerManagementLimitConstraints`: the range a limit may be set in, mW. */
  powerLimitRange_mw(device: NvmlDevice): { min: number; max: number };
  /** `nvmlDeviceSetPowerManagementLimit` (needs root), mW. */
  setPowerLimit_mw(device: NvmlDevice, mw: number): void;
}

/** The shared library's name on Linux (the driver installs it; the CUDA toolkit is not needed). */
export const NVML_LIBRARY = 'libnvidia-ml.so.1';

const bound = new Map<string, Promise<NvmlPowerBinding>>();

/**
 * Binds `libnvidia-ml.so.1` through koffi, imported here so machines that never ask never load it. Once
 * per library and process (koffi refuses a type declared twice; the meter and the power limiter share it).
 */
export function loadNvmlBinding(library = NVML_LIBRARY): Promise<NvmlPowerBinding> {
  let b = bound.get(library);
  if (!b) {
    b = bind(library);
    bound.set(library, b);
    b.catch(() => bound.delete(library));
  }
  return b;
}

async function bind(library: string): Promise<NvmlPowerBinding> {
  const koffi = (await import('koffi')).default;
  const lib = koffi.load(library);
  const device = koffi.pointer('nvmlDevice_t', koffi.opaque('nvmlDevice_st'));
  const errorString = lib.func('const char *nvmlErrorString(int result)');
  const fInit = lib.func('int nvmlInit_v2()');
  const fShutdown = lib.func('int nvmlShutdown()');
  const fCount = lib.func('nvmlDeviceGetCount_v2', 'int', ['unsigned int *']);
  const fHandle = lib.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['unsigned int', koffi.out(koffi.pointer(device))]);
  const fUuid = lib.func('nvmlDeviceGetUUID', 'int', [device, 'char *', 'unsigned int']);
  const fName = lib.func('nvmlDeviceGetName', 'int', [device, 'char *', 'unsigned int']);
  const fEnergy = lib.func('nvmlDeviceGetTotalEnergyConsumption', 'int', [device, 'uint64_t *']);
  const fPower = lib.func('nvmlDeviceGetPowerUsage', 'int', [device, 'unsigned int *']);
  const fLimit = lib.func('nvmlDeviceGetPowerManagementLimit', 'int', [device, 'unsigned int *']);
  const fRange = lib.func('nvmlDeviceGetPowerManagementLimitConstraints', 'int', [device, 'unsigned int *', 'unsigned int *']);
  const fSetLimit = lib.func('nvmlDeviceSetPowerManagementLimit', 'int', [device, 'unsigned int']);

  const check = (what: string, rc: unknown): void => {
    if (rc !== 0) throw new NvmlError(Number(rc), `${what}: ${String(errorString(rc))} (NVML return ${String(rc)})`);
  };
  // Scalar and string outputs go through Buffers, which koffi passes as plain pointers.
  const text = (what: string, call: (b: Buffer) => unknown): string => {
    const b = Buffer.alloc(96);
    check(what, call(b));
    const end = b.indexOf(0);
    return b.toString('utf8', 0, end < 0 ? b.length : end);
  };
  const u32 = (what: string, call: (b: Buffer) => unknown): number => {
    const b = Buffer.alloc(4);
    check(what, call(b));
    return b.readUInt32LE(0);
  };
  return {
    init: () => check('nvmlInit_v2', fInit()),
    shutdown: () => check('nvmlShutdown', fShutdown()),
    deviceCount: () => u32('nvmlDeviceGetCount_v2', (b) => fCount(b)),
    handleByIndex: (i) => {
      const o: [unknown] = [null];
      check('nvmlDeviceGetHandleByIndex_v2', fHandle(i, o));
      return o[0];
    },
    uuid: (d) => text('nvmlDeviceGetUUID', (b) => fUuid(d, b, b.length)),
    name: (d) => text('nvmlDeviceGetName', (b) => fName(d, b, b.length)),
    totalEnergy_mj: (d) => {
      const b = Buffer.alloc(8);
      check('nvmlDeviceGetTotalEnergyConsumption', fEnergy(d, b));
      return Number(b.readBigUInt64LE(0));
    },
    power_mw: (d) => u32('nvmlDeviceGetPowerUsage', (b) => fPower(d, b)),
    powerLimit_mw: (d) => u32('nvmlDeviceGetPowerManagementLimit', (b) => fLimit(d, b)),
    powerLimitRange_mw: (d) => {
      const b = Buffer.alloc(8);
      check('nvmlDeviceGetPowerManagementLimitConstraints', fRange(d, b, b.subarray(4)));
      return { min: b.readUInt32LE(0), max: b.readUInt32LE(4) };
    },
    setPowerLimit_mw: (d, mw) => check('nvmlDeviceSetPowerManagementLimit', fSetLimit(d, mw)),
  };
}
