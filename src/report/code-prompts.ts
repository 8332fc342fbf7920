import { existsSync } from 'node:fs';
import type { CodeResults } from '../code/results.js';
import { loadCodeSuite } from '../code/task.js';
import { digestChanged } from './case-prompts.js';

/** Each task's prompt (task.toml), read back only while the tasks hash to the run's suite digest. */
type CodePromptLookup = { ok: true; source: string; prompts: Record<string, string> } | { ok: false; reason: string };

export function resolveCodePrompts(suite: CodeResults['suite']): CodePromptLookup {
  if (/\.(jsonl|json|parquet)$/i.test(suite.source)) {
    return { ok: false, reason: `SWE-bench instances: each problem statement is in ${suite.source}, not read back here` };
  }
  const bundled = /^bundled suite "([^"]+)"$/.exec(suite.source)?.[1];
  const spec = bundled ?? suite.dir ?? suite.source;
  if (!bundled && !existsSync(spec)) return { ok: false, reason: `suite folder not found: ${spec}` };
  let loaded;
  try {
    loaded = loadCodeSuite(spec, suite.tasks);
  } catch {
    // Not the loader's message: it can quote task.toml, and the results file naming the folder may be someone else's.
    return { ok: false, reason: `suite does not load now: ${spec} (joulebench code --suite ${spec} says why)` };
  }
  if (loaded.digest !== suite.digest) {
    return { ok: false, reason: digestChanged(suite.digest, bundled ? suite.source : spec, loaded.digest) };
  }
  return { ok: true, source: bundled ? suite.source : spec, prompts: Object.fromEntries(loaded.tasks.map((t) => [t.name, t.prompt])) };
}
