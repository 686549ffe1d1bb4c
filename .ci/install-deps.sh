#!/usr/bin/env bash
# Tools the integration tests drive, from Debian's packages, installed only when missing:
#   chromium  - renders the HTML report headless (screenshot + DOM) in tests/cli/render.rs
#   man-db    - `man`, which `git ledger --help` runs (git help ledger) in tests/cli/shell.rs
#   bsdutils  - `script`, a pseudo-terminal for the colour test (normally already present)
#   sqlite3   - builds the example Arena store, as docs/guide/03-import.md shows (tests/cli/guide.rs)
#   jsonschema (PyPI, into the python3 on PATH) - Python's JSON Schema validator, the
#               cross-check of docs/schemas/ in tests/cli/schemas.rs (python_jsonschema_agrees)
#   util-linux, mount - `unshare` and `mount`: a read-only bind mount of an Arena store, for
#               tests/cli/inputs.rs when run as root (normally already present)
#   openssh-client - `ssh-keygen` (keys and signatures in tests/cli/signing.rs and guide page 10) and `ssh`
#   openssh-server - `sshd` on 127.0.0.1, the SSH push test in tests/cli/servers.rs
#   lighttpd  - the web server in front of `git http-backend`, the smart HTTP push test
#   python3, python3-venv - the venv .ci/inspect-venv.sh builds for the Inspect AI tests
# With CI set, those tests fail instead of skipping when a tool is missing.
set -euo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
man --version >/dev/null 2>&1 || need+=(man-db)
command -v script >/dev/null 2>&1 || need+=(bsdutils)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v mount >/dev/null 2>&1 || need+=(mount)
command -v ssh-keygen >/dev/null 2>&1 && command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
[ -x /usr/sbin/lighttpd ] || command -v lighttpd >/dev/null 2>&1 || need+=(lighttpd)
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)

if [ "${#need[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "installing: ${need[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
# sshd refuses to start as root without its privilege separation directory, which the
# package's service unit makes at boot (RuntimeDirectory=sshd); no sshd service is started.
if [ ! -d /run/sshd ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo install -d -m 0755 /run/sshd
fi
chromium --version 2>/dev/null || true
man --version

# The python3 on PATH (not necessarily Debian's) must import jsonschema.
if ! python3 -c 'import jsonschema' >/dev/null 2>&1; then
  echo "installing: jsonschema (PyPI)" >&2
  python3 -m pip install --quiet 'jsonschema==4.26.0'
fi

# The forge CI files' schema check (tests/cli/forge.rs): SchemaStore's GitHub workflow and
# GitLab CI schemas, as check-jsonschema vendors them (no network at test time).
if ! command -v check-jsonschema >/dev/null 2>&1; then
  echo "installing: check-jsonschema (PyPI)" >&2
  python3 -m pip install --quiet 'check-jsonschema==0.39.0'
fi
