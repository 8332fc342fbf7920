import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { JoulebenchError } from '../../core/errors.js';
import { NODE_LLAMA_CPP_VERSION } from './binding.js';

const run = promisify(execFile);

/** The GPU builds `joulebench setup llamacpp --gpu` can add. */
export const SETUP_GPUS = ['cuda', 'vulkan'] as const;
export type SetupGpu = (typeof SETUP_GPUS)[number];

/** The command that adds a llama.cpp build (the CPU one for this platform, or a GPU one). */
export function setupCommand(gpu?: SetupGpu): string {
  return gpu === undefined ? 'joulebench setup llamacpp' : `joulebench setup llamacpp --gpu ${gpu}`;
}

/**
 * The prebuilt packages node-llama-cpp looks for (`getPrebuiltBinariesPackageDirectoryForBuildOptions`);
 * `gpu` false: the CPU build (Metal on macOS arm64). null: no such build is published.
 */
export function prebuiltPackages(platform: NodeJS.Platform, arch: string, gpu: SetupGpu | false): string[] | null {
  const p = (n: string): string => `@node-llama-cpp/${n}`;
  const gpuBuilds = (os: string): string[] | null => {
    if (gpu === 'cuda') return [p(`${os}-x64-cuda`), p(`${os}-x64-cuda-ext`)];
    if (gpu === 'vulkan') return [p(`${os}-x64-vulkan`)];
    return [p(`${os}-x64`)];
  };
  if (platform === 'linux') {
    if (arch === 'x64') return gpuBuilds('linux');
    if (gpu !== false) return null;
    if (arch === 'arm64') return [p('linux-arm64')];
    if (arch === 'arm') return [p('linux-armv7l')];
    if (arch === 'riscv64') return [p('linux-riscv64')];
    return null;
  }
  if (platform === 'win32') {
    if (arch === 'x64') return gpuBuilds('win');
    if (gpu === false && arch === 'arm64') return [p('win-arm64')];
    return null;
  }
  if (platform === 'darwin' && gpu === false) {
    if (arch === 'arm64') return [p('mac-arm64-metal')];
    if (arch === 'x64') return [p('mac-x64')];
  }
  return null;
}

/** The folder node-llama-cpp is installed in, as Node resolves it from joulebench; E_TARGET when it is not. */
export function nodeLlamaCppDir(): string {
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve('node-llama-cpp'));
  } catch {
    throw new JoulebenchError(
      'E_TARGET',
      `the llamacpp target needs the optional dependency node-llama-cpp@${NODE_LLAMA_CPP_VERSION}, which is not installed here (npm install node-llama-cpp@${NODE_LLAMA_CPP_VERSION})`,
    );
  }
  for (let d = dirname(entry); d !== dirname(d); d = dirname(d)) {
    const manifest = join(d, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'node-llama-cpp') return d;
  }
  throw new JoulebenchError('E_TARGET', `node-llama-cpp: no package.json above ${entry}`);
}

/** Where node-llama-cpp's `import(pkg)` finds `pkg`: its own node_modules, else the one it sits in. */
export function prebuiltPackageDir(llamaDir: string, pkg: string): string {
  const nested = join(llamaDir, 'node_modules', pkg);
  return lstatExists(nested) ? nested : join(dirname(llamaDir), pkg);
}

/** The version of the package installed at `dir`, or null (absent, or the empty stand-in a CPU-only install links there). */
export function installedVersion(dir: string, pkg: string): string | null {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
    return m.name === pkg && typeof m.version === 'string' ? m.version : null;
  } catch {
    return null;
  }
}

export interface SetupOptions {
  /** Where node-llama-cpp is installed (default: found from joulebench, nodeLlamaCppDir()). */
  llamaDir?: string;
  /** The npm executable (default `npm`; `npm.cmd` on Windows). */
  npm?: string;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface SetupResult {
  package: string;
  dir: string;
  /** false: that version was there already. */
  installed: boolean;
}

/**
 * Adds the prebuilt llama.cpp build(s) for `gpu` beside node-llama-cpp, at its exact version: `npm pack`
 * (the user's registry and its integrity check), unpacked over the empty stand-in a CPU-only `npm ci` links.
 */
export async function setupLlamaCpp(gpu: SetupGpu | false, opts: SetupOptions = {}): Promise<SetupResult[]> {
  const packages = prebuiltPackages(process.platform, process.arch, gpu);
  if (!packages) {
    throw new JoulebenchError('E_USAGE', `setup llamacpp: node-llama-cpp@${NODE_LLAMA_CPP_VERSION} publishes no ${gpu === false ? 'prebuilt' : gpu} build for ${process.platform}-${process.arch}`);
  }
  const llamaDir = opts.llamaDir ?? nodeLlamaCppDir();
  const npm = opts.npm ?? (process.platform === 'win32' ? 'npm.cmd' : 'npm');
  const results: SetupResult[] = [];
  for (const pkg of packages) {
    const dir = prebuiltPackageDir(llamaDir, pkg);
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
      if (lstatExists(dir)) {
        if (lstatSync(dir).isSymbolicLink()) unlinkSync(dir);
        else rmSync(dir, { recursive: true, force: true });
      }
      renameSync(unpacked, dir);
      results.push({ package: pkg, dir, installed: true });
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return results;
}

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function firstLine(e: unknown): string {
  const err = e as { stderr?: unknown; message?: unknown };
  const text = typeof err.stderr === 'string' && err.stderr.trim() !== '' ? err.stderr : String(err.message ?? e);
  return (text.split('\n').find((l) => l.trim() !== '' && !/^npm (warn|notice)/.test(l)) ?? 'unknown error').trim().slice(0, 300);
}
