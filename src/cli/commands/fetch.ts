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
      'download a public dataset (mmlu: cais/mmlu as JSONL, for --suite mmlu --data; mt-bench: FastChat\'s question.jsonl and reference answers at a pinned commit, sha256-checked; swebench-verified: the Verified split as Parquet, for joulebench code --suite)',
    )
    .argument('<dataset>', 'mmlu, mt-bench or swebench-verified')
    .option('--split <name>', 'test, validation or dev (mmlu)', 'test')
    .option('-o, --out <file>', 'where to write: the JSONL (mmlu; default mmlu-test.jsonl), the folder (mt-bench; default mt-bench), the Parquet file (swebench-verified)')
    .option('--api <url>', 'the rows API (default: the Hugging Face dataset viewer)')
    .option('--url <url>', 'swebench-verified: where to download the Parquet file from')
    .action(async (dataset: string, flags: { split: string; out?: string; api?: string; url?: string }) => {
      if (dataset === 'mt-bench') {
        const dir = flags.out ?? 'mt-bench';
        for (const f of await fetchMtBench()) {
          writeFileEnsured(join(dir, f.name), f.bytes.toString('utf8'));
          io.err(`wrote ${join(dir, f.name)} (sha256 ${f.sha256})\n`);
        }
        io.err(`run it: joulebench run --suite mt-bench --data ${join(dir, 'question.jsonl')} --references ${join(dir, 'reference.jsonl')} --config JUDGE.yaml\n`);
        return;
      }
      if (dataset === 'swebench-verified') {
        // Lazy: only this dataset needs the Parquet reader.
        const { fetchSwebenchParquet } = await import('../../code/swebench.js');
        const { bytes, count } = await fetchSwebenchParquet(flags.url);
        const out = flags.out ?? 'swebench-verified.parquet';
        writeFileEnsured(out, bytes);
        io.err(`wrote ${count} SWE-bench Verified instances to ${out} (run: joulebench code --suite ${out} --repos DIR --test-cmd CMD)\n`);
        return;
      }
      if (dataset !== 'mmlu') throw new JoulebenchError('E_USAGE', `fetch: unknown dataset ${quote(dataset)} (known: mmlu, mt-bench, swebench-verified)`);
      flags.out ??= 'mmlu-test.jsonl';
      const text = await fetchMmluJsonl({ split: flags.split, ...(flags.api ? { api: flags.api } : {}) });
      writeFileEnsured(flags.out, text);
      io.err(`wrote ${text.split('\n').length - 1} questions to ${flags.out}\n`);
    });
}
