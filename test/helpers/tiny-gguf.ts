import { writeFileSync } from 'node:fs';

/**
 * Writes a tiny llama-architecture GGUF (format v3) for tests: random F32 weights, a SentencePiece-style
 * vocabulary (control tokens, the 256 byte tokens `<0x00>`…`<0xFF>`, and a few word pieces) and a
 * `tokenizer.chat_template`, so llama.cpp loads it and generates (nonsense) tokens in milliseconds.
 * Written from the GGUF specification (ggml/docs/gguf.md); nothing is downloaded.
 */
export interface TinyGgufOptions {
  layers?: number;
  /** Embedding width; must be a multiple of `heads`. */
  width?: number;
  heads?: number;
  ffn?: number;
  context?: number;
  /** Seed of the weight generator: the same seed writes the same bytes. */
  seed?: number;
  /** Set false to leave out `tokenizer.chat_template`. */
  chatTemplate?: string | false;
}

/** A ChatML-like template in Jinja, as GGUF files carry it. */
export const TINY_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";

const GGUF_TYPE = { UINT32: 4, INT32: 5, FLOAT32: 6, STRING: 8, ARRAY: 9 } as const;
const GGML_F32 = 0;
const ALIGN = 32;

type Value =
  | { t: 'u32'; v: number }
  | { t: 'f32'; v: number }
  | { t: 'str'; v: string }
  | { t: 'strs'; v: string[] }
  | { t: 'f32s'; v: number[] }
  | { t: 'i32s'; v: number[] };

class Bytes {
  private parts: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  concat(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function writeValue(out: Bytes, value: Value): void {
  switch (value.t) {
    case 'u32':
      out.u32(GGUF_TYPE.UINT32);
      out.u32(value.v);
      return;
    case 'f32':
      out.u32(GGUF_TYPE.FLOAT32);
      out.f32(value.v);
      return;
    case 'str':
      out.u32(GGUF_TYPE.STRING);
      out.str(value.v);
      return;
    case 'strs':
      out.u32(GGUF_TYPE.ARRAY);
      out.u32(GGUF_TYPE.STRING);
      out.u64(value.v.length);
      for (const s of value.v) out.str(s);
      return;
    case 'f32s':
      out.u32(GGUF_TYPE.ARRAY);
      out.u32(GGUF_TYPE.FLOAT32);
      out.u64(value.v.length);
      for (const n of value.v) out.f32(n);
      return;
    case 'i32s':
      out.u32(GGUF_TYPE.ARRAY);
      out.u32(GGUF_TYPE.INT32);
      out.u64(value.v.length);
      for (const n of value.v) out.i32(n);
      return;
  }
}

/** The vocabulary: `<unk>`, `<s>`, `</s>`, 256 byte tokens, then word pieces (SentencePiece token types). */
function vocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  const pieces = ['▁'];
  for (const c of 'abcdefghijklmnopqrstuvwxyz') pieces.push(c, `▁${c}`);
  for (const c of '0123456789') pieces.push(c);
  for (const p of pieces) {
    tokens.push(p);
    types.push(1);
  }
  const scores = tokens.map((_, i) => (types[i] === 1 ? -i : 0));
  return { tokens, scores, types };
}

/** A small deterministic PRNG (mulberry32) for the weights. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The GGUF bytes of a tiny llama model. */
export function tinyLlamaGguf(opts: TinyGgufOptions = {}): Buffer {
  const layers = opts.layers ?? 2;
  const width = opts.width ?? 64;
  const heads = opts.heads ?? 4;
  const ffn = opts.ffn ?? 128;
  const context = opts.context ?? 2048;
  const vocab = vocabulary();
  const nVocab = vocab.tokens.length;
  const random = rng(opts.seed ?? 1);

  const kv: [string, Value][] = [
    ['general.architecture', { t: 'str', v: 'llama' }],
    ['general.name', { t: 'str', v: 'joulebench-tiny-test' }],
    ['general.alignment', { t: 'u32', v: ALIGN }],
    ['llama.context_length', { t: 'u32', v: context }],
    ['llama.embedding_length', { t: 'u32', v: width }],
    ['llama.block_count', { t: 'u32', v: layers }],
    ['llama.feed_forward_length', { t: 'u32', v: ffn }],
    ['llama.attention.head_count', { t: 'u32', v: heads }],
    ['llama.attention.head_count_kv', { t: 'u32', v: heads }],
    ['llama.rope.dimension_count', { t: 'u32', v: width / heads }],
    ['llama.attention.layer_norm_rms_epsilon', { t: 'f32', v: 1e-5 }],
    ['tokenizer.ggml.model', { t: 'str', v: 'llama' }],
    ['tokenizer.ggml.tokens', { t: 'strs', v: vocab.tokens }],
    ['tokenizer.ggml.scores', { t: 'f32s', v: vocab.scores }],
    ['tokenizer.ggml.token_type', { t: 'i32s', v: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { t: 'u32', v: 0 }],
    ['tokenizer.ggml.bos_token_id', { t: 'u32', v: 1 }],
    ['tokenizer.ggml.eos_token_id', { t: 'u32', v: 2 }],
  ];
  const template = opts.chatTemplate ?? TINY_CHAT_TEMPLATE;
  if (template !== false) kv.push(['tokenizer.chat_template', { t: 'str', v: template }]);

  // ggml dimension order: ne[0] is the input (innermost) dimension.
  const tensors: { name: string; dims: number[]; norm: boolean }[] = [
    { name: 'token_embd.weight', dims: [width, nVocab], norm: false },
    { name: 'output_norm.weight', dims: [width], norm: true },
    { name: 'output.weight', dims: [width, nVocab], norm: false },
  ];
  for (let l = 0; l < layers; l++) {
    const p = `blk.${l}.`;
    tensors.push(
      { name: `${p}attn_norm.weight`, dims: [width], norm: true },
      { name: `${p}attn_q.weight`, dims: [width, width], norm: false },
      { name: `${p}attn_k.weight`, dims: [width, width], norm: false },
      { name: `${p}attn_v.weight`, dims: [width, width], norm: false },
      { name: `${p}attn_output.weight`, dims: [width, width], norm: false },
      { name: `${p}ffn_norm.weight`, dims: [width], norm: true },
      { name: `${p}ffn_gate.weight`, dims: [width, ffn], norm: false },
      { name: `${p}ffn_down.weight`, dims: [ffn, width], norm: false },
      { name: `${p}ffn_up.weight`, dims: [width, ffn], norm: false },
    );
  }

  const head = new Bytes();
  head.push(Buffer.from('GGUF', 'ascii'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(kv.length);
  for (const [key, value] of kv) {
    head.str(key);
    writeValue(head, value);
  }
  const data: Buffer[] = [];
  let offset = 0;
  for (const t of tensors) {
    const count = t.dims.reduce((a, b) => a * b, 1);
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(GGML_F32);
    head.u64(offset);
    const buf = Buffer.alloc(Math.ceil((count * 4) / ALIGN) * ALIGN);
    const scale = 1 / Math.sqrt(t.dims[0]!);
    for (let i = 0; i < count; i++) buf.writeFloatLE(t.norm ? 1 : (random() * 2 - 1) * scale, i * 4);
    data.push(buf);
    offset += buf.length;
  }
  const headBytes = head.concat();
  const pad = Buffer.alloc((ALIGN - (headBytes.length % ALIGN)) % ALIGN);
  return Buffer.concat([headBytes, pad, ...data]);
}

/** Writes the tiny model to `path`. */
export function writeTinyGguf(path: string, opts: TinyGgufOptions = {}): void {
  writeFileSync(path, tinyLlamaGguf(opts));
}
