/** Reads an OpenAI chat-completions SSE stream, validated as strictly as a plain reply; linear in the stream's size. */
export class SseChatReader {
  /** Pieces of a line split across network chunks; joined when its newline arrives. */
  private partial: string[] = [];
  private readonly pieces: string[] = [];
  private done = false;
  private finishReason: string | null = null;
  private problem: string | null = null;
  private chunks = 0;
  /** The last `usage` object the stream sent, as sent (checked by the target: src/targets/usage.ts); `null` when none. */
  usage: unknown = null;
  /** Called once, when the first non-empty content piece arrives (the runner's TTFT). */
  onFirstContent: (() => void) | null = null;
  /** Called once for every chunk carrying output tokens: `content`, else `reasoning` (`delta.reasoning_content` / `delta.reasoning`). */
  onToken: ((kind: 'content' | 'reasoning') => void) | null = null;

  /** Feeds decoded text as it arrives. */
  feed(d: string): void {
    let start = 0;
    for (;;) {
      const nl = d.indexOf('\n', start);
      if (nl < 0) break;
      let line = d.slice(start, nl);
      if (this.partial.length > 0) {
        this.partial.push(line);
        line = this.partial.join('');
        this.partial = [];
      }
      this.onLine(line);
      start = nl + 1;
    }
    if (start < d.length) this.partial.push(d.slice(start));
  }

  /** The stream ended: the answer, or why the stream is not a valid reply. */
  end(): { text: string } | { error: string } {
    if (this.partial.length > 0) this.onLine(this.partial.splice(0).join(''));
    if (this.problem !== null) return { error: this.problem };
    if (this.chunks === 0 && !this.done) return { error: 'stream ended without any data chunk' };
    if (!this.done && this.finishReason === null) {
      const received = this.pieces.join('').length;
      return { error: `stream ended without [DONE] and without a finish_reason (${received} characters received: a truncated reply)` };
    }
    return { text: this.pieces.join('') };
  }

  private fail(why: string): void {
    if (this.problem === null) this.problem = why;
  }

  private onLine(line: string): void {
    if (this.done || this.problem !== null || !line.startsWith('data:')) return;
    // A CR before the newline is dropped by the trim.
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    this.chunks++;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return this.fail(`stream chunk ${this.chunks} is not valid JSON (${data.length} bytes)`);
    }
    if (chunk === null || typeof chunk !== 'object' || Array.isArray(chunk)) return this.fail(`stream chunk ${this.chunks} is not a JSON object`);
    const c = chunk as { choices?: unknown; usage?: unknown; error?: { message?: unknown } };
    if (c.error) return this.fail(`stream error: ${String(c.error.message ?? 'unknown')}`);
    const hasUsage = c.usage !== undefined && c.usage !== null;
    if (hasUsage) this.usage = c.usage;
    if (!('choices' in c)) return this.fail(`stream chunk ${this.chunks} has no choices`);
    if (!Array.isArray(c.choices)) return this.fail(`stream chunk ${this.chunks}: choices is not an array`);
    if (c.choices.length === 0) {
      // OpenAI's `include_usage` final chunk is the one chunk with an empty choices list.
      if (!hasUsage) return this.fail(`stream chunk ${this.chunks}: choices is empty (and the chunk carries no usage)`);
      return;
    }
    const choice = c.choices[0] as { delta?: unknown; finish_reason?: unknown } | null;
    if (choice === null || typeof choice !== 'object') return this.fail(`stream chunk ${this.chunks}: choices[0] is not an object`);
    if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    const delta = choice.delta as { content?: unknown; role?: unknown; reasoning_content?: unknown; reasoning?: unknown } | undefined | null;
    if (delta === undefined || delta === null) {
      if (this.finishReason === null) return this.fail(`stream chunk ${this.chunks}: choices[0] has no delta`);
      return;
    }
    if (typeof delta !== 'object') return this.fail(`stream chunk ${this.chunks}: choices[0].delta is not an object`);
    const thinking = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : typeof delta.reasoning === 'string' ? delta.reasoning : '';
    const content = delta.content;
    // One call a chunk (vLLM times chunks): a chunk with content as well is a content chunk.
    if (thinking.length > 0 && !(typeof content === 'string' && content.length > 0)) this.onToken?.('reasoning');
    if (content === undefined) return;
    if (content === null) {
      // Tolerated only where the protocol puts no text: the role announcement and the closing chunk.
      if (delta.role === undefined && typeof choice.finish_reason !== 'string' && thinking.length === 0) {
        return this.fail(`stream chunk ${this.chunks}: choices[0].delta.content is null`);
      }
      return;
    }
    if (typeof content !== 'string') return this.fail(`stream chunk ${this.chunks}: choices[0].delta.content is a ${typeof content}, not a string`);
    if (content.length > 0) {
      if (this.pieces.length === 0) this.onFirstContent?.();
      this.onToken?.('content');
      this.pieces.push(content);
    }
  }
}
