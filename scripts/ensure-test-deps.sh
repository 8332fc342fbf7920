#!/usr/bin/env bash
# Part of `npm test`: the Debian packages the tests use, installed when missing and this user can
# (root, or passwordless sudo, with apt-get); otherwise one line says how.
# - chromium: the HTML report is tested in real headless Chromium (driven by playwright-core).
# - bubblewrap: the sandbox `joulebench code` uses when it can (its bwrap cases skip without it).
# - redis-server: the queue tests (BullMQ) start a throwaway server on 127.0.0.1.
# - gcc (with libc6-dev): the amdsmi meter's tests compile a fake libamd_smi.so with `cc`.
# - python3: the sandbox attack test calls ptrace(2) through ctypes.
# - python3-pytest: a coding task graded from pytest's JUnit report (Debian's /usr/bin/python3).
set -uo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v cc >/dev/null 2>&1 && [ -f /usr/include/stdio.h ] || missing+=(gcc libc6-dev)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
if command -v apt-get >/dev/null 2>&1 && { [ -z "$SUDO" ] || sudo -n true 2>/dev/null; }; then
  echo "joulebench: installing ${missing[*]} for the tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}"; } >/dev/null 2>&1 \
    || echo "joulebench: could not install ${missing[*]}" >&2
else
  echo "joulebench: missing ${missing[*]}: install with 'sudo apt-get install -y ${missing[*]}' (JOULEBENCH_SKIP_BROWSER=1 skips the browser tests)" >&2
fi
exit 0
