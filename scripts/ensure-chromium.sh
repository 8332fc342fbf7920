#!/usr/bin/env bash
# Part of `npm test`: the HTML report is tested in real headless Chromium (Debian's package, driven by
# playwright-core). Installs it when missing and this user can (root with apt-get); otherwise says how.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "joulebench: installing Debian's chromium for the HTML report tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
else
  echo "joulebench: /usr/bin/chromium is missing: run 'sudo apt-get install -y chromium' (or set JOULEBENCH_SKIP_BROWSER=1 to skip the browser tests)" >&2
fi
