#!/usr/bin/env bash
# The scripted run of the example Inspect campaign, from a clean checkout of the repository:
#   1. run the arith task (4 samples x 2 epochs) with Inspect, offline, on mockllm/model;
#   2. pin the declaration to HEAD (the commit the run ran at);
#   3. write the runtime identity of the venv, copy the log into inspect-example/logs/ and
#      import it into a template ledger (inspect-example/ledger.json).
# Then commit inspect-example/{campaign.json,runtime.json,logs,ledger.json}.
# The log is written outside the tree first: a new file in the tree would make Inspect record
# the revision as dirty (it counts untracked files), and a dirty revision is null in the ledger.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
ex=inspect-example
bin="${GIT_LEDGER_BIN:-git-ledger}"
if [ -n "$(git status --porcelain)" ]; then
  echo "run.sh: the tree is not clean; commit first (the run must be at a clean commit)" >&2
  exit 1
fi
venv="$(bash .ci/inspect-venv.sh)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
env -u GIT_LEDGER_REF -u GIT_LEDGER_DECLARATION HF_HUB_OFFLINE=1 INSPECT_DISPLAY=none \
  "$venv/bin/inspect" eval "$ex/task/arith.py@arith" --epochs 2 --token-limit 200 \
  --log-dir "$out/logs"
"$bin" pin "$ex/campaign.draft.json" --revision HEAD -o "$ex/campaign.json"
"$bin" runtime-identity "$ex/campaign.json" --python "$venv/bin/python" -o "$ex/runtime.json"
rm -rf "$ex/logs"
mkdir -p "$ex/logs"
cp "$out"/logs/*.eval "$ex/logs/"
"$bin" template "$ex/campaign.json" >"$ex/ledger.json"
"$bin" import "$ex/campaign.json" "$ex/ledger.json" --inspect "$ex/logs" \
  --runtime-identity "$ex/runtime.json"
"$bin" report "$ex/campaign.json" "$ex/ledger.json"
