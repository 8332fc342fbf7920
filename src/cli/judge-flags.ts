import { InvalidArgumentError, type Command } from 'commander';
import { DEFAULT_JUDGE_PASS } from '../session/judge-setup.js';

/** `--judge-pass`, `--judge-cache`, `--judge-meter`, `--judge-prompts`: shared by `run` and `rescore`. */
export function addJudgeFlags(cmd: Command): Command {
  return cmd
    .option('--judge-pass <score>', `a judged case is correct at a score (1–10) at or above this (default: judge.pass, else ${DEFAULT_JUDGE_PASS})`, passScore)
    .option('--judge-cache <file>', 'judgement cache JSONL (default: judge.cache, else $JOULEBENCH_HOME/judgements.jsonl)')
    .option('--judge-meter <name>', "meter opened around each judge request (default: the judge's own energy figure, else none)")
    .option('--judge-prompts <file>', "judge prompts in FastChat's judge_prompts.jsonl form, or builtin (default: judge.prompts, else judge_prompts.jsonl beside --data, else builtin)");
}

function passScore(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 1 || n > 10) throw new InvalidArgumentError(`must be a number from 1 to 10, got "${v}"`);
  return n;
}
