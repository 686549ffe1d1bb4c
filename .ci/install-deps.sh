#!/usr/bin/env bash
# Tools the integration tests drive, from Debian's packages, installed only when missing:
#   chromium  - renders the HTML report headless (screenshot + DOM) in tests/cli/render.rs
#   man-db    - `man`, which `git ledger --help` runs (git help ledger) in tests/cli/shell.rs
#   bsdutils  - `script`, a pseudo-terminal for the colour test (normally already present)
#   python3, python3-venv - the venv .ci/inspect-venv.sh builds for the Inspect AI tests
# With CI set, those tests fail instead of skipping when a tool is missing.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
man --version >/dev/null 2>&1 || need+=(man-db)
command -v script >/dev/null 2>&1 || need+=(bsdutils)
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)

if [ "${#need[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "installing: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
chromium --version 2>/dev/null || true
man --version
