import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jsonObjects, parseAgentOutput } from '../../src/code/agent-output.js';

describe('agent output parsing', () => {
  test('Claude Code result JSON: total_cost_usd and usage (cache tokens count as input)', () => {
    const out = JSON.stringify({
      type: 'result',
      subtype: 'success',
      total_cost_usd: 0.0421,
      usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 55 },
      result: 'done',
    });
    assert.deepEqual(parseAgentOutput(out, 'claude'), { cost_usd: 0.0421, prompt_tokens: 1110, completion_tokens: 55, parsed_from: 'claude:total_cost_usd' });
    assert.equal(parseAgentOutput(`log line\n${out}\n`, 'auto').cost_usd, 0.0421);
  });

  test('Codex JSONL: usage summed over turn.completed events, no cost', () => {
    const out = [
      { type: 'thread.started', thread_id: 't' },
      { type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 50, output_tokens: 7 } },
      { type: 'turn.completed', usage: { input_tokens: 200, cached_input_tokens: 0, output_tokens: 3 } },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n');
    assert.deepEqual(parseAgentOutput(out, 'codex'), { cost_usd: null, prompt_tokens: 300, completion_tokens: 10, parsed_from: 'codex:turn.completed' });
    assert.equal(parseAgentOutput(out).parsed_from, 'codex:turn.completed');
  });

  test('Gemini CLI JSON: tokens summed over models, thoughts billed as output', () => {
    const out = JSON.stringify({
      response: 'ok',
      stats: { models: { 'gemini-2.5-pro': { tokens: { prompt: 900, candidates: 20, thoughts: 5 } }, 'gemini-2.5-flash': { tokens: { prompt: 100, candidates: 1 } } } },
    });
    assert.deepEqual(parseAgentOutput(out, 'gemini'), { cost_usd: null, prompt_tokens: 1000, completion_tokens: 26, parsed_from: 'gemini:stats.models' });
  });

  test('Aider text: last session cost, tokens summed over messages', () => {
    const out = 'Tokens: 2.3k sent, 114 received. Cost: $0.0012 message, $0.0012 session.\nedit\nTokens: 1,500 sent, 86 received. Cost: $0.0030 message, $0.0042 session.\n';
    assert.deepEqual(parseAgentOutput(out, 'aider'), { cost_usd: 0.0042, prompt_tokens: 3800, completion_tokens: 200, parsed_from: 'aider:tokens-line' });
  });

  test('OpenAI-style usage with cost_usd keeps its tokens (the Claude rule no longer claims it)', () => {
    const out = JSON.stringify({
      cost_usd: 0.0031,
      usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 30 } },
    });
    assert.deepEqual(parseAgentOutput(`log\n${out}\n`), { cost_usd: 0.0031, prompt_tokens: 1200, completion_tokens: 80, parsed_from: 'generic:cost_usd/usage' });
  });

  test('nothing reported is null, never 0', () => {
    for (const out of ['', 'plain text', '{"response":"no stats"}', '[1,2]']) {
      assert.deepEqual(parseAgentOutput(out), { cost_usd: null, prompt_tokens: null, completion_tokens: null, parsed_from: null });
    }
    assert.equal(parseAgentOutput(JSON.stringify({ total_cost_usd: 1 }), 'gemini').cost_usd, null);
  });

  test('jsonObjects reads a whole document or object lines', () => {
    assert.equal(jsonObjects('{"a":1}').length, 1);
    assert.equal(jsonObjects('noise\n{"a":1}\n{bad\n{"b":2}').length, 2);
  });
});
