import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { constantWriter, jsonStringBound, writeJsonNumber, writeJsonString, writeNull } from '../../src/core/json-bytes.js';

/** What a writer put in a fresh buffer, as text. */
function written(write: (buf: Uint8Array, o: number) => number, room = 4096): string {
  const buf = Buffer.alloc(room + 8, 0xff);
  const end = write(buf, 3); // an offset inside the buffer, as a results line has
  assert.ok(end <= room + 3, 'stayed within the room it was promised');
  return buf.toString('utf8', 3, end);
}

/** A small seeded generator, so a failure names a reproducible input. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('writeJsonString', () => {
  const tricky = [
    '',
    'plain ascii 123',
    'quote " and backslash \\',
    'controls \n\r\t\b\f\u0000\u001f',
    'DEL \u007f',
    'é ü ß — “quotes” €',
    'emoji 🙂 pair',
    'lone high \ud83d end',
    'lone low \ude42 end',
    '</script>',
    'x'.repeat(5000),
  ];
  for (const s of tricky) {
    it(`writes ${JSON.stringify(s.slice(0, 24))} exactly as JSON.stringify`, () => {
      assert.equal(written((b, o) => writeJsonString(b, o, s), jsonStringBound(s.length)), JSON.stringify(s));
    });
  }
  it('matches JSON.stringify on 2,000 random strings over the whole UTF-16 range', () => {
    const rand = prng(7);
    for (let n = 0; n < 2000; n++) {
      const len = Math.floor(rand() * (n % 2 === 0 ? 12 : 80));
      let s = '';
      for (let i = 0; i < len; i++) {
        const pick = rand();
        s += String.fromCharCode(pick < 0.6 ? 0x20 + Math.floor(rand() * 0x5f) : pick < 0.7 ? Math.floor(rand() * 0x20) : Math.floor(rand() * 0x10000));
      }
      assert.equal(written((b, o) => writeJsonString(b, o, s), jsonStringBound(s.length)), JSON.stringify(s), `string #${n}`);
    }
  });
});

describe('writeJsonString: escapes, UTF-8 and surrogates after printable ASCII', () => {
  it('matches JSON.stringify on 3,000 random strings dense in surrogates, controls and multi-byte characters', () => {
    const rand = prng(19);
    // Pairs, lone highs and lows in every position, controls, DEL, 2- and 3-byte characters, escapes.
    const units = [0xd83d, 0xde42, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x0a, 0x00, 0x1f, 0x08, 0x0c, 0x0d, 0x09, 0x7f, 0x80, 0x7ff, 0x800, 0xffff, 0xfffe, 0x22, 0x5c, 0x41, 0x20, 0x7e];
    for (let n = 0; n < 3000; n++) {
      const len = Math.floor(rand() * 24);
      let s = '';
      for (let i = 0; i < len; i++) s += String.fromCharCode(units[Math.floor(rand() * units.length)]!);
      // Every string also behind a printable prefix: the rest is written from where the copy stopped.
      for (const t of [s, `prefix ${s}`]) {
        assert.equal(written((b, o) => writeJsonString(b, o, t), jsonStringBound(t.length)), JSON.stringify(t), `string #${n}: ${JSON.stringify(t)}`);
      }
    }
  });
});

describe('writeJsonNumber', () => {
  const cases = [
    0, -0, 1, 7, 9, 10, 42, 1000, 999_999_999, 1e9, 123_456_789_012, -1, -0.5, 0.1, 0.001, 0.007, 0.000001, 1e-7, 2.5e-8,
    0.1 + 0.2, 1 / 3, 123456.789, 999999999.999999, 12.000001, 5e-324, 1e21, 1.7976931348623157e308, Number.MAX_SAFE_INTEGER,
  ];
  for (const n of cases) {
    it(`writes ${String(n)} exactly as JSON.stringify`, () => {
      assert.equal(written((b, o) => writeJsonNumber(b, o, n)), JSON.stringify(n));
    });
  }
  it('writes integers of every digit count, and fractions whose micro-units pass 2^31, as JSON.stringify', () => {
    // The int32 paths end at 2^31 (whole numbers) and at 1e9 (anything): each side of both edges.
    const edges = [
      9, 10, 99, 100, 999_999, 1_000_000, 99_999_999, 100_000_000, 999_999_999, 999_999_999.5, 1e9, 1e9 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1,
      2147.483647, 2147.483648, 2147.483649, 2147.48365, 4294.967296, 0.000009, 0.00001, 0.1, 0.999999, 1.000001, 999_999_999.000001,
    ];
    for (const n of edges) assert.equal(written((b, o) => writeJsonNumber(b, o, n)), JSON.stringify(n), `number ${n}`);
    const rand = prng(23);
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + (i % 10);
      const whole = Math.floor(rand() * 10 ** digits);
      const n = i % 2 === 0 ? whole : whole + Math.floor(rand() * 1e6) / 1e6;
      assert.equal(written((b, o) => writeJsonNumber(b, o, n)), JSON.stringify(n), `number ${n}`);
    }
  });
  it('writes NaN and ±Infinity as null, as JSON does', () => {
    for (const n of [NaN, Infinity, -Infinity]) assert.equal(written((b, o) => writeJsonNumber(b, o, n)), 'null');
  });
  it('matches JSON.stringify on 20,000 random micro-unit and arbitrary doubles', () => {
    const rand = prng(11);
    for (let i = 0; i < 20_000; i++) {
      const kind = i % 4;
      const n =
        kind === 0
          ? Math.round(rand() * 1e9) / 1e6 // joules from µJ
          : kind === 1
            ? Math.round(rand() * 1e8) / 1e3 // ms to three places
            : kind === 2
              ? rand() * 10 ** Math.floor(rand() * 12 - 3)
              : Math.floor(rand() * 1e6) / 10 ** Math.floor(rand() * 9);
      assert.equal(written((b, o) => writeJsonNumber(b, o, n)), JSON.stringify(n), `number ${n}`);
    }
  });
});

describe('constantWriter and writeNull', () => {
  it('write their text and return the offset after it', () => {
    assert.equal(written((b, o) => constantWriter(',"weight":')(b, o)), ',"weight":');
    assert.equal(written((b, o) => writeNull(b, o)), 'null');
  });
  it('writes any ASCII text of any length exactly (eight-, four- and one-byte stores, control characters included)', () => {
    const rand = prng(31);
    const texts = ['', 'a', '12345678', '{"record":"case","phase":', '\u0000'.repeat(16), '~'.repeat(24), '\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u000f'];
    for (let n = 0; n < 2000; n++) {
      let t = '';
      const len = Math.floor(rand() * 40);
      for (let i = 0; i < len; i++) t += String.fromCharCode(Math.floor(rand() * 0x7f));
      texts.push(t);
    }
    for (const t of texts) assert.equal(written((b, o) => constantWriter(t)(b, o)), t, JSON.stringify(t));
  });
  it('refuses text that is not ASCII (it would not be one byte a character)', () => {
    assert.throws(() => constantWriter('é'), /not ASCII/);
  });
});
