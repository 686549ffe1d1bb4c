#!/usr/bin/env bash
# The Python side of the Harbor tests: a virtual environment with harbor (pinned in
# .ci/requirements-harbor.txt) and, once it exists, git-ledger's Harbor plugin
# (./harbor-plugin), in the build directory: ${CARGO_TARGET_DIR:-target}/harbor-venv, or
# $GIT_LEDGER_HARBOR_VENV. Harbor needs Python >= 3.12: $PYTHON, else python3.12 on PATH, else
# pyenv's 3.12.1. A second run is instant: the venv is rebuilt only when Python or the
# requirements change, the plugin reinstalled only when its files change (their SHA-256 are
# kept in the venv's stamp files). Prints the venv's path last.
# `--check`: build nothing; exit 0 (printing the path) when the venv is up to date, else 1.
set -euo pipefail
check_only=false
[ "${1:-}" = "--check" ] && check_only=true
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
venv="${GIT_LEDGER_HARBOR_VENV:-$target/harbor-venv}"
if [ -n "${PYTHON:-}" ]; then
  python="$PYTHON"
elif python3.12 --version >/dev/null 2>&1; then
  python=python3.12
elif [ -x /root/.pyenv/versions/3.12.1/bin/python ]; then
  python=/root/.pyenv/versions/3.12.1/bin/python
else
  python=python3
fi
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' || {
  echo "harbor needs Python >= 3.12; $python is $("$python" --version 2>&1) (set PYTHON)" >&2
  exit 1
}
stamp="$venv/git-ledger-stamp.sha256"
plugin_stamp="$venv/git-ledger-plugin-stamp.sha256"

want="$(
  cd "$root"
  {
    "$python" --version 2>&1
    sha256sum .ci/requirements-harbor.txt
  } | sha256sum | cut -d' ' -f1
)"
want_plugin="$(
  cd "$root"
  if [ -d harbor-plugin ]; then
    find harbor-plugin -type f ! -path '*/__pycache__/*' ! -path '*/build/*' ! -path '*.egg-info/*' \
      -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  fi | sha256sum | cut -d' ' -f1
)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/harbor" ]; then
  if [ -f "$plugin_stamp" ] && [ "$(cat "$plugin_stamp")" = "$want_plugin" ]; then
    echo "harbor venv up to date: $venv" >&2
    echo "$venv"
    exit 0
  fi
fi
if $check_only; then
  echo "harbor venv not up to date (or missing): $venv; build it with bash .ci/harbor-venv.sh" >&2
  exit 1
fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/harbor" ]; then
  : # only the plugin changed
else
  echo "building the harbor venv: $venv" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  # Exactly the pinned set, nothing resolved on the fly; `pip check` proves the set is whole.
  "$venv/bin/pip" install --quiet --no-deps -r "$root/.ci/requirements-harbor.txt"
  "$venv/bin/pip" check >&2
  echo "$want" >"$stamp"
fi
rm -f "$plugin_stamp"
if [ -d "$root/harbor-plugin" ]; then
  echo "installing git-ledger's Harbor plugin into $venv" >&2
  # The plugin, built from a copy so that the source tree gets no build/ or .egg-info.
  build="$(mktemp -d)"
  trap 'rm -rf "$build"' EXIT
  cp -r "$root/harbor-plugin" "$build/harbor-plugin"
  rm -rf "$build/harbor-plugin/build" "$build"/harbor-plugin/src/*.egg-info
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet --no-deps --no-build-isolation \
    --force-reinstall "$build/harbor-plugin"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("harbor", m.version("harbor"))' >&2
echo "$want_plugin" >"$plugin_stamp"
echo "$venv"
