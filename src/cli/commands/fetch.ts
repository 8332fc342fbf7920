import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { fetchMmluJsonl } from '../../suites/mmlu-fetch.js';
import { writeFileEnsured, type CliIO } from '../io.js';
import { quote } from '../../core/one-line.js';

/** `joulebench fetch mmlu`: downloads the real MMLU set when a network exists (the loader never needs it). */
export function fetchCommand(io: CliIO): Command {
  return new Command('fetch')
    .description('download a public dataset for a suite (mmlu: cais/mmlu as JSONL, for --suite mmlu --data; swebench-verified: the Verified split as Parquet, for joulebench code --suite)')
    .argument('<dataset>', 'mmlu or swebench-verified')
    .option('--split <name>', 'test, validation or dev', 'test')
    .option('-o, --out <file>', 'where to write the JSONL', 'mmlu-test.jsonl')
    .option('--api <url>', 'the rows API (default: the Hugging Face dataset viewer)')
    .option('--url <url>', 'swebench-verified: where to download the Parquet file from')
    .action(async (dataset: string, flags: { split: string; out: string; api?: string; url?: string }) => {
      if (dataset === 'swebench-verified') {
        // Lazy: only this dataset needs the Parquet reader.
        const { fetchSwebenchParquet } = await import('../../code/swebench.js');
        const { bytes, count } = await fetchSwebenchParquet(flags.url);
        const out = flags.out === 'mmlu-test.jsonl' ? 'swebench-verified.parquet' : flags.out;
        writeFileEnsured(out, bytes);
        io.err(`wrote ${count} SWE-bench Verified instances to ${out} (run: joulebench code --suite ${out} --repos DIR --test-cmd CMD)\n`);
        return;
      }
      if (dataset !== 'mmlu') throw new JoulebenchError('E_USAGE', `fetch: unknown dataset ${quote(dataset)} (known: mmlu, swebench-verified)`);
      const text = await fetchMmluJsonl({ split: flags.split, ...(flags.api ? { api: flags.api } : {}) });
      writeFileEnsured(flags.out, text);
      io.err(`wrote ${text.split('\n').length - 1} questions to ${flags.out}\n`);
    });
}
