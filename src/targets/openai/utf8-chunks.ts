import { StringDecoder } from 'node:string_decoder';

/**
 * Decodes a byte stream arriving in chunks as UTF-8, exactly as one `StringDecoder('utf8')` fed every
 * chunk would (a character split across chunks is joined; a malformed sequence becomes U+FFFD). While
 * no chunk has ended inside a character (a stream's chunks end in `\n`, ASCII), each is decoded on its
 * own with `toString`, with no decoder made: a decoder is made, and then kept, only once a chunk ends
 * in a byte ≥ 0x80.
 */
export class Utf8Chunks {
  private decoder: StringDecoder | null = null;

  write(chunk: Buffer): string {
    if (this.decoder === null) {
      if (chunk.length === 0 || chunk[chunk.length - 1]! < 0x80) return chunk.toString('utf8');
      this.decoder = new StringDecoder('utf8');
    }
    return this.decoder.write(chunk);
  }

  /** The stream ended: what an incomplete last character becomes (U+FFFD), or ''. */
  end(): string {
    return this.decoder === null ? '' : this.decoder.end();
  }
}
