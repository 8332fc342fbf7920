import assert from 'node:assert/strict';
import { it } from 'node:test';
import { SseChatReader } from '../../src/targets/openai/sse.js';

const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ choices: [{ delta }] })}\n\n`;

it('one token event per chunk: a chunk with reasoning and content counts once, as content (ITL gaps are per chunk)', () => {
  const r = new SseChatReader();
  const seen: string[] = [];
  r.onToken = (kind) => seen.push(kind);
  r.feed(chunk({ role: 'assistant', content: null }));
  r.feed(chunk({ reasoning_content: 'think' }));
  r.feed(chunk({ reasoning_content: 'more', content: 'Par' }));
  r.feed(chunk({ content: 'is' }));
  r.feed('data: [DONE]\n\n');
  assert.deepEqual(seen, ['reasoning', 'content', 'content']);
  assert.deepEqual(r.end(), { text: 'Paris' });
});
