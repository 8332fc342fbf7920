import { randomBytes } from 'node:crypto';
import { dockerCall, dockerSaid, liveContainers, type DockerCall } from './docker-cli.js';
import type { TestRun } from './oracle.js';
import { patchedFiles, swebenchImage } from './swebench.js';
import type { CodeTask } from './task.js';
import { shellQuote } from './solvers/command.js';
import { REPORT_ENV, withReportEnv } from './test-report/setup.js';
import { commandRun, runTaskTests, type CommandRun } from './test-rule.js';
import { treeDiff } from './tree-diff.js';

/**
 * The docker runner for SWE-bench instances (docs/coding-agents.md): tests run in the instance's evaluation image,
 * the solver's changes reach it only as a diff; each phase gets a fresh confined container with no host mount.
 */

/** How the docker runner names images and confines containers. */
interface DockerRunnerOptions {
  /** The docker client executable. */
  bin: string;
  /** Image namespace (SWE-bench's `--namespace`, default `swebench`); `null`: locally built images, no namespace. */
  namespace: string | null;
  /** SWE-bench's `--instance_image_tag`, default `latest`. */
  tag: string;
  /** `x86_64` or `arm64`, as in SWE-bench's image names. */
  arch: string;
  /** Pull an image that is not present (needs a network); otherwise such a datapoint is invalid. */
  pull: boolean;
  /** `--memory` (and `--memory-swap`, so no swap) of each container, MiB. */
  memory_mb: number;
  /** `--pids-limit` of each container. */
  pids_limit: number;
}

/** Where SWE-bench images keep the repository. */
const CONTAINER_WORKDIR = '/testbed';

/** How an invalid reason starts when the instance's image is not there (the CLI counts these as "not available"). */
export const IMAGE_UNAVAILABLE = 'image not available: ';

/** Thrown when the datapoint cannot count: the image is missing or is not the instance's, or Docker itself failed. */
export class DatapointInvalid extends Error {}

/** Runs a task's baseline and grading tests in containers. */
export interface ContainerTests {
  readonly kind: 'docker';
  image(task: CodeTask): string;
  /** The image's id, once inspected (`null` before or when unknown). */
  imageId(task: CodeTask): string | null;
  baseline(task: CodeTask): Promise<TestRun>;
  /** Grades the tree the solver left (test files already restored), applied as a diff to a fresh `/testbed`. */
  grade(task: CodeTask, tree: string): Promise<TestRun>;
  describe(): { kind: 'docker' } & Record<string, unknown>;
}

/** The `docker run` flags every container gets (tested against the argv a fake docker saw). */
function containerFlags(o: Pick<DockerRunnerOptions, 'memory_mb' | 'pids_limit'>): string[] {
  return [
    '--pull', 'never',
    '--network', 'none',
    '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges',
    '--pids-limit', String(o.pids_limit),
    '--memory', `${o.memory_mb}m`,
    '--memory-swap', `${o.memory_mb}m`,
  ];
}

export function dockerRunner(opts: DockerRunnerOptions): ContainerTests {
  const ids = new Map<string, string | null>();
  const image = (task: CodeTask) => swebenchImage(instanceOf(task).instance_id, { namespace: opts.namespace, tag: opts.tag, arch: opts.arch });

  /** The image's id; throws DatapointInvalid when it is not present (and not pulled). */
  async function ensureImage(name: string): Promise<string> {
    const inspect = () => dockerCall(opts.bin, ['image', 'inspect', '--format', '{{.Id}}', name], { timeout_ms: 60_000 });
    let r = await inspect();
    if (r.code !== 0 && opts.pull) {
      const pulled = await dockerCall(opts.bin, ['pull', name], { timeout_ms: 3_600_000 });
      if (pulled.code !== 0) throw new DatapointInvalid(`${IMAGE_UNAVAILABLE}${name} is not present and docker pull failed (${dockerSaid(pulled)})`);
      r = await inspect();
    }
    if (r.code !== 0) {
      throw new DatapointInvalid(`${IMAGE_UNAVAILABLE}${name} is not present locally (${dockerSaid(r)}); docker pull it, or add --pull (nothing is pulled without it)`);
    }
    return r.stdout.trim();
  }

  /** Runs `fn` with a fresh container of the task's image, removed afterwards whatever happens. */
  async function withContainer<T>(task: CodeTask, phase: string, fn: (c: Container) => Promise<T>): Promise<T> {
    const img = image(task);
    ids.set(task.name, await ensureImage(img));
    const name = `joulebench-${instanceOf(task).instance_id.toLowerCase().replace(/[^a-z0-9_.-]/g, '_').slice(0, 80)}-${phase}-${randomBytes(6).toString('hex')}`;
    liveContainers.set(name, opts.bin);
    try {
      const run = await dockerCall(
        opts.bin,
        // The container's own process is a sleep as long as the phase may take: were joulebench killed
        // outright (no chance to remove it), the container still ends, and --rm removes it.
        ['run', '--detach', '--rm', '--name', name, '--label', 'joulebench.runner=docker', ...containerFlags(opts), '--entrypoint', 'sleep', img, String(phaseBudgetS(task))],
        { timeout_ms: 300_000 },
      );
      // Docker failing to start a container says nothing about the solver: the datapoint cannot count.
      if (run.code !== 0) throw new DatapointInvalid(`docker run ${img} failed (${dockerSaid(run)})`);
      return await fn(new Container(opts.bin, name));
    } finally {
      await dockerCall(opts.bin, ['rm', '--force', name], { timeout_ms: 120_000 });
      liveContainers.delete(name);
    }
  }

  return {
    kind: 'docker',
    image,
    imageId: (task) => ids.get(task.name) ?? null,
    baseline: (task) =>
      withContainer(task, 'baseline', async (c) => {
        const inst = instanceOf(task);
        const head = await c.exec('git rev-parse HEAD', { timeout_ms: 60_000 });
        if (head.code !== 0) throw new DatapointInvalid(`${image(task)}: ${CONTAINER_WORKDIR} is not a git checkout (${dockerSaid(head)})`);
        const at = head.stdout.trim();
        if (!at.startsWith(inst.base_commit)) {
          throw new DatapointInvalid(`${image(task)}: ${CONTAINER_WORKDIR} is at ${at.slice(0, 12)}, not the instance's base_commit ${inst.base_commit.slice(0, 12)}`);
        }
        const applied = await c.apply(inst.test_patch);
        if (applied.code !== 0) throw new DatapointInvalid(`test_patch does not apply in ${image(task)} (${dockerSaid(applied)})`);
        return runTaskTests(task, (cmd, n) => c.test(task, cmd, `baseline-${n}`));
      }),
    grade: (task, tree) => {
      const inst = instanceOf(task);
      // The files test_patch touches are the grader's: the solver's version of them never reaches the container.
      const diff = treeDiff(task.before_dir, tree, patchedFiles(inst.test_patch));
      return withContainer(task, 'grade', async (c) => {
        if (diff !== '') {
          const applied = await c.apply(diff);
          if (applied.code !== 0) throw new Error(`the solver's diff does not apply to ${CONTAINER_WORKDIR} in ${image(task)} (${dockerSaid(applied)})`);
        }
        const tests = await c.apply(inst.test_patch);
        if (tests.code !== 0) throw new Error(`test_patch does not apply after the solver's diff in ${image(task)} (${dockerSaid(tests)})`);
        return runTaskTests(task, (cmd, n) => c.test(task, cmd, `grade-${n}`));
      });
    },
    describe: () => ({
      kind: 'docker',
      image_naming: swebenchImage('<instance_id>', { namespace: opts.namespace, tag: opts.tag, arch: opts.arch }),
      pull: opts.pull,
      container: containerFlags(opts).join(' '),
      solver: 'runs in the local sandbox over base_commit; its diff is applied in the container',
    }),
  };
}

class Container {
  /** Set once the container was killed (a timeout): nothing more runs in it. */
  private dead = false;

  constructor(
    private readonly bin: string,
    private readonly name: string,
  ) {}

  /** `bash -c script` in /testbed, as the image's default user (SWE-bench's images: root, here without capabilities). */
  exec(script: string, o: { input?: string; timeout_ms: number }): Promise<DockerCall> {
    const args = ['exec', ...(o.input !== undefined ? ['--interactive'] : []), '--workdir', CONTAINER_WORKDIR, this.name, '/bin/bash', '-c', script];
    return dockerCall(this.bin, args, { ...(o.input !== undefined ? { input: o.input } : {}), timeout_ms: o.timeout_ms });
  }

  /** Applies a unified diff to /testbed, fed on stdin (no host folder is mounted). */
  apply(diff: string): Promise<DockerCall> {
    return this.exec('git apply --whitespace=nowarn -', { input: diff, timeout_ms: 300_000 });
  }

  /** One test command, report read from /tmp; a timeout removes the container (killing `docker exec` stops nothing), later tests time out. */
  async test(task: CodeTask, cmd: string, label: string): Promise<CommandRun> {
    if (this.dead) return { exit_code: null, timed_out: true, wall_ms: 0, report: null, output_tail: null };
    const reportPath = `/tmp/joulebench-report-${label}-${randomBytes(6).toString('hex')}.${task.test_format === 'tap' ? 'tap' : 'xml'}`;
    const r = await this.exec(`${reportExports(task, reportPath)}\n${cmd}`, { timeout_ms: task.test_timeout_s * 1000 });
    if (r.timed_out) {
      this.dead = true;
      await dockerCall(this.bin, ['rm', '--force', this.name], { timeout_ms: 120_000 });
    }
    if (r.spawn_error) throw new DatapointInvalid(`docker exec could not start (${r.spawn_error})`);
    let report: string | null = null;
    if (!this.dead) {
      const read = await this.exec(`cat ${shellQuote(reportPath)} && rm -f ${shellQuote(reportPath)}`, { timeout_ms: 120_000 });
      report = read.code === 0 ? read.stdout : null;
    }
    const output = `${r.stdout}${r.stderr ? `\n[stderr]\n${r.stderr}` : ''}`;
    return commandRun({ exit_code: r.code, timed_out: r.timed_out, wall_ms: r.wall_ms, report }, output, CONTAINER_WORKDIR);
  }
}

/** Shell lines that point the test command's report at `path`, added to what the image already sets. */
function reportExports(task: CodeTask, path: string): string {
  return Object.entries(withReportEnv(task.test_format, path, {}))
    .map(([k, v]) => (k === REPORT_ENV ? `export ${k}=${shellQuote(v ?? '')}` : `export ${k}="\${${k}:+\$${k} }"${shellQuote(v ?? '')}`))
    .join('\n');
}

/** The longest a phase may take, seconds: every test run at its limit, plus time for the patches. */
function phaseBudgetS(task: CodeTask): number {
  const runs = Math.max(1, new Set([...task.fail_to_pass, ...task.pass_to_pass]).size);
  return Math.ceil(runs * task.test_timeout_s + 900);
}

function instanceOf(task: CodeTask): NonNullable<CodeTask['swebench']> {
  if (!task.swebench) throw new Error(`${task.name}: the docker runner runs SWE-bench instances only`);
  return task.swebench;
}
