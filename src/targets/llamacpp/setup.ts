import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JoulebenchError } from '../../core/errors.js';
import { firstLine, NODE_LLAMA_CPP_VERSION, NOT_INSTALLED } from './binding.js';

const run = promisify(execFile);

/** The GPU builds `joulebench setup llamacpp --gpu` can add. */
export const SETUP_GPUS = ['cuda', 'vulkan'] as const;
type SetupGpu = (typeof SETUP_GPUS)[number];

/** Prebuilt packages by `platform-arch`: the CPU build (Metal on macOS arm64), then the CUDA and Vulkan builds. */
const PREBUILT: Record<string, Partial<Record<SetupGpu | 'cpu', string[]>>> = {
  'linux-x64': { cpu: ['linux-x64'], cuda: ['linux-x64-cuda', 'linux-x64-cuda-ext'], vulkan: ['linux-x64-vulkan'] },
  'linux-arm64': { cpu: ['linux-arm64'] },
  'linux-arm': { cpu: ['linux-armv7l'] },
  'linux-riscv64': { cpu: ['linux-riscv64'] },
  'win32-x64': { cpu: ['win-x64'], cuda: ['win-x64-cuda', 'win-x64-cuda-ext'], vulkan: ['win-x64-vulkan'] },
  'win32-arm64': { cpu: ['win-arm64'] },
  'darwin-arm64': { cpu: ['mac-arm64-metal'] },
  'darwin-x64': { cpu: ['mac-x64'] },
};

/** The prebuilt packages node-llama-cpp looks for; `gpu` false: the CPU build. null: no such build is published. */
export function prebuiltPackages(platform: NodeJS.Platform, arch: string, gpu: SetupGpu | false): string[] | null {
  const names = Object.hasOwn(PREBUILT, `${platform}-${arch}`) ? PREBUILT[`${platform}-${arch}`]![gpu || 'cpu'] : undefined;
  return names ? names.map((n) => `@node-llama-cpp/${n}`) : null;
}

/** The folder node-llama-cpp is installed in, as Node resolves it from joulebench; E_TARGET when it is not. */
function nodeLlamaCppDir(): string {
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve('node-llama-cpp'));
  } catch {
    throw new JoulebenchError('E_TARGET', NOT_INSTALLED);
  }
  for (let d = dirname(entry); d !== dirname(d); d = dirname(d)) {
    const manifest = join(d, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'node-llama-cpp') return d;
  }
  throw new JoulebenchError('E_TARGET', `node-llama-cpp: no package.json above ${entry}`);
}

/** The version of the package installed at `dir`, or null (absent, or the empty stand-in a CPU-only install links there). */
function installedVersion(dir: string, pkg: string): string | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
    return m.name === pkg && typeof m.version === 'string' ? m.version : null;
  } catch {
    return null;
  }
}

interface SetupOptions {
  /** Where node-llama-cpp is installed (default: found from joulebench, nodeLlamaCppDir()). */
  llamaDir?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** One package set up; `installed` false: that version was there already. */
type SetupResult = { package: string; dir: string; installed: boolean };

/** Adds the prebuilt llama.cpp build(s) for `gpu` at node-llama-cpp's version (`npm pack`), over the CPU install's stand-in. */
export async function setupLlamaCpp(gpu: SetupGpu | false, opts: SetupOptions = {}): Promise<SetupResult[]> {
  const packages = prebuiltPackages(process.platform, process.arch, gpu);
  if (!packages) {
    throw new JoulebenchError('E_USAGE', `setup llamacpp: node-llama-cpp@${NODE_LLAMA_CPP_VERSION} publishes no ${gpu === false ? 'prebuilt' : gpu} build for ${process.platform}-${process.arch}`);
  }
  const llamaDir = opts.llamaDir ?? nodeLlamaCppDir();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const results: SetupResult[] = [];
  for (const pkg of packages) {
    // Where node-llama-cpp's `import(pkg)` finds `pkg`: its own node_modules, else the one it sits in.
    const nested = join(llamaDir, 'node_modules', pkg);
    const dir = lstatSync(nested, { throwIfNoEntry: false }) ? nested : join(dirname(llamaDir), pkg);
    if (installedVersion(dir, pkg) === NODE_LLAMA_CPP_VERSION) {
      results.push({ package: pkg, dir, installed: false });
      continue;
    }
    const parent = dirname(dir);
    mkdirSync(parent, { recursive: true });
    // Staged beside the destination, so the final step is a rename on one file system.
    const staging = mkdtempSync(join(parent, '.joulebench-setup-'));
    try {
      const spec = `${pkg}@${NODE_LLAMA_CPP_VERSION}`;
      opts.log?.(`fetching ${spec}`);
      try {
        await run(npm, ['pack', spec, '--pack-destination', staging, '--silent'], { shell: process.platform === 'win32', maxBuffer: 16 << 20 });
      } catch (e) {
        throw new JoulebenchError('E_TARGET', `setup llamacpp: npm pack ${spec} failed: ${firstLine(e)}`, { cause: e });
      }
      const tgz = readdirSync(staging).find((f) => f.endsWith('.tgz'));
      if (!tgz) throw new JoulebenchError('E_TARGET', `setup llamacpp: npm pack ${spec} wrote no .tgz`);
      try {
        await run('tar', ['-xzf', tgz], { cwd: staging });
      } catch (e) {
        throw new JoulebenchError('E_TARGET', `setup llamacpp: cannot unpack ${tgz}: ${firstLine(e)}`, { cause: e });
      }
      const unpacked = join(staging, 'package');
      if (installedVersion(unpacked, pkg) !== NODE_LLAMA_CPP_VERSION) throw new JoulebenchError('E_TARGET', `setup llamacpp: ${tgz} is not ${spec}`);
      // The stand-in is a link to the repository's stubs/empty: remove the link, never its target.
      const stand_in = lstatSync(dir, { throwIfNoEntry: false });
      if (stand_in?.isSymbolicLink()) unlinkSync(dir);
      else if (stand_in) rmSync(dir, { recursive: true, force: true });
      renameSync(unpacked, dir);
      results.push({ package: pkg, dir, installed: true });
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return results;
}
