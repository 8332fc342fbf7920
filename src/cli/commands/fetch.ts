import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { join } from 'node:path';
import { fetchMmluJsonl } from '../../suites/mmlu-fetch.js';
import { fetchMtBench } from '../../suites/mt-bench-fetch.js';
import { writeFileEnsured, type CliIO } from '../io.js';
import { quote } from '../../core/one-line.js';

/** `joulebench fetch mmlu`: downloads the real MMLU set when a network exists (the loader never needs it). */
export function fetchCommand(io: CliIO): Command {
  return new Command('fetch')
    .description(
      'download a public dataset for a suite (mmlu: cais/mmlu as JSONL, for --suite mmlu --data; mt-bench: FastChat\'s question.jsonl and reference answers at a pinned commit, sha256-checked)',
    )
    .argument('<dataset>', 'mmlu or mt-bench')
    .option('--split <name>', 'test, validation or dev (mmlu)', 'test')
    .option('-o, --out <file>', 'where to write the JSONL (mmlu; default mmlu-test.jsonl), or the folder (mt-bench; default mt-bench)')
    .option('--api <url>', 'the rows API (default: the Hugging Face dataset viewer)')
    .action(async (dataset: string, flags: { split: string; out?: string; api?: string }) => {
      if (dataset === 'mt-bench') {
        const dir = flags.out ?? 'mt-bench';
        for (const f of await fetchMtBench()) {
          writeFileEnsured(join(dir, f.name), f.bytes.toString('utf8'));
          io.err(`wrote ${join(dir, f.name)} (sha256 ${f.sha256})\n`);
        }
        io.err(`run it: joulebench run --suite mt-bench --data ${join(dir, 'question.jsonl')} --references ${join(dir, 'reference.jsonl')} --config JUDGE.yaml\n`);
        return;
      }
      if (dataset !== 'mmlu') throw new JoulebenchError('E_USAGE', `fetch: unknown dataset ${quote(dataset)} (known: mmlu, mt-bench)`);
      flags.out ??= 'mmlu-test.jsonl';
      const text = await fetchMmluJsonl({ split: flags.split, ...(flags.api ? { api: flags.api } : {}) });
      writeFileEnsured(flags.out, text);
      io.err(`wrote ${text.split('\n').length - 1} questions to ${flags.out}\n`);
    });
}
