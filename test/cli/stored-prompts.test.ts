import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CaseResult, ResultsHeader } from '../../src/core/types.js';
import { casePrompt, resolvePrompts } from '../../src/report/case-prompts.js';
import { cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';

const KEY = 'sk-joulebench-prompts-SECRET-9c2e51';

/** A results file's header and case lines. */
function read(path: string): { text: string; header: ResultsHeader; cases: CaseResult[] } {
  const text = readFileSync(path, 'utf8');
  const lines = text.trim().split('\n').map((l) => JSON.parse(l) as { record: string });
  return { text, header: lines[0] as unknown as ResultsHeader, cases: lines.filter((l) => l.record === 'case') as unknown as CaseResult[] };
}

describe('prompts kept in the results file', () => {
  let server: LoadServer;
  let dir: string;
  before(async () => {
    server = await startLoadServer((prompt) => ({ ttft_ms: 1, tpot_ms: 1, tokens: 2, answer: prompt.split(' ')[1] ?? 'x' }));
    dir = mkdtempSync(join(tmpdir(), 'jb-prompts-'));
    const cases = [
      { id: 'one', prompt: 'say alpha "quoted"\nüñí', expected: 'alpha' },
      { id: 'two', prompt: 'say bravo', expected: 'bravo' },
      { id: 'conv', turns: ['say charlie', 'say delta'], expected: 'delta' },
    ];
    writeFileSync(join(dir, 's.jsonl'), cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = (): string[] => ['run', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--credentials-ref', 'env:JB_PROMPTS_KEY', '--no-history', '--no-idle', '-q'];
  const env = { JB_PROMPTS_KEY: KEY };

  it('a run keeps each prompt as sent (a conversation: its last request\'s messages), never the key; report FILE is the run\'s own report', async () => {
    const out = join(dir, 'text.json');
    const r = await cli([...base(), '--suite', join(dir, 's.jsonl'), '-o', out], { env });
    assert.equal(r.code, 0, r.stderr);
    const { text, header, cases } = read(join(dir, 'text.results.jsonl'));
    assert.equal(header.prompts, 'text');
    const byId = new Map(cases.map((c) => [c.case_id, c]));
    assert.equal(byId.get('one')!.prompt, 'say alpha "quoted"\nüñí');
    assert.equal(byId.get('two')!.prompt, 'say bravo');
    const conv = byId.get('conv')!;
    assert.equal(conv.turns?.length, 2);
    const last = server.seen.find((s) => s.prompt === 'say delta')!;
    assert.deepEqual(conv.prompt, last.messages, 'the messages the server was sent');
    assert.deepEqual(conv.prompt, [
      { role: 'user', content: 'say charlie' },
      { role: 'assistant', content: conv.turns![0]!.response },
      { role: 'user', content: 'say delta' },
    ]);
    assert.equal(casePrompt(header, conv, null).ok, true);
    // The key was sent (Authorization) and is in no file the run wrote.
    assert.ok(server.seen.length > 0);
    for (const f of ['text.json', 'text.results.jsonl', 'text.receipt.json']) {
      const body = readFileSync(join(dir, f), 'utf8');
      assert.equal(body.includes(KEY), false, `key in ${f}`);
      assert.doesNotMatch(body, /authorization|bearer/i, f);
    }
    assert.equal(text.includes(KEY), false);
    const rebuilt = await cli(['report', '--json', join(dir, 'text.results.jsonl')]);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.equal(rebuilt.stdout, readFileSync(out, 'utf8'), 'byte for byte');
  });

  it('--no-store-prompts keeps none and says so; a resume must say the same', async () => {
    const out = join(dir, 'none.json');
    const r = await cli([...base(), '--suite', join(dir, 's.jsonl'), '--no-store-prompts', '-o', out], { env });
    assert.equal(r.code, 0, r.stderr);
    const file = join(dir, 'none.results.jsonl');
    const { text, header, cases } = read(file);
    assert.equal(header.prompts, 'none');
    assert.equal(cases.length, 3);
    assert.ok(cases.every((c) => !('prompt' in c)));
    assert.equal(text.includes('say bravo'), false, 'no prompt text anywhere in the file');
    assert.deepEqual(casePrompt(header, cases[1]!, resolvePrompts(header, cases)), { ok: false, reason: 'prompts not stored: the run used --no-store-prompts' });

    // Interrupted after its first case: resuming without the flag would write prompts into a private file.
    const lines = text.trim().split('\n');
    writeFileSync(file, lines.slice(0, 2).join('\n') + '\n');
    const refused = await cli([...base(), '--suite', join(dir, 's.jsonl'), '--resume', file, '-o', out], { env });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /cannot resume: it was written with prompts none, this run's are text \(it was run with --no-store-prompts: give it again\)/);
    const resumed = await cli([...base(), '--suite', join(dir, 's.jsonl'), '--resume', file, '--no-store-prompts', '-o', out], { env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const again = read(file);
    assert.equal(again.cases.length, 3);
    assert.ok(again.cases.every((c) => !('prompt' in c)));
  });

  it('a file written before prompts were kept resumes as it began, without them', async () => {
    const file = join(dir, 'old.results.jsonl');
    const [head, first] = readFileSync(join(dir, 'text.results.jsonl'), 'utf8').split('\n').slice(0, 2).map((l) => JSON.parse(l) as Record<string, unknown>);
    delete head!.prompts;
    delete first!.prompt;
    writeFileSync(file, `${JSON.stringify(head)}\n${JSON.stringify(first)}\n`);
    const r = await cli([...base(), '--suite', join(dir, 's.jsonl'), '--resume', file, '-o', join(dir, 'old.json')], { env });
    assert.equal(r.code, 0, r.stderr);
    const { header, cases } = read(file);
    assert.equal(header.prompts, undefined);
    assert.equal(cases.length, 3);
    assert.ok(cases.every((c) => !('prompt' in c)));
  });

  it('a load run keeps each turn\'s messages as that request sent them', async () => {
    const out = join(dir, 'load.json');
    const r = await cli([...base(), '--suite', join(dir, 's.jsonl'), '--request-rate', 'inf', '--num-requests', '3', '--think-time-ms', '1', '-o', out], { env });
    assert.equal(r.code, 0, r.stderr);
    const { header, cases } = read(join(dir, 'load.results.jsonl'));
    assert.equal(header.prompts, 'text');
    const turns = cases.filter((c) => c.case_id === 'conv');
    assert.equal(turns.length, 2);
    assert.deepEqual(turns.map((t) => (t.prompt as { role: string }[]).map((m) => m.role)), [['user'], ['user', 'assistant', 'user']]);
    assert.equal(cases.find((c) => c.case_id === 'two')!.prompt, 'say bravo');
  });

  it('a bundled suite keeps an index: the prompts are read back from it by digest', async () => {
    const r = await cli(['run', '--suite', 'router', '--limit', '3', '--no-history', '--no-idle', '-q', '--results', join(dir, 'bundled.results.jsonl'), '-o', join(dir, 'bundled.json')]);
    assert.equal(r.code, 0, r.stderr);
    const { header, cases } = read(join(dir, 'bundled.results.jsonl'));
    assert.equal(header.prompts, 'index');
    assert.ok(cases.every((c) => !('prompt' in c)));
    const shown = casePrompt(header, cases[0]!, resolvePrompts(header, cases));
    assert.equal(shown.ok, true, JSON.stringify(shown));
    assert.ok(shown.ok && typeof shown.prompt === 'string' && shown.prompt.length > 0);
  });

  it('sweep --no-store-prompts keeps none in any arm\'s results; without it each arm keeps them', async () => {
    const plan = join(dir, 'plan.yaml');
    writeFileSync(plan, `name: p\nsuites: [${JSON.stringify(join(dir, 's.jsonl'))}]\narms:\n  - name: a\n    kind: echo\n  - name: b\n    kind: echo\n`);
    for (const [out, flags, want] of [['sweep-none', ['--no-store-prompts'], 'none'], ['sweep-text', [], 'text']] as const) {
      const r = await cli(['sweep', plan, '--out-dir', join(dir, out), '--no-history', '--no-idle', '--bootstrap', '0', '-q', ...flags]);
      assert.equal(r.code, 0, r.stderr);
      for (const f of ['a/s.results.jsonl', 'b/s.results.jsonl']) {
        const { header, cases } = read(join(dir, out, f));
        assert.equal(header.prompts, want, f);
        assert.equal(cases.every((c) => c.prompt !== undefined), want === 'text', f);
      }
    }
  });
});
