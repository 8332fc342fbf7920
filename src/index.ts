/** joulebench's public library API. The CLI uses exactly these. */
export type {
  Answer,
  AnswerRequest,
  Case,
  CaseResult,
  Energy,
  EnergySource,
  Phase,
  RecordedAnswer,
  ResultsHeader,
  Scorer,
  ScorerName,
  Stage,
  StageId,
  StageResult,
  Suite,
  StreamedSuite,
  CaseStream,
  Target,
  Usage,
  Verdict,
} from './core/types.js';
export { STAGE_IDS } from './core/types.js';
export { aggregate, type BenchReport, type DatasetSummary, type ReportContext } from './core/aggregate.js';
export { compare, type Comparison, type CompareSide } from './core/compare.js';
export { dominates, isComparable, paretoFront, paretoVerdicts, type Goal, type Objective, type ParetoPoint, type ParetoVerdict } from './core/pareto.js';
export { armFrontiers, rankedFrontier, FRONTIER_AXES, type Arm, type FrontierAxis, type FrontierReport, type RankedFrontier } from './core/frontier.js';
export { parseGate, checkGate, GATE_METRICS, type GateCondition, type GateFailure, type GateMetric, type GateOperator } from './core/gate.js';
export { canonicalJson, digestOf, prettyJson } from './core/canonical.js';
export { median, nearestRank, pctChange } from './core/stats.js';
export { JoulebenchError, isJoulebenchError, type ErrorCode } from './core/errors.js';
export { setInputLimits, inputLimits, DEFAULT_INPUT_LIMITS, type InputLimits } from './read-text.js';
export { escapeControls, oneLine, quote } from './core/one-line.js';
export { MAX_TIMER_MS, MAX_TIMER_S } from './core/bounds.js';
export type { EnergyReading, Meter, MeterProbe, MeterWindow } from './meters/meter.js';
export { createMeter, METERS } from './meters/registry.js';
export { createModelMeter } from './meters/model.js';
export type { MeterOptions, MeterFactory } from './meters/registry.js';
export { createRaplMeter, DEFAULT_POWERCAP_ROOT, type RaplOptions } from './meters/rapl/index.js';
export { listZones, selectDomains, type PowercapZone, type RaplDomain, type RaplSelection } from './meters/rapl/zones.js';
export { counterDelta } from './meters/rapl/counter.js';
export { createNvmlMeter, type NvmlOptions } from './meters/nvml/index.js';
export { NvmlError, type NvmlBinding } from './meters/nvml/binding.js';
export { visibleDevices } from './meters/nvml/visible.js';
export { createAmdSmiMeter, type AmdSmiOptions } from './meters/amdsmi/index.js';
export { AmdSmiError, loadAmdSmiBinding, type AmdSmiBinding } from './meters/amdsmi/binding.js';
export { rocmVisibleDevices } from './meters/amdsmi/visible.js';
export { createPowermetricsMeter, type PowermetricsOptions } from './meters/powermetrics/index.js';
export { parsePowerSample, PowermetricsParseError, type PowerSample } from './meters/powermetrics/parse.js';
export { ecologitsRequestEnergy, gpuCount, ECOLOGITS_VERSION, ECOLOGITS_COEFFICIENTS, H100_VLLM, DEFAULT_PUE, type Range, type ApiRequestInput } from './core/ecologits.js';
export { apiEnergyModel, type ApiEnergyModel, type EnergyModelConfig } from './energy-model/api-model.js';
export { lookupModelParams, MODEL_PARAMS, normalizeModelName } from './energy-model/params.js';
export { co2eOf, type Co2e, type GridIntensity } from './core/co2e.js';
export { parseGridIntensity, GRID_G_PER_KWH, GRID_SOURCE } from './energy-model/grid.js';
export { createEstimateMeter, type EstimateOptions } from './meters/estimate.js';
export { createCompositeMeter, combineReadings } from './meters/composite.js';
export { createAutoMeter, type AutoFallback, type AutoParts } from './meters/auto.js';
export { calibrateIdle, DEFAULT_IDLE_MS } from './meters/idle.js';
export { readCpuTimes, type CpuTimes } from './meters/cpu-time.js';
export { netBelowIdle, netJoules, type IdleCalibration, type IdleStatus, type SuiteWindow } from './core/energy.js';
export { measureCommand, type CommandMeasurement, type CommandDomain, type MeasureOptions } from './runner/measure-command.js';
export { SCORERS, getScorer } from './scorers/index.js';
export { loadSuite, loadSuiteFile, combine, BUNDLED_SUITES } from './suites/loader.js';
export { streamJsonlSuite, isStreamed, type JsonlStreamOptions } from './suites/jsonl-stream.js';
export { suiteDigest } from './suites/digest.js';
export { promptOf, FOLLOW_UP } from './suites/prompt.js';
export { run, configDigest, systemClock, type Clock, type RunEnergy, type RunOptions, type RunOutcome, type RunProgress } from './runner/run.js';
export { runSession, everyCaseFailed, defaultWarmup, buildSuite, buildTargetSpec, type SessionSpec, type InlineConfig, type SessionHooks, type SessionPaths, type SessionReport, type SessionResult, type TargetFlags } from './session/index.js';
export { JsonlResultsFile, MemorySink, truncateResultsFile, type ResultsSink } from './runner/results-file.js';
export { readResultsFile, parseResultsText, type ResultsFileContents } from './runner/results-stream.js';
export { readResumeFile, type ResumeFile } from './runner/resume-index.js';
export { createTarget, TARGETS, type TargetFactory, type TargetSpec } from './targets/registry.js';
export { Cascade } from './targets/cascade/cascade.js';
export { CacheStage, type CacheStageOptions } from './targets/cascade/cache.js';
export { KvStage } from './targets/cascade/kv.js';
export { GraphStage, type Triple } from './targets/cascade/graph.js';
export { NeuralStage } from './targets/cascade/neural.js';
export { createEchoTarget } from './targets/cascade/echo.js';
export { createReferenceCascade, REFERENCE_STAGE_ENERGY_UJ } from './targets/cascade/reference.js';
export { readReportFile } from './report/load.js';
export { History, defaultHistoryPath, historyKind, type HistoryEntry, type HistoryInput, type HistoryRun } from './report/history.js';
export { codeHistoryInput, inferHistoryInput } from './report/history-inputs.js';
export { parseRunId, type LoadedRun, type LoadedCode, type LoadedInfer, type ReportInput } from './report/inputs.js';
export { loadRuns, loadInputs } from './report/load-inputs.js';
export { inputsFrontier, codeArms, INFER_NOT_PLACED, type InputsFrontier, type NotPlacedArm } from './report/arms.js';
export { inferArmViews, type InferArmView } from './report/infer-view.js';
export { renderCodeMarkdown, renderInferMarkdown } from './report/markdown.js';
export { renderReportMarkdown, renderComparisonMarkdown, renderFrontierMarkdown } from './report/markdown.js';
export { buildHtmlReport, buildHtmlModel, renderHtmlPage, type HtmlModel } from './report/html/index.js';
export { loadCodeSuite, loadCodeTask, BUNDLED_CODE_SUITES, type CodeSuite, type CodeTask } from './code/task.js';
export { runDatapoint, type Datapoint, type OracleOptions, type TestRun } from './code/oracle.js';
export { runCodeSuite, DEFAULT_SOLVER_TIMEOUT_S, type CodeRunOptions, type CodeRunStart } from './code/run.js';
export { DatapointsFile, DATAPOINTS_FORMAT } from './code/datapoints-file.js';
export { summarizeSolvers, ENERGY_FRONTIER, USD_FRONTIER, type SolverSummary } from './code/aggregate.js';
export { readCodeResults, type CodeResults } from './code/results.js';
export { createSolver, createSolvers, splitSolverList, AGENT_PRESETS, SOLVER_NAMES, type AgentPreset } from './code/solvers/registry.js';
export type { Solver, SolveContext, SolveOutcome } from './code/solvers/solver.js';
export { parseAgentOutput, type AgentOutputFormat, type AgentUsage } from './code/agent-output.js';
export { resolveSandbox, bwrapSandbox, noSandbox, DEFAULT_MEMORY_MB, DEFAULT_MAX_PROCS, type Sandbox, type SandboxKind, type SandboxMode } from './code/sandbox.js';
export { loadSwebenchSuite, readSwebenchInstances, swebenchImage, type SwebenchInstance, type SwebenchOptions } from './code/swebench.js';
export { cascadeSolver, cacheKey } from './code/solvers/cascade.js';
export { scrubEnv, SECRET_NAME } from './code/env.js';
export { chooseCodeMeter, createNullMeter } from './code/energy.js';
export { execTree, type ExecTreeOptions, type ExecTreeResult } from './code/process.js';
export { renderCodeTable } from './report/code-table.js';
export { main } from './cli/main.js';
// Ollama target and `joulebench infer` (seed 004's counting rules).
export { OllamaClient, DEFAULT_OLLAMA_URL, parseParameterSize, type OllamaOptions, type OllamaTimings, type OllamaStreamResult, type OllamaPsModel } from './targets/ollama/client.js';
export { createOllamaTarget, ollamaOptionsFromSpec, ratePerS, type OllamaTargetOptions } from './targets/ollama/target.js';
export { runInfer, summariseFile, compareSnapshots, type InferOptions, type InferRunFile } from './infer/protocol.js';
export {
  armStats,
  checkPrefill,
  coldPrefillMedian,
  cachedPrefixRateMedian,
  decodeMedian,
  defaultPeakFlops,
  firstTokenNumbers,
  firstTokenRatios,
  spreadOverMedian,
  spreadOverWorst,
  summarise,
  threadSweep,
  SPREAD_OVER_MEDIAN,
  SPREAD_OVER_WORST,
  THREAD_TIE_FRACTION,
  type ArmStats,
  type InferSummary,
  type ThreadSweep,
} from './infer/stats.js';
export { toUtc, TransformCounter, LOCAL_OFFSET_TO_UTC } from './infer/utc.js';
export { peakForArm } from './infer/peak.js';
export { DEFAULT_INFER_PROMPT, promptSha256 } from './infer/prompt.js';
export { DEFAULT_GPU_SNAPSHOT_CMD, gpuSnapshot } from './infer/host.js';
export { readInferFile } from './infer/load.js';
export { InferJournal, readJournal, journalPathFor, identityMismatch, INFER_JOURNAL_FORMAT, type JournalIdentity, type JournalState } from './infer/journal.js';
export { renderInferTable } from './infer/table.js';
export type { InferArm, InferRun, InferPhase, ArmReceipts, Labelled, NamedRatio, MachinePeak, PlausibilityCheck } from './infer/types.js';
export { OpenAITarget, TargetFailure, checkEndpoint, type OpenAITargetOptions } from './targets/openai/target.js';
export { costOf, type Prices } from './targets/openai/cost.js';
export { isForbiddenAddress } from './targets/openai/guard.js';
export { backoffDelay_s, isRetryable, NO_RETRY, RETRY_DEFAULTS, type RetryPolicy, type FailureKind } from './targets/retry.js';
export { createReplayTarget, readRecordedAnswers, MissingAnswerError } from './targets/replay.js';
export { loadConfig, parseConfig, type LoadedConfig } from './config/load.js';
export { configSchema, type RunConfig } from './config/schema.js';
export { loadMmlu, mmluDigest, mmluPrompt, MMLU_LETTERS, readMmluRows, streamMmlu, type MmluOptions, type MmluRow, type MmluStreamOptions } from './suites/mmlu.js';
export { mmluMeasurements, MmluTally, type Measurement, type MeasurementBlock, type MeasurementClass } from './core/measurements.js';
export { fetchMmluJsonl, MMLU_ROWS_API, type FetchMmluOptions } from './suites/mmlu-fetch.js';
// ---- MT-Bench, the LLM judge, multi-turn ----
export type { ChatMessage, TurnResult } from './core/types.js';
export { loadMtBench, MT_BENCH_CATEGORIES, REFERENCE_CATEGORIES, type MtBenchOptions } from './suites/mt-bench.js';
export { fetchMtBench, MT_BENCH_FILES, MT_BENCH_COMMIT, type PinnedFile } from './suites/mt-bench-fetch.js';
export { Judge, type JudgeOptions, type JudgeOutcome } from './judge/judge.js';
export { JudgementCache, judgementKey, type CachedJudgement } from './judge/cache.js';
export { parseRating, parseChoice } from './judge/verdict.js';
export { promptHash, ratingPrompt, comparePrompt, JUDGE_MODES, type JudgeMode } from './judge/prompts.js';
export { readPromptSet, fastChatPrompt, promptSetHash, BUILTIN_PROMPTS, FASTCHAT_JUDGE_PROMPTS_SHA256, type PromptSet, type PromptSetLabel } from './judge/prompt-set.js';
export { summariseJudgments, type JudgmentsSummary, type LeaderboardRow } from './judge/fastchat-judgments.js';
export { judgeResults, judgePairwise, type JudgeTally, type PairVerdict, type CaseJudging } from './judge/score.js';
export { mtBenchBlock, pairwiseBlock, type MtBenchBlock, type MtBenchSlice, type PairwiseBlock, type JudgeInfo, type TurnScore } from './judge/summary.js';
export { judgeResultsFile, readResultsForSuite } from './judge/results-file.js';
// Deciding between systems: statistics, paired comparisons, sweeps.
export {
  wilson,
  mcnemar,
  bootstrapCi,
  bootstrapCis,
  ratioStatistic,
  meanStatistic,
  percentileStatistics,
  percentileInterval,
  ratioDeltaInterval,
  woodruffIntervals,
  pairedComparison,
  PairedColumns,
  reportCi,
  spreadOf,
  seededRng,
  normalQuantile,
  isInterval,
  DEFAULT_RESAMPLES,
  DEFAULT_BOOTSTRAP_MAX_UNITS,
  CI_FIGURES,
  type Interval,
  type IntervalMethod,
  type IntervalResult,
  type NoInterval,
  type McNemarResult,
  type BootstrapOptions,
  type ResampleStatistic,
  type PairedCase,
  type PairedComparison,
  type PairedFigure,
  type PairedOptions,
  type ReportCi,
  type CaseColumns,
  type Spread,
} from './stats/index.js';
export {
  passAtK,
  passHatK,
  passAtKCurve,
  resolutionUnderBudget,
  holmAdjust,
  adjustPValues,
  mcnemarSampleSize,
  pairedMeanSampleSize,
  powerPlan,
  pilotCasesOf,
  type PilotResult,
  type PassAtKPoint,
  type TaskRollouts,
  type PAdjust,
  type PilotCase,
  type PowerPlan,
  type PowerRow,
  studentTCdf,
  studentTQuantile,
  tInterval,
  pairedTInterval,
  coefficientOfVariation,
  type TInterval,
} from './stats/index.js';
export type { RepeatSpread } from './stats/repeat-spread.js';
export { withPairedStats, pairedCaseOf, verdictOf, type PairedComparisonReport, type PairedFields, type Significance } from './core/paired-compare.js';
export { runSweep as sweep, runSweep, resumeSweep, type SweepOptions, type SweepHooks, type SweepOutcome } from './sweep/run.js';
export { loadPlan, parsePlan, crossProduct, planDigest, planDifferences, armSessionSpec, type ExpandedPlan, type PlanArm } from './sweep/plan.js';
export { sweepComparison, type SweepComparison, type SweepArmRun, type SweepArmRow, type SweepFrontier, type SweepVsBaseline, type SweepSuiteComparison } from './sweep/comparison.js';
export { loadSweep, compareSweep, type LoadedSweep } from './sweep/load.js';
export { readSweepState, isSweepDir, type SweepState, type SweepRunEntry } from './sweep/state.js';
export { renderSweepTable } from './report/sweep-table.js';
