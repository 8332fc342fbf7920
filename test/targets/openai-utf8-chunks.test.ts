import assert from 'node:assert/strict';
import { StringDecoder } from 'node:string_decoder';
import { test } from 'node:test';
import { Utf8Chunks } from '../../src/targets/openai/utf8-chunks.js';

// The stream reader decodes each chunk on its own while chunks end in ASCII, and only then makes a
// StringDecoder: the text must be exactly what one StringDecoder fed every chunk gives, whatever the
// bytes (characters split across chunks, malformed and truncated sequences, lone continuation bytes).
test('Utf8Chunks gives exactly what one StringDecoder gives, on random chunked bytes', () => {
  let seed = 19;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const pieces = [Buffer.from('data: {"a":"b"}\n'), Buffer.from('é'), Buffer.from('漢'), Buffer.from('😀'), Buffer.from([0x80]), Buffer.from([0xc3]), Buffer.from([0xe6, 0xbc]), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\n')];
  let decodersMade = 0;
  for (let round = 0; round < 3000; round++) {
    const bytes = Buffer.concat(Array.from({ length: 1 + rand(12) }, () => pieces[rand(pieces.length)]!));
    const cuts = Array.from({ length: rand(4) }, () => rand(bytes.length + 1)).sort((a, b) => a - b);
    const chunks = [...cuts, bytes.length].map((c, i, a) => bytes.subarray(i === 0 ? 0 : a[i - 1]!, c));
    const ours = new Utf8Chunks();
    const node = new StringDecoder('utf8');
    const a = chunks.map((c) => ours.write(c)).join('') + ours.end();
    const b = chunks.map((c) => node.write(c)).join('') + node.end();
    assert.equal(a, b, `bytes ${bytes.toString('hex')} cut at ${cuts.join(',')}`);
    if ((ours as unknown as { decoder: unknown }).decoder !== null) decodersMade++;
  }
  // Both paths ran: chunks ending in ASCII (no decoder) and chunks ending inside a character.
  assert.ok(decodersMade > 300 && decodersMade < 2700, `${decodersMade} of 3000 rounds made a decoder`);
});
