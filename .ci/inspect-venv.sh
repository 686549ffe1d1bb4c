#!/usr/bin/env bash
# The Python side of the Inspect tests: a virtual environment with inspect-ai (pinned in
# .ci/requirements-inspect.txt) and git-ledger's Inspect hook (./inspect-hook), in the build
# directory: ${CARGO_TARGET_DIR:-target}/inspect-venv, or $GIT_LEDGER_INSPECT_VENV.
# A second run is instant: the venv is rebuilt only when the requirements or the hook's files
# change (their SHA-256 is kept in the venv's stamp file). Prints the venv's path last.
# `--check`: build nothing; exit 0 (printing the path) when the venv is up to date, else 1.
set -euo pipefail
check_only=false
[ "${1:-}" = "--check" ] && check_only=true
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="${GIT_LEDGER_INSPECT_VENV:-$target/inspect-venv}"
python="${PYTHON:-python3}"
stamp="$venv/git-ledger-stamp.sha256"

want="$(
  cd "$root"
  {
    "$python" --version 2>&1
    sha256sum .ci/requirements-inspect.txt
    find inspect-hook -type f ! -path '*/__pycache__/*' ! -path '*/build/*' ! -path '*.egg-info/*' \
      -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/inspect" ]; then
  echo "inspect venv up to date: $venv" >&2
  echo "$venv"
  exit 0
fi
if $check_only; then
  echo "inspect venv not up to date (or missing): $venv; build it with bash .ci/inspect-venv.sh" >&2
  exit 1
fi

echo "building the inspect venv: $venv" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Exactly the pinned set, nothing resolved on the fly; `pip check` proves the set is whole.
"$venv/bin/pip" install --quiet --no-deps -r "$root/.ci/requirements-inspect.txt"
"$venv/bin/pip" check >&2
# The hook, built from a copy so that the source tree gets no build/ or .egg-info.
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cp -r "$root/inspect-hook" "$build/inspect-hook"
# A build/ left by a `pip install ./inspect-hook` elsewhere would be reused as it is (its copies
# are newer than the sources): build from the sources alone.
rm -rf "$build/inspect-hook/build" "$build"/inspect-hook/src/*.egg-info
"$venv/bin/pip" install --quiet --no-deps --no-build-isolation "$build/inspect-hook"
"$venv/bin/python" -c 'import inspect_ai, git_ledger_inspect; print("inspect_ai", inspect_ai.__version__)' >&2
echo "$want" >"$stamp"
echo "$venv"
