import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_HEAD_BYTES, ReplyParser, type ReplyHead } from '../../src/targets/openai/http1-reply.js';

interface Outcome {
  heads: ReplyHead[];
  body: string;
  end: { reusable: boolean; timeout_s: number | null } | null;
  malformed: string | null;
}

/** Feeds `wire` to a fresh parser in the given pieces and records what it reported. */
function parse(wire: string | Buffer, pieces: number[] = [], p = new ReplyParser()): Outcome {
  const bytes = typeof wire === 'string' ? Buffer.from(wire, 'latin1') : wire;
  const out: Outcome = { heads: [], body: '', end: null, malformed: null };
  const bodyParts: Buffer[] = [];
  p.start({
    onHead: (h) => out.heads.push(h),
    onBody: (b) => bodyParts.push(Buffer.from(b)),
    onEnd: (reusable, timeout_s) => (out.end = { reusable, timeout_s }),
    onMalformed: (why) => (out.malformed = why),
  });
  let at = 0;
  for (const cut of [...pieces, bytes.length]) {
    // Each piece in memory that is overwritten once execute returns (the client reads every plain
    // connection into one shared buffer): the parser must keep no view of it.
    const scratch = Buffer.from(bytes.subarray(at, cut));
    p.execute(scratch);
    scratch.fill('Z');
    at = cut;
  }
  out.body = Buffer.concat(bodyParts).toString('latin1');
  return out;
}

/** The same reply fed whole, split at every byte position, and one byte at a time: all must agree. */
function parseEverySplit(wire: string): Outcome {
  const whole = parse(wire);
  for (let cut = 1; cut < wire.length; cut++) assert.deepEqual(parse(wire, [cut]), whole, `split at byte ${cut}`);
  assert.deepEqual(
    parse(
      wire,
      Array.from({ length: wire.length - 1 }, (_, i) => i + 1),
    ),
    whole,
    'one byte at a time',
  );
  return whole;
}

const OK = 'HTTP/1.1 200 OK\r\n';

describe('HTTP/1.1 reply parser: framing', () => {
  test('Content-Length body; keep-alive with the server timeout hint', () => {
    const o = parseEverySplit(`${OK}Content-Type: application/json\r\nKeep-Alive: timeout=5\r\nContent-Length: 11\r\n\r\n{"a":"bcd"}`);
    assert.equal(o.malformed, null);
    assert.deepEqual(o.heads, [{ status: 200, contentType: 'application/json', location: undefined }]);
    assert.equal(o.body, '{"a":"bcd"}');
    assert.deepEqual(o.end, { reusable: true, timeout_s: 5 });
  });

  test('chunked body with extensions and trailers', () => {
    const o = parseEverySplit(`${OK}transfer-encoding: chunked\r\n\r\n5;name=v\r\nhello\r\n1A\r\n${'x'.repeat(26)}\r\n0\r\nX-Trailer: t\r\n\r\n`);
    assert.equal(o.malformed, null);
    assert.equal(o.body, `hello${'x'.repeat(26)}`);
    assert.deepEqual(o.end, { reusable: true, timeout_s: null });
  });

  test('a body framed by the close ends at eof, and the connection is not reused', () => {
    const p = new ReplyParser();
    let ended: boolean | null = null;
    let body = '';
    p.start({ onHead: () => {}, onBody: (b) => (body += b.toString()), onEnd: (r) => (ended = r), onMalformed: (w) => assert.fail(w) });
    p.execute(Buffer.from('HTTP/1.0 200 OK\r\n\r\npart one,'));
    p.execute(Buffer.from(' part two'));
    assert.equal(ended, null);
    assert.equal(p.eof(), true);
    assert.equal(ended, false);
    assert.equal(body, 'part one, part two');
  });

  test('a Content-Length reply cut short is reported by eof (false), not ended', () => {
    const p = new ReplyParser();
    let ended = false;
    p.start({ onHead: () => {}, onBody: () => {}, onEnd: () => (ended = true), onMalformed: (w) => assert.fail(w) });
    p.execute(Buffer.from(`${OK}Content-Length: 10\r\n\r\n12345`));
    assert.equal(p.eof(), false);
    assert.equal(ended, false);
  });

  test('interim 1xx replies are skipped; 204 and Content-Length: 0 end with their head', () => {
    const o = parseEverySplit(`HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n${OK}Content-Length: 2\r\n\r\nok`);
    assert.deepEqual(o.heads.map((h) => h.status), [200]);
    assert.equal(o.body, 'ok');
    assert.deepEqual(parse('HTTP/1.1 204 No Content\r\n\r\n').end, { reusable: true, timeout_s: null });
    assert.equal(parse(`${OK}Content-Length: 0\r\n\r\n`).end?.reusable, true);
  });

  test('reuse: not after Connection: close, not after HTTP/1.0 without keep-alive, not when bytes follow the reply', () => {
    assert.equal(parse(`${OK}Connection: close\r\nContent-Length: 1\r\n\r\nx`).end?.reusable, false);
    assert.equal(parse(`${OK}Connection: Keep-Alive, Close\r\nContent-Length: 1\r\n\r\nx`).end?.reusable, false);
    assert.equal(parse('HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx').end?.reusable, false);
    assert.equal(parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx').end?.reusable, true);
    // A second reply smuggled behind the first (a mis-framing server): the connection is dropped, not trusted.
    const o = parse(`${OK}Content-Length: 1\r\n\r\nx${OK}Content-Length: 1\r\n\r\ny`);
    assert.equal(o.body, 'x');
    assert.equal(o.end?.reusable, false);
  });

  test('one parser reading reply after reply (its remembered field values) reads each as a fresh parser does', () => {
    // Values of the same length that differ in one byte, the same value again, and values too long to remember.
    const types = ['application/json', 'application/jsoN', 'text/event-stream', 'text/event-strean', `text/plain; x=${'v'.repeat(200)}`, `text/plain; x=${'v'.repeat(199)}w`];
    const connections = ['keep-alive', 'Keep-Alive', 'close', 'Close', 'clos', 'keep-alive, close', 'upgrade', `keep-alive, ${'x'.repeat(150)}`, `close, ${'x'.repeat(153)}`];
    const keepAlives = ['timeout=5', 'timeout=7', 'timeout=50', 'max=5', 'timeout=0', `timeout=9, ${'m'.repeat(140)}`, `timeout=8, ${'m'.repeat(140)}`];
    const codings = ['chunked', 'chunkee', 'gzip, chunked', 'chunked, gzip', 'CHUNKED'];
    let seed = 7;
    const pick = <T>(a: T[]): T => a[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % a.length]!;
    const reused = new ReplyParser();
    for (let i = 0; i < 400; i++) {
      const te = pick([...codings, null, null]);
      const fields = [`Content-Type: ${pick(types)}`, `Connection: ${pick(connections)}`, `Keep-Alive: ${pick(keepAlives)}`];
      if (pick([true, false])) fields.push(`Connection: ${pick(connections)}`);
      const body = te === null ? 'Content-Length: 2\r\n\r\nok' : `Transfer-Encoding: ${te}\r\n\r\n2\r\nok\r\n0\r\n\r\n`;
      const wire = `HTTP/1.${pick([0, 1])} 200 OK\r\n${fields.join('\r\n')}\r\n${body}`;
      // A body framed by the close is ended by the peer's FIN, as the connection would report it.
      const got = parse(wire, [], reused);
      reused.eof();
      const fresh = new ReplyParser();
      const want = parse(wire, [], fresh);
      fresh.eof();
      assert.deepEqual(got, want, `reply ${i}: ${JSON.stringify(wire)}`);
    }
  });

  test(`a head ending at ${MAX_HEAD_BYTES} bytes is read; one byte longer is refused`, () => {
    const head = (n: number) => {
      const start = `${OK}Content-Length: 0\r\nX-Pad: `;
      return `${start}${'p'.repeat(n - start.length)}\r\n\r\n`;
    };
    assert.equal(head(MAX_HEAD_BYTES).indexOf('\r\n\r\n'), MAX_HEAD_BYTES);
    assert.deepEqual(parse(head(MAX_HEAD_BYTES)).end, { reusable: true, timeout_s: null });
    assert.deepEqual(parse(head(MAX_HEAD_BYTES), [100, MAX_HEAD_BYTES - 1]).end, { reusable: true, timeout_s: null });
    assert.match(parse(head(MAX_HEAD_BYTES + 1)).malformed ?? '', /head larger than/);
    assert.match(parse(head(MAX_HEAD_BYTES + 1), [MAX_HEAD_BYTES + 1]).malformed ?? '', /head larger than/);
  });

  test('header names are matched in any case; Location and Content-Type read', () => {
    const o = parse('HTTP/1.1 307 Temporary Redirect\r\nLOCATION: http://elsewhere/\r\ncOnTeNt-TyPe: text/event-stream\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual(o.heads, [{ status: 307, contentType: 'text/event-stream', location: 'http://elsewhere/' }]);
  });
});

describe('HTTP/1.1 reply parser: malformed replies are refused, never guessed', () => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['no status line', 'HTTP/2 200\r\n\r\n', /status line/],
    ['a non-HTTP reply', 'SSH-2.0-OpenSSH_9.6\r\n\r\n', /status line/],
    ['a status that is not 3 digits', 'HTTP/1.1 2000 OK\r\n\r\n', /status line/],
    ['a control character in the reason', 'HTTP/1.1 200 O\x01K\r\n\r\n', /control character/],
    ['obsolete line folding', `${OK}X-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n`, /not a field/],
    ['a field without a colon', `${OK}Content-Length 5\r\n\r\n`, /not a field/],
    ['a space before the colon', `${OK}Content-Length : 5\r\n\r\n`, /not a field/],
    ['a bare LF inside a value', `${OK}X-A: 1\nX-B: 2\r\nContent-Length: 0\r\n\r\n`, /control character/],
    ['a NUL in a value', `${OK}X-A: a\x00b\r\nContent-Length: 0\r\n\r\n`, /control character/],
    ['a Content-Length that is not a number', `${OK}Content-Length: 5x\r\n\r\nhello`, /Content-Length is not a number/],
    ['a negative Content-Length', `${OK}Content-Length: -1\r\n\r\n`, /Content-Length is not a number/],
    ['an empty Content-Length', `${OK}Content-Length:\r\n\r\n`, /Content-Length is empty/],
    ['two different Content-Lengths', `${OK}Content-Length: 1\r\nContent-Length: 2\r\n\r\nxy`, /two different Content-Length/],
    ['Transfer-Encoding and Content-Length together', `${OK}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, /both Transfer-Encoding and Content-Length/],
    ['a chunk size that is not hex', `${OK}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, /chunk-size/],
    ['a chunk size too large', `${OK}Transfer-Encoding: chunked\r\n\r\n1000000000000\r\n`, /chunk-size/],
    ['a chunk not followed by CRLF', `${OK}Transfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n0\r\n\r\n`, /not followed by CRLF/],
    ['a chunk-size line ending in a bare LF', `${OK}Transfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n`, /chunk-size/],
    ['a bad trailer', `${OK}Transfer-Encoding: chunked\r\n\r\n0\r\nnot a field\r\n\r\n`, /trailer/],
    ['an upgrade nobody asked for', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', /101/],
  ];
  for (const [name, wire, why] of cases) {
    test(name, () => {
      const o = parse(wire);
      assert.match(o.malformed ?? '(accepted)', why);
      assert.equal(o.end, null, 'never ended as a reply');
    });
  }

  test(`a head larger than ${MAX_HEAD_BYTES} bytes, whole or arriving in pieces`, () => {
    const wire = `${OK}X-Big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\nContent-Length: 0\r\n\r\n`;
    assert.match(parse(wire).malformed ?? '', /head larger than/);
    assert.match(parse(wire, [100, 5000, 12000, 16000]).malformed ?? '', /head larger than/);
    // Without an end of head in sight the parser stops accumulating at the limit.
    assert.match(parse(`${OK}X-Big: ${'a'.repeat(MAX_HEAD_BYTES + 10)}`).malformed ?? '', /head larger than/);
  });

  test('endless chunk extensions and trailers are cut off', () => {
    assert.match(parse(`${OK}Transfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(5000)}`).malformed ?? '', /too long/);
    assert.match(parse(`${OK}Transfer-Encoding: chunked\r\n\r\n0\r\n${'X-T: v\r\n'.repeat(3000)}`).malformed ?? '', /trailers larger/);
  });
});
