import { JoulebenchError } from '../core/errors.js';
import { fileHead } from './sweep-file.js';

/** A model's tokenizer (a GGUF file's vocabulary, through llama.cpp), for sizing load prompts in its tokens. */
export interface Tokenizer {
  path: string;
  count(text: string): number;
  /** The text of `text`'s first `n` tokens. */
  head(text: string, n: number): string;
}

const loaded = new Map<string, Tokenizer>();

/** Loads the vocabulary of the GGUF file at `path` (not its weights); E_USAGE naming the file when it cannot. */
export async function loadTokenizer(path: string): Promise<Tokenizer> {
  const had = loaded.get(path);
  if (had) return had;
  // Loaded here, not at the top: a report of a load run reads this module but never a tokenizer.
  const { firstLine, getLlamaInstance } = await import('../targets/llamacpp/binding.js');
  // Checked here so that a wrong file is one line, not llama.cpp's log.
  let magic: string;
  try {
    magic = fileHead(path, 4).toString('latin1');
  } catch (e) {
    throw new JoulebenchError('E_USAGE', `--tokenizer ${path}: ${firstLine(e)}`);
  }
  if (magic !== 'GGUF') throw new JoulebenchError('E_USAGE', `--tokenizer ${path}: not a GGUF file`);
  const llama = await getLlamaInstance(false);
  let model: Awaited<ReturnType<typeof llama.loadModel>>;
  try {
    model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  } catch (e) {
    throw new JoulebenchError('E_USAGE', `--tokenizer ${path}: llama.cpp cannot read its vocabulary (${firstLine(e)})`);
  }
  const t: Tokenizer = {
    path,
    count: (text) => model.tokenize(text).length,
    head: (text, n) => model.detokenize(model.tokenize(text).slice(0, n)),
  };
  loaded.set(path, t);
  return t;
}

/** The tokenizer {@link loadTokenizer} loaded from `path`. */
export function loadedTokenizer(path: string): Tokenizer {
  const t = loaded.get(path);
  if (!t) throw new JoulebenchError('E_USAGE', `--tokenizer ${path} is read by a load run itself, not by a queued sweep`);
  return t;
}

/**
 * `text` (at least `n` tokens) cut to a text of exactly `n` tokens where the tokenizer allows: a cut at a token
 * boundary can retokenize differently, so the cut is moved by the difference a few times.
 */
export function cutToTokens(t: Tokenizer, text: string, n: number): { text: string; tokens: number } {
  let cut = n;
  let best = { text, tokens: t.count(text) };
  for (let i = 0; i < 4 && best.tokens !== n; i++) {
    const s = t.head(text, cut);
    const k = t.count(s);
    if (Math.abs(k - n) < Math.abs(best.tokens - n)) best = { text: s, tokens: k };
    cut += n - k;
  }
  return best;
}
