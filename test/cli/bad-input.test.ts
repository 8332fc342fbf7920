import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { MAX_TIMER_MS, MAX_TIMER_S } from '../../src/core/bounds.js';
import { escapeControls, oneLine, quote } from '../../src/core/one-line.js';
import { firstInvalidUtf8, readTextFile, setInputLimits } from '../../src/read-text.js';
import { loadSuite } from '../../src/suites/loader.js';
import { cli } from '../helpers/cli.js';
import { inProcess, linesOf } from '../helpers/in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-bad-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, content: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}
const SUITE = '{"name":"s","cases":[{"id":"a","prompt":"p","expected":"x"}]}';

/** Exit 2, exactly one stderr line that starts with `joulebench:`, names `needle`, carries no stack trace. */
function assertOneLine(r: { code: number | null; stderr: string }, needle: string, pattern?: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = linesOf(r.stderr);
  assert.equal(lines.length, 1, `one line, got ${JSON.stringify(r.stderr)}`);
  assert.ok(lines[0]!.startsWith('joulebench: '), lines[0]);
  assert.ok(lines[0]!.includes(needle), `names ${needle}: ${lines[0]}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/);
  assert.doesNotMatch(r.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  if (pattern) assert.match(lines[0]!, pattern);
}

describe('special files: refused before reading, one line, exit 2', () => {
  const fifo = join(dir, 'pipe.json');
  const sockPath = join(dir, 'sock.json');
  const folder = join(dir, 'folder.json');
  let server: Server;
  before(async () => {
    execFileSync('mkfifo', [fifo]);
    mkdirSync(folder);
    server = createServer();
    await new Promise<void>((r) => server.listen(sockPath, r));
  });
  after(() => server.close());

  const kinds: [string, () => string, RegExp][] = [
    ['a FIFO', () => fifo, /is a FIFO \(named pipe\), not a regular file/],
    ['/dev/zero', () => '/dev/zero', /is a character device, not a regular file/],
    ['/dev/urandom', () => '/dev/urandom', /is a character device, not a regular file/],
    ['a socket', () => sockPath, /is a socket, not a regular file/],
  ];
  // Each path a user names: the suite, the config, the MMLU data, the replay answers.
  const uses: [string, (p: string) => string[]][] = [
    ['suite', (p) => ['run', '-q', '--no-history', '--suite', p]],
    ['config', (p) => ['run', '-q', '--no-history', '--config', p]],
    ['data', (p) => ['run', '-q', '--no-history', '--suite', 'mmlu', '--data', p]],
    ['answers', (p) => ['run', '-q', '--no-history', '--target', 'replay', '--answers', p]],
  ];
  for (const [use, args] of uses) {
    for (const [kind, path, why] of kinds) {
      it(`${use} path is ${kind}`, async () => {
        const p = path();
        assertOneLine(await inProcess(args(p)), p, why);
      });
    }
  }
  for (const use of ['suite', 'config', 'answers']) {
    it(`${use} path is a directory`, async () => {
      const args = uses.find(([u]) => u === use)![1](folder);
      assertOneLine(await inProcess(args), folder, /is a directory, not a regular file/);
    });
  }
  it('a FIFO inside an MMLU data folder is refused too', async () => {
    const d = join(dir, 'mmlu-dir');
    mkdirSync(d);
    execFileSync('mkfifo', [join(d, 'astronomy_test.csv')]);
    assertOneLine(await inProcess(['run', '-q', '--suite', 'mmlu', '--data', d]), join(d, 'astronomy_test.csv'), /FIFO/);
  });
  it('the real binary: a FIFO suite and /dev/zero config end in one line, not a hang or bad_alloc', { timeout: 30_000 }, async () => {
    assertOneLine(await cli(['run', '-q', '--no-history', '--suite', fifo]), fifo, /FIFO/);
    assertOneLine(await cli(['run', '-q', '--no-history', '--config', '/dev/zero']), '/dev/zero', /character device/);
  });
});

describe('size limits: named in the message, configurable', () => {
  it('a config over 1 MiB is refused with the limit', async () => {
    const p = file('big.yaml', `# ${'x'.repeat(1024 * 1024)}\n`);
    assertOneLine(await inProcess(['run', '--config', p]), p, /1048579 bytes is over the 1 MiB limit for configs \(raise it with JOULEBENCH_MAX_CONFIG_BYTES=BYTES\)/);
    // Raised, it loads (and fails later for its own reasons, not size).
    const r = await inProcess(['run', '-q', '--no-history', '--config', p, '--suite', '/nonexistent.json'], { JOULEBENCH_MAX_CONFIG_BYTES: '2MiB' });
    assert.doesNotMatch(r.stderr, /limit/);
  });
  it('a suite over JOULEBENCH_MAX_INPUT_BYTES is refused with the limit', async () => {
    const p = file('limited.json', SUITE);
    assertOneLine(await inProcess(['run', '--suite', p], { JOULEBENCH_MAX_INPUT_BYTES: '32' }), p, /61 bytes is over the 32 bytes limit for input files/);
  });
  it('a limit that is not a size is itself one line', async () => {
    const r = await inProcess(['run'], { JOULEBENCH_MAX_INPUT_BYTES: 'lots\n' });
    assertOneLine(r, 'JOULEBENCH_MAX_INPUT_BYTES', /got "lots\\n"/);
  });
  it('the library: setInputLimits applies to the next read', () => {
    const p = file('lib-limit.json', SUITE);
    const prev = setInputLimits({ input_bytes: 10 });
    try {
      assert.throws(() => loadSuite(p), /over the 10 bytes limit/);
    } finally {
      setInputLimits(prev);
    }
    assert.equal(loadSuite(p).cases.length, 1);
  });
});

describe('text must be UTF-8', () => {
  it('a suite with a bad byte is refused with its offset (never decoded to U+FFFD and run)', async () => {
    const bytes = Buffer.concat([Buffer.from('{"cases":[{"id":"a'), Buffer.from([0xff]), Buffer.from('","prompt":"p","expected":"x"}]}')]);
    const p = file('latin1.json', bytes);
    assertOneLine(await inProcess(['run', '--suite', p]), p, /not valid UTF-8 \(first bad byte sequence at byte offset 18\)/);
  });
  it('a config and MMLU data with bad bytes: the same', async () => {
    const c = file('bad.yaml', Buffer.concat([Buffer.from('target:\n  model: "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]));
    assertOneLine(await inProcess(['run', '--config', c]), c, /byte offset 21/);
    const d = file('bad_test.csv', Buffer.concat([Buffer.from('q,a,b,c,d,A\nq2,'), Buffer.from([0xc0, 0xaf]), Buffer.from(',b,c,d,B\n')]));
    assertOneLine(await inProcess(['run', '--suite', 'mmlu', '--data', d]), d, /byte offset 15/);
  });
  it('a UTF-8 BOM is accepted and stripped (suite JSON, YAML config)', () => {
    const s = loadSuite(file('bom.json', `\ufeff${SUITE}`));
    assert.equal(s.cases[0]!.id, 'a');
    const c = loadConfig(file('bom.yaml', '\ufefftimeouts:\n  request_s: 5\n'));
    assert.equal(c.config.timeouts?.request_s, 5);
  });
  it('firstInvalidUtf8 agrees with the platform decoder on random bytes, and finds the classic bad forms', () => {
    for (const [bytes, at] of [
      [[0x61, 0xc0, 0x80], 1], // overlong NUL
      [[0xe0, 0x80, 0x80], 0], // overlong 3-byte
      [[0xed, 0xa0, 0x80], 0], // a surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut short
      [[0xe2, 0x82, 0xac], -1], // €
    ] as const) {
      assert.equal(firstInvalidUtf8(Buffer.from(bytes)), at, JSON.stringify(bytes));
    }
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let i = 0; i < 3000; i++) {
      const b = Buffer.from(Array.from({ length: 1 + (i % 9) }, () => (i % 3 === 0 ? 0x80 | rnd() : rnd())));
      assert.equal(firstInvalidUtf8(b) === -1, isUtf8(b), b.toString('hex'));
    }
  });
});

describe('one line means one line', () => {
  it('escapeControls / quote / oneLine', () => {
    assert.equal(escapeControls('a\nb\rc\td\u001b[2J\u0000\u009b\u2028'), 'a\\nb\\rc\\td\\x1b[2J\\x00\\x9b\\u2028');
    const q = quote('x'.repeat(500));
    assert.equal(q.length, 202);
    assert.ok(q.endsWith('…"'));
    assert.equal(oneLine('y'.repeat(5000)).length, 1000);
  });
  it('an id with newlines and an escape sequence is escaped in the message', async () => {
    const id = 'a\n\u001b[2Jrewritten';
    const p = file('dup.json', JSON.stringify({ cases: [{ id, prompt: 'p', expected: 'x' }, { id, prompt: 'p', expected: 'x' }] }));
    assertOneLine(await inProcess(['run', '--suite', p]), p, /id "a\\n\\x1b\[2Jrewritten"\): id: duplicates case 0/);
  });
  it('a 100 KB id and a 100 KB bad regex are cut: the line stays short', async () => {
    const long = 'z'.repeat(100_000);
    const p = file('long.json', JSON.stringify({ scorer: 'regex', cases: [{ id: long, prompt: 'p', expected: `(${long}` }] }));
    const r = await inProcess(['run', '--suite', p]);
    assertOneLine(r, p, /\(id "z{199}…"\): expected: not a valid regular expression \(RE2 syntax, no backreferences or lookaround: missing closing \)\)$/);
    assert.ok(r.stderr.length < 600, String(r.stderr.length));
  });
  it('a flag value with control characters: commander\'s error is one escaped line', async () => {
    const r = await cli(['run', '--idle-ms', '1\n\u001b[31mred']);
    assert.equal(r.code, 2);
    assert.deepEqual(linesOf(r.stderr), [`error: option '--idle-ms <ms>' argument '1\\n\\x1b[31mred' is invalid. must be an integer >= 1, got "1\\n\\x1b[31mred" (run with --help for usage)`]);
  });
  it('YAML warnings never print as lines of their own', async () => {
    const p = file('tagged.yaml', 'name: t\ncases:\n  - id: a\n    prompt: !shout p\n    expected: x\n');
    const r = await cli(['run', '-q', '--no-history', '--suite', p, '-o', join(dir, 'tagged-report.json')]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Warning|YAML/);
  });
});

describe('numbers that validate are numbers that work', () => {
  it(`timeouts.request_s above 2^31−1 ms is refused with the maximum; ${MAX_TIMER_S} loads`, async () => {
    const p = file('slow.yaml', 'timeouts:\n  request_s: 2147484\n');
    assertOneLine(await inProcess(['run', '--config', p]), p, /timeouts\.request_s must be <= 2147483\.647 \(2\^31−1 ms, the longest timer Node\.js can set\)/);
    assert.equal(loadConfig(file('max.yaml', `timeouts:\n  request_s: ${MAX_TIMER_S}\n`)).config.timeouts?.request_s, MAX_TIMER_S);
    assertOneLine(await inProcess(['run', '--config', file('tiny.yaml', 'timeouts:\n  request_s: 0.0001\n')]), 'tiny.yaml', /must be >= 0\.001/);
  });
  it('backoff settings and prices are bounded', async () => {
    const b = file('backoff.yaml', 'params:\n  retry:\n    max_attempts: 2\n    backoff_max_s: 1e10\n');
    assertOneLine(await inProcess(['run', '--config', b]), b, /params\.retry\.backoff_max_s must be <= 2147483\.647/);
    const c = file('ctl.yaml', 'target:\n  retries:\n    backoff_base_s: 3000000\n');
    assertOneLine(await inProcess(['run', '--config', c]), c, /target\.retries\.backoff_base_s must be <= 2147483\.647/);
    const pr = file('prices.yaml', 'prices:\n  input_usd_per_mtok: 1e300\n  output_usd_per_mtok: 1\n');
    assertOneLine(await inProcess(['run', '--config', pr]), pr, /prices\.input_usd_per_mtok must be <= 1000000/);
  });
  it('--idle-ms, code --timeout, infer --unload-timeout-ms and the watts rates are bounded', async () => {
    for (const [args, pattern] of [
      [['run', '--idle-ms', String(MAX_TIMER_MS + 1)], /--idle-ms <ms>.*must be <= 2147483647 \(2\^31−1 ms/],
      [['meter', '--idle-ms', '1e12', '--', 'true'], /--idle-ms/],
      [['code', '--timeout', '3000000'], /--timeout: must be <= 2147483\.647/],
      [['infer', '--unload-timeout-ms', '99999999999'], /--unload-timeout-ms <ms>.*must be <= 2147483647/],
      [['run', '--active-watts', '1e9'], /--active-watts <W>.*must be <= 1000000 W/],
      [['run', '--cpu-watts-per-core', '1e400'], /--cpu-watts-per-core <W>.*must be a number >= 0/],
    ] as const) {
      const r = await inProcess([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(linesOf(r.stderr).length, 1, r.stderr);
      assert.match(r.stderr, pattern);
    }
  });
});

describe('every config error names its file', () => {
  for (const [label, endpoint, why] of [
    ['not a URL', 'not a url', /target\.endpoint must be an absolute http\(s\) URL, got "not a url"/],
    ['another scheme', 'ftp://h/v1', /target\.endpoint must use http or https/],
    ['credentials in it', 'http://u:p@h/v1', /target\.endpoint must not carry credentials/],
    ['a metadata address', 'http://169.254.169.254/v1', /link-local or cloud-metadata/],
    ['a CR/LF inside (refused, not stripped)', 'http://127.0.0.1:9/v1\r\nX-Injected: 1', /must not contain control characters.*got "http:\/\/127\.0\.0\.1:9\/v1\\r\\nX-Injected: 1"/],
    ['a tab inside', 'http://127.0.0.1:9/\tv1', /must not contain control characters/],
  ] as const) {
    it(`target.endpoint: ${label}`, async () => {
      const p = file(`endpoint-${label.length}.yaml`, `target:\n  kind: openai\n  model: m\n  endpoint: ${JSON.stringify(endpoint)}\n`);
      assertOneLine(await inProcess(['run', '--config', p]), `${p}: target.endpoint`, why);
    });
  }
  it('--endpoint with a newline is refused too (not stripped by the URL parser)', async () => {
    const r = await inProcess(['run', '--target', 'openai', '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1\n']);
    assertOneLine(r, 'endpoint', /must not contain control characters/);
  });
});

describe('meters say what they skip', () => {
  it('run --meter rapl --rapl-dram on a tree with no dram zone: one line saying so', async () => {
    const root = join(dir, 'powercap');
    mkdirSync(join(root, 'intel-rapl:0'), { recursive: true });
    writeFileSync(join(root, 'intel-rapl:0', 'name'), 'package-0\n');
    writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), '0\n');
    writeFileSync(join(root, 'intel-rapl:0', 'max_energy_range_uj'), '262143328850\n');
    for (const meter of ['rapl', 'auto']) {
      const r = await inProcess(['run', '-q', '--no-history', '--meter', meter, '--rapl-dram', '--powercap-root', root]);
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(linesOf(r.stderr).length, 1, r.stderr);
      assert.match(r.stderr, /--rapl-dram: no dram zone under .*powercap.*\(fix: run without --rapl-dram/);
    }
  });
});

it('readTextFile: a missing file keeps its message', () => {
  assert.throws(() => readTextFile(join(dir, 'nope.json'), 'E_SUITE', { where: 'suite x', suffix: ' (hint)' }), { message: 'suite x: no such file (hint)' });
});

it('an openai config without target.model names the file (the endpoint falls back as the OpenAI SDK does)', async () => {
  const q = file('no-model.yaml', 'target:\n  kind: openai\n  endpoint: http://127.0.0.1:9/v1\n');
  assertOneLine(await inProcess(['run', '--config', q]), `${q}: target.model is required`);
});
