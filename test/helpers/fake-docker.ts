import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A fake `docker` client for tests (no Docker engine runs on the development machines or on CI). It
 * implements only the commands the docker runner uses — `info`, `image inspect`, `pull`, `run`,
 * `exec`, `rm`, `kill` — over a folder: an image is `images/<name, URI-encoded>/` (its root file
 * system, e.g. `testbed/`), a container is a copy of it under `containers/<name>/rootfs`, `exec` runs
 * the command on this machine in the mapped `--workdir` in a process group of its own (recorded, so
 * `rm -f`/`kill` end it as the engine would, even after the client was killed), and every call's argv
 * is appended to `calls.log`. `FAKE_DOCKER_NO_ENGINE=1` makes it behave like a client with no engine,
 * `FAKE_DOCKER_RUN_FAIL=1` like an engine that cannot start containers.
 * Unknown commands and flags fail, so a change in what joulebench asks of Docker shows in the tests.
 */
const SCRIPT = String.raw`#!/bin/bash
root="${'$'}{FAKE_DOCKER_ROOT:?FAKE_DOCKER_ROOT is not set}"
{ printf '%s\x1f' "$@"; printf '\x1e\n'; } >> "$root/calls.log"
enc() { local s="${'$'}{1//\//%2F}"; printf '%s' "${'$'}{s//:/%3A}"; }
nosuch() { echo "Error response from daemon: No such container: $1" >&2; exit 1; }
killall_in() { local c="$root/containers/$1"; [ -f "$c/pids" ] || return 0; while read -r p; do kill -KILL -- "-$p" 2>/dev/null; done < "$c/pids"; }
if [ "$FAKE_DOCKER_NO_ENGINE" = 1 ] && [ "$1" != "--version" ]; then
  echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1
fi
cmd="$1"; shift
case "$cmd" in
  info) echo "27.0.0-fake"; exit 0 ;;
  image)
    [ "$1" = inspect ] || { echo "fake docker: image $1: not implemented" >&2; exit 125; }
    shift; [ "$1" = --format ] && shift 2
    if [ -d "$root/images/$(enc "$1")" ]; then printf 'sha256:%s\n' "$(printf '%s' "$1" | sha256sum | cut -c1-64)"; exit 0; fi
    echo "Error response from daemon: No such image: $1" >&2; exit 1 ;;
  pull)
    echo "Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host" >&2; exit 1 ;;
  run)
    name=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --detach|-d|--rm|--interactive|-i|--init|--read-only) shift ;;
        --name) name="$2"; shift 2 ;;
        --label|--pull|--network|--cap-drop|--cap-add|--security-opt|--pids-limit|--memory|--memory-swap|--entrypoint|--user|-u|--workdir|-w|--env|-e|--volume|-v|--mount|--tmpfs) shift 2 ;;
        -*) echo "fake docker: run: unknown flag: $1" >&2; exit 125 ;;
        *) break ;;
      esac
    done
    [ "$FAKE_DOCKER_RUN_FAIL" = 1 ] && { echo "docker: Error response from daemon: failed to create task for container: OCI runtime create failed" >&2; exit 125; }
    img="$1"; src="$root/images/$(enc "$img")"
    [ -d "$src" ] || { echo "docker: Error response from daemon: No such image: $img" >&2; exit 125; }
    [ -n "$name" ] || { echo "fake docker: run without --name" >&2; exit 125; }
    c="$root/containers/$name"
    [ -e "$c" ] && { echo "docker: Error response from daemon: Conflict. The container name \"/$name\" is already in use." >&2; exit 125; }
    mkdir -p "$c" && cp -a "$src" "$c/rootfs" && : > "$c/pids"
    printf '%s\n' "$(printf '%s' "$name" | sha256sum | cut -c1-64)"; exit 0 ;;
  exec)
    wd=/; input=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --interactive|-i) input=1; shift ;;
        --workdir|-w) wd="$2"; shift 2 ;;
        -*) echo "fake docker: exec: unknown flag: $1" >&2; exit 125 ;;
        *) break ;;
      esac
    done
    name="$1"; shift; c="$root/containers/$name"
    [ -d "$c" ] || nosuch "$name"
    case "$wd" in /*) ;; *) echo "fake docker: exec: --workdir must be absolute" >&2; exit 125 ;; esac
    set -m
    if [ "$input" = 1 ]; then
      ( cd "$c/rootfs$wd" && exec env -i PATH="$PATH" HOME=/root "$@" ) <&0 &
    else
      ( cd "$c/rootfs$wd" && exec env -i PATH="$PATH" HOME=/root "$@" ) < /dev/null &
    fi
    pid=$!; echo "$pid" >> "$c/pids"
    wait "$pid"; exit $? ;;
  rm)
    [ "$1" = --force ] || [ "$1" = -f ] || { echo "fake docker: rm without --force is not used" >&2; exit 125; }
    name="$2"; [ -d "$root/containers/$name" ] || nosuch "$name"
    killall_in "$name"; rm -rf "$root/containers/$name"; echo "$name"; exit 0 ;;
  kill)
    [ -d "$root/containers/$1" ] || nosuch "$1"
    killall_in "$1"; echo "$1"; exit 0 ;;
  *) echo "fake docker: $cmd: not implemented" >&2; exit 125 ;;
esac
`;

/** A fake docker under `dir`: the executable's path and helpers to build images and read what it was asked. */
export interface FakeDocker {
  bin: string;
  root: string;
  /** Env for a joulebench run that uses it. */
  env: Record<string, string>;
  /** Makes `image` exist, its root file system a copy of `rootfs`. */
  addImage(image: string, rootfs: string): void;
  /** Every call's argv, in order. */
  calls(): string[][];
  /** Containers that still exist. */
  containers(): string[];
}

export function fakeDocker(dir: string): FakeDocker {
  const root = join(dir, 'fake-docker');
  mkdirSync(join(root, 'images'), { recursive: true });
  mkdirSync(join(root, 'containers'), { recursive: true });
  const bin = join(root, 'docker');
  writeFileSync(bin, SCRIPT);
  chmodSync(bin, 0o755);
  return {
    bin,
    root,
    env: { JOULEBENCH_DOCKER_BIN: bin, FAKE_DOCKER_ROOT: root },
    addImage(image, rootfs) {
      cpSync(rootfs, join(root, 'images', encodeURIComponent(image)), { recursive: true, verbatimSymlinks: true });
    },
    calls() {
      const log = join(root, 'calls.log');
      if (!existsSync(log)) return [];
      return readFileSync(log, 'utf8')
        .split('\x1e\n')
        .filter((l) => l !== '')
        .map((l) => l.split('\x1f').slice(0, -1));
    },
    containers() {
      return readdirSync(join(root, 'containers'));
    },
  };
}
