import { Command } from 'commander';
import { JoulebenchError } from '../../core/errors.js';
import { join } from 'node:path';
import { checkWriteDir } from '../../write-path.js';
import { checkOutputPath, writeOutputFile } from '../output-file.js';
import { fetchMmluJsonl } from '../../suites/mmlu-fetch.js';
import { fetchMtBench } from '../../suites/mt-bench-fetch.js';
import type { CliIO } from '../io.js';
import { quote } from '../../core/one-line.js';
import { DEFAULT_CATALOG_MODEL, MODEL_CATALOG, catalogModel } from '../../targets/llamacpp/catalog.js';
import { defaultModelPath } from '../../targets/llamacpp/default-model.js';
import { redactQuery } from '../../targets/openai/redact.js';

/** `joulebench fetch mmlu`: downloads the real MMLU set when a network exists (the loader never needs it). */
export function fetchCommand(io: CliIO): Command {
  return new Command('fetch')
    .description(
      'download a public dataset (mmlu: cais/mmlu as JSONL, for --suite mmlu --data; mt-bench: FastChat\'s question.jsonl, reference answers and judge prompts at a pinned commit, sha256-checked; swebench-verified: the Verified split as Parquet, for joulebench code --suite) or a GGUF model (model [NAME]: a pinned, sha256-checked file into $JOULEBENCH_HOME/models/default.gguf, the embedded default\'s neural stage)',
    )
    .argument('<dataset>', 'mmlu, mt-bench, swebench-verified or model')
    .argument('[name]', `model: which one (default ${DEFAULT_CATALOG_MODEL}; known: ${MODEL_CATALOG.map((m) => m.name).join(', ')})`)
    .option('--split <name>', 'test, validation or dev (mmlu)', 'test')
    .option(
      '-o, --out <file>',
      'where to write: the JSONL (mmlu; default mmlu-test.jsonl), the folder (mt-bench; default mt-bench), the Parquet file (swebench-verified), the GGUF file (model; default $JOULEBENCH_HOME/models/default.gguf)',
    )
    .option('--api <url>', 'the rows API (default: the Hugging Face dataset viewer)')
    .option('--url <url>', 'swebench-verified: where to download the Parquet file from; model: a GGUF of your own (needs --sha256)')
    .option('--sha256 <hex>', 'model: the sha256 the downloaded bytes must have (required with --url)')
    .action(async (dataset: string, name: string | undefined, flags: { split: string; out?: string; api?: string; url?: string; sha256?: string }) => {
      if (dataset === 'model') return fetchModel(io, name, flags);
      if (name !== undefined) throw new JoulebenchError('E_USAGE', `fetch ${dataset}: unexpected argument ${quote(name)} (a name is for fetch model)`);
      if (flags.sha256 !== undefined) throw new JoulebenchError('E_USAGE', '--sha256 applies to fetch model');
      if (dataset === 'mt-bench') {
        const dir = flags.out ?? 'mt-bench';
        checkWriteDir(dir, '--out');
        for (const f of await fetchMtBench()) {
          writeOutputFile(join(dir, f.name), f.bytes.toString('utf8'), 'output');
          io.err(`wrote ${join(dir, f.name)} (sha256 ${f.sha256})\n`);
        }
        io.err(`run it: joulebench run --suite mt-bench --data ${join(dir, 'question.jsonl')} --references ${join(dir, 'reference.jsonl')} --config JUDGE.yaml (the judge uses ${join(dir, 'judge_prompts.jsonl')}, FastChat's prompts)\n`);
        return;
      }
      if (dataset === 'swebench-verified') {
        // Lazy: only this dataset needs the Parquet reader.
        const { fetchSwebenchParquet } = await import('../../code/swebench.js');
        const out = flags.out ?? 'swebench-verified.parquet';
        checkOutputPath(out, '--out');
        const { bytes, count } = await fetchSwebenchParquet(flags.url);
        writeOutputFile(out, bytes, 'output');
        io.err(`wrote ${count} SWE-bench Verified instances to ${out} (run: joulebench code --suite ${out} --repos DIR --test-cmd CMD)\n`);
        return;
      }
      if (dataset !== 'mmlu') throw new JoulebenchError('E_USAGE', `fetch: unknown dataset ${quote(dataset)} (known: mmlu, mt-bench, swebench-verified, model)`);
      flags.out ??= 'mmlu-test.jsonl';
      checkOutputPath(flags.out, '--out');
      const text = await fetchMmluJsonl({ split: flags.split, ...(flags.api ? { api: flags.api } : {}) });
      writeOutputFile(flags.out, text, 'output');
      io.err(`wrote ${text.split('\n').length - 1} questions to ${flags.out}\n`);
    });
}

/** `joulebench fetch model [NAME]`: a pinned catalog model or `--url --sha256`, into `-o FILE` or `$JOULEBENCH_HOME/models/default.gguf`. */
async function fetchModel(io: CliIO, name: string | undefined, flags: { out?: string; url?: string; sha256?: string; api?: string }): Promise<void> {
  if (flags.api !== undefined) throw new JoulebenchError('E_USAGE', '--api applies to fetch mmlu');
  let url: string;
  let sha256: string;
  let bytes: number | null = null;
  if (flags.url !== undefined) {
    if (name !== undefined) throw new JoulebenchError('E_USAGE', `fetch model: give a NAME (${quote(name)}) or --url, not both`);
    if (flags.sha256 === undefined) throw new JoulebenchError('E_USAGE', 'fetch model --url needs --sha256 HEX: unverified bytes are never installed');
    url = flags.url;
    sha256 = flags.sha256;
  } else {
    const entry = catalogModel(name ?? DEFAULT_CATALOG_MODEL);
    if (!entry) throw new JoulebenchError('E_USAGE', `fetch model: unknown model ${quote(name ?? '')} (known: ${MODEL_CATALOG.map((m) => m.name).join(', ')}; or --url URL --sha256 HEX)`);
    const pinned = entry.sha256;
    if (pinned === null && flags.sha256 === undefined) {
      throw new JoulebenchError('E_USAGE', `fetch model ${entry.name}: no verifiable sha256 is pinned for it; pass --sha256 HEX to install it`);
    }
    if (pinned !== null && flags.sha256 !== undefined && flags.sha256.toLowerCase() !== pinned) {
      throw new JoulebenchError('E_USAGE', `fetch model ${entry.name}: --sha256 differs from the pinned ${pinned}; use --url for a different file`);
    }
    url = entry.url;
    sha256 = pinned ?? flags.sha256!;
    bytes = entry.bytes;
  }
  const dest = flags.out ?? defaultModelPath(process.env);
  const { downloadVerified } = await import('../../targets/llamacpp/download.js');
  let shown = false;
  const onProgress = io.errIsTTY
    ? (received: number, total: number | null): void => {
        shown = true;
        const pct = total ? ` (${Math.floor((100 * received) / total)}%)` : '';
        io.err(`\rfetch model: ${mb(received)}${total ? ` of ${mb(total)}` : ''}${pct}   `);
      }
    : undefined;
  if (!io.errIsTTY) io.err(`fetch model: downloading ${redactQuery(url)}\n`);
  try {
    const r = await downloadVerified({ url, sha256, bytes, dest, ...(onProgress ? { onProgress } : {}) });
    if (shown) io.err('\n');
    io.err(
      r.downloaded
        ? `wrote ${r.path} (${r.bytes} bytes, sha256 ${r.sha256} verified)\n`
        : `${r.path} is already there with sha256 ${r.sha256} (verified): not downloaded again\n`,
    );
    if (flags.out === undefined) io.err('the embedded default (npm start, joulebench run) now uses it as its neural stage\n');
  } catch (e) {
    if (shown) io.err('\n');
    throw e;
  }
}

function mb(n: number): string {
  return `${(n / 1e6).toFixed(1)} MB`;
}
