import { StringDecoder } from 'node:string_decoder';

/** Decodes chunks as one `StringDecoder('utf8')` would, making the decoder only once a chunk ends inside a character. */
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
