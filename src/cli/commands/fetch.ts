import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { fetchMmluJsonl } from '../../suites/mmlu-fetch.js';
import { writeFileEnsured, type CliIO } from '../io.js';
import { quote } from '../../core/one-line.js';

/** `joulebench fetch mmlu`: downloads the real MMLU set when a network exists (the loader never needs it). */
export function fetchCommand(io: CliIO): Command {
  return new Command('fetch')
    .description('download a public dataset for a suite (mmlu: cais/mmlu as JSONL, for --suite mmlu --data)')
    .argument('<dataset>', 'mmlu')
    .option('--split <name>', 'test, validation or dev', 'test')
    .option('-o, --out <file>', 'where to write the JSONL', 'mmlu-test.jsonl')
    .option('--api <url>', 'the rows API (default: the Hugging Face dataset viewer)')
    .action(async (dataset: string, flags: { split: string; out: string; api?: string }) => {
      if (dataset !== 'mmlu') throw new JoulebenchError('E_USAGE', `fetch: unknown dataset ${quote(dataset)} (known: mmlu)`);
      const text = await fetchMmluJsonl({ split: flags.split, ...(flags.api ? { api: flags.api } : {}) });
      writeFileEnsured(flags.out, text);
      io.err(`wrote ${text.split('\n').length - 1} questions to ${flags.out}\n`);
    });
}
