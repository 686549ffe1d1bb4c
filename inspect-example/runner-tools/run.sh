#!/usr/bin/env bash
# The scripted run of the example Inspect campaign, from a clean checkout of the repository:
#   1. pin the draft to HEAD (the commit the run runs at), outside the tree;
#   2. git-ledger-inspect run: check readiness (HEAD is the declared revision, the tree clean,
#      the task's name, scorer, samples, epochs and limits as declared), run the arith task
#      (4 samples x 2 epochs) with Inspect, offline, on mockllm/model, with the hook importing
#      the log into a template ledger, and verify that every sample is in it; the runtime
#      identity is the venv's, written by the command (also kept as inspect-example/runtime.json);
#   3. copy the declaration and the log into inspect-example/ and import the log from there into
#      inspect-example/ledger.json (so the evidence refs name the committed log).
# Then commit inspect-example/{campaign.json,runtime.json,logs,ledger.json}.
# Nothing is written into the tree before the run: a new file would make Inspect record the
# revision as dirty (it counts untracked files), and a dirty revision is null in the ledger.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
ex=inspect-example
# GIT_LEDGER names the binary (GIT_LEDGER_BIN, the older name, is still read).
bin="${GIT_LEDGER:-${GIT_LEDGER_BIN:-git-ledger}}"
if [ -n "$(git status --porcelain)" ]; then
  echo "run.sh: the tree is not clean; commit first (the run must be at a clean commit)" >&2
  exit 1
fi
venv="$(bash .ci/inspect-venv.sh)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" pin "$ex/campaign.draft.json" --revision HEAD -o "$out/campaign.json"
"$bin" template "$out/campaign.json" >"$out/ledger.json"
"$venv/bin/git-ledger-inspect" runtime-identity -o "$out/runtime.json"
env -u GIT_LEDGER_REF -u GIT_LEDGER_DECLARATION HF_HUB_OFFLINE=1 INSPECT_DISPLAY=none GIT_LEDGER="$bin" \
  "$venv/bin/git-ledger-inspect" run --declaration "$out/campaign.json" --ledger "$out/ledger.json" \
  --runtime-identity "$out/runtime.json" -- \
  eval "$ex/task/arith.py@arith" --epochs 2 --token-limit 200 --log-dir "$out/logs"
cp "$out/campaign.json" "$out/runtime.json" "$ex/"
rm -rf "$ex/logs"
mkdir -p "$ex/logs"
cp "$out"/logs/*.eval "$ex/logs/"
"$bin" template "$ex/campaign.json" >"$ex/ledger.json"
$bin import "$ex/campaign.json" "$ex/ledger.json" --inspect "$ex/logs" \
  --runtime-identity "$ex/runtime.json"
$bin report "$ex/campaign.json" "$ex/ledger.json"
