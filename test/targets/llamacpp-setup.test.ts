import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { NODE_LLAMA_CPP_VERSION, getLlamaInstance } from '../../src/targets/llamacpp/binding.js';
import { prebuiltPackages, setupLlamaCpp } from '../../src/targets/llamacpp/setup.js';
import { cli } from '../helpers/cli.js';

const ROOT = new URL('../../', import.meta.url);
let dir: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'jb-llama-setup-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('the CPU-only install', () => {
  it('package.json overrides the GPU builds and armv7l with the empty stub, and the lock holds none of them', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { overrides?: Record<string, string> };
    const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8')) as { packages: Record<string, { version?: string; link?: boolean; resolved?: string }> };
    const omitted = ['linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan', 'linux-armv7l', 'win-x64-cuda', 'win-x64-cuda-ext', 'win-x64-vulkan'];
    for (const name of omitted) {
      assert.equal(pkg.overrides?.[`@node-llama-cpp/${name}`], 'file:./stubs/empty', name);
      const entry = lock.packages[`node_modules/@node-llama-cpp/${name}`];
      assert.deepEqual(entry, { resolved: 'stubs/empty', link: true }, name);
    }
    // The CPU builds stay: Linux x64's, and arm64's (its `cpu` lists x64 too, so npm places it here as well).
    assert.equal(lock.packages['node_modules/@node-llama-cpp/linux-x64']?.version, NODE_LLAMA_CPP_VERSION);
    const arm64 = lock.packages['node_modules/@node-llama-cpp/linux-arm64'] ?? lock.packages['node_modules/node-llama-cpp/node_modules/@node-llama-cpp/linux-arm64'];
    assert.equal(arm64?.version, NODE_LLAMA_CPP_VERSION);
    assert.equal(pkg.overrides?.['@node-llama-cpp/linux-arm64'], undefined);
    assert.equal(JSON.parse(readFileSync(new URL('stubs/empty/package.json', ROOT), 'utf8')).main, undefined);
  });

  it('the installed node-llama-cpp finds no GPU build and loads its CPU build', { skip: process.platform !== 'linux' || process.arch !== 'x64' }, async () => {
    const lib = await import('node-llama-cpp');
    const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
    try {
      assert.equal(llama.gpu, false);
      assert.equal(llama.buildType, 'prebuilt');
    } finally {
      await llama.dispose();
    }
    for (const name of ['linux-x64-cuda', 'linux-x64-cuda-ext', 'linux-x64-vulkan']) {
      const p = join(ROOT.pathname, 'node_modules', '@node-llama-cpp', name);
      if (existsSync(join(p, 'package.json')) && JSON.parse(readFileSync(join(p, 'package.json'), 'utf8')).name === `@node-llama-cpp/${name}`) continue; // added by setup
      await assert.rejects(import(`@node-llama-cpp/${name}`));
    }
  });
});

/** A module standing in for node-llama-cpp, so the binding's messages can be checked without a GPU. */
function fakeLibrary(name: string, body: string): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, `export const LlamaLogLevel = { error: 'error', fatal: 'fatal', info: 'info' };\n${body}\n`);
  return pathToFileURL(file).href;
}

describe('a missing llama.cpp build is one line naming the setup command', () => {
  it('no usable binary at all: joulebench setup llamacpp', async () => {
    const lib = fakeLibrary('no-binary', `export async function getLlama() { throw new Error('NoBinaryFoundError: no prebuilt binary'); }`);
    await assert.rejects(getLlamaInstance(false, lib), (e: JoulebenchError) => {
      assert.equal(e.code, 'E_TARGET');
      assert.match(e.message, /add it with: joulebench setup llamacpp$/);
      assert.ok(!e.message.includes('\n'));
      return true;
    });
  });

  it('--gpu-layers on a machine with CUDA, only the CPU build installed: refused, naming --gpu cuda', async () => {
    const lib = fakeLibrary(
      'cpu-only',
      `export let disposed = false;
       export async function getLlama() { return { gpu: false, async dispose() { disposed = true; } }; }
       export async function getLlamaGpuTypes(which) { return which === 'supported' ? ['cuda', false] : ['cuda', 'vulkan', false]; }`,
    );
    await assert.rejects(getLlamaInstance('auto', lib), (e: JoulebenchError) => {
      assert.equal(e.code, 'E_TARGET');
      assert.match(e.message, /loaded its CPU build: its cuda build is not installed or does not load here; add it with: joulebench setup llamacpp --gpu cuda$/);
      return true;
    });
    assert.equal(((await import(lib)) as { disposed: boolean }).disposed, true);
  });

  it('--gpu-layers on a machine without a GPU keeps the CPU build, as node-llama-cpp chose', async () => {
    const lib = fakeLibrary('no-gpu', `export async function getLlama() { return { gpu: false }; }\nexport async function getLlamaGpuTypes() { return [false]; }`);
    assert.equal((await getLlamaInstance('auto', lib)).gpu, false);
  });
});

describe('joulebench setup llamacpp', () => {
  it('knows which packages each build is', () => {
    assert.deepEqual(prebuiltPackages('linux', 'x64', 'cuda'), ['@node-llama-cpp/linux-x64-cuda', '@node-llama-cpp/linux-x64-cuda-ext']);
    assert.deepEqual(prebuiltPackages('linux', 'x64', 'vulkan'), ['@node-llama-cpp/linux-x64-vulkan']);
    assert.deepEqual(prebuiltPackages('linux', 'arm64', false), ['@node-llama-cpp/linux-arm64']);
    assert.deepEqual(prebuiltPackages('win32', 'x64', 'cuda'), ['@node-llama-cpp/win-x64-cuda', '@node-llama-cpp/win-x64-cuda-ext']);
    assert.deepEqual(prebuiltPackages('darwin', 'arm64', false), ['@node-llama-cpp/mac-arm64-metal']);
    assert.equal(prebuiltPackages('darwin', 'arm64', 'cuda'), null);
    assert.equal(prebuiltPackages('linux', 'arm64', 'vulkan'), null);
  });

  it('unpacks the package npm pack fetched over the stand-in link, leaving the stub itself alone', { skip: prebuiltPackages(process.platform, process.arch, 'vulkan') === null }, async () => {
    const pkg = prebuiltPackages(process.platform, process.arch, 'vulkan')![0]!;
    // A tarball as the registry serves it: package/package.json and package/index.js.
    const src = join(dir, 'src', 'package');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'package.json'), JSON.stringify({ name: pkg, version: NODE_LLAMA_CPP_VERSION, main: 'index.js' }));
    writeFileSync(join(src, 'index.js'), 'exports.marker = "real build";\n');
    const tgz = join(dir, 'pkg.tgz');
    execFileSync('tar', ['-czf', tgz, '-C', join(dir, 'src'), 'package']);
    const bytes = readFileSync(tgz);
    let requests = 0;
    const server = http.createServer((req, res) => {
      requests++;
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (decodeURIComponent(req.url ?? '') === `/${pkg}`) {
        const dist = { tarball: `${base}/tarball.tgz`, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`, shasum: createHash('sha1').update(bytes).digest('hex') };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ name: pkg, 'dist-tags': { latest: NODE_LLAMA_CPP_VERSION }, versions: { [NODE_LLAMA_CPP_VERSION]: { name: pkg, version: NODE_LLAMA_CPP_VERSION, dist } } }));
      } else if (req.url === '/tarball.tgz') {
        res.end(bytes);
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    // node_modules as a CPU-only `npm ci` leaves it: node-llama-cpp, and the GPU package a link to the stub.
    const nm = join(dir, 'node_modules');
    const stub = join(dir, 'stub');
    mkdirSync(stub, { recursive: true });
    writeFileSync(join(stub, 'package.json'), '{"name":"joulebench-empty-stub","version":"0.0.0"}');
    mkdirSync(join(nm, 'node-llama-cpp'), { recursive: true });
    writeFileSync(join(nm, 'node-llama-cpp', 'package.json'), JSON.stringify({ name: 'node-llama-cpp', version: NODE_LLAMA_CPP_VERSION }));
    mkdirSync(join(nm, '@node-llama-cpp'), { recursive: true });
    symlinkSync(stub, join(nm, pkg), 'dir');
    const env = { npm_config_registry: process.env.npm_config_registry, npm_config_cache: process.env.npm_config_cache };
    process.env.npm_config_registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    process.env.npm_config_cache = join(dir, 'npm-cache');
    try {
      const first = await setupLlamaCpp('vulkan', { llamaDir: join(nm, 'node-llama-cpp') });
      assert.deepEqual(first, [{ package: pkg, dir: join(nm, pkg), installed: true }]);
      assert.ok(!lstatSync(join(nm, pkg)).isSymbolicLink());
      assert.equal(readFileSync(join(nm, pkg, 'index.js'), 'utf8'), 'exports.marker = "real build";\n');
      assert.equal(JSON.parse(readFileSync(join(stub, 'package.json'), 'utf8')).name, 'joulebench-empty-stub');
      assert.ok(requests >= 2);
      const again = await setupLlamaCpp('vulkan', { llamaDir: join(nm, 'node-llama-cpp') });
      assert.deepEqual(again, [{ package: pkg, dir: join(nm, pkg), installed: false }]);
    } finally {
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      server.close();
    }
  });

  it('a bad part or GPU kind is one line, exit 2', async () => {
    const gpu = await cli(['setup', 'llamacpp', '--gpu', 'metal']);
    assert.equal(gpu.code, 2);
    assert.match(gpu.stderr, /--gpu "metal" is not one of cuda, vulkan/);
    assert.equal(gpu.stderr.trim().split('\n').length, 1);
    const part = await cli(['setup', 'ollama']);
    assert.equal(part.code, 2);
    assert.match(part.stderr, /setup: unknown part "ollama" \(known: llamacpp\)/);
  });
});
