#!/bin/sh
# Run one fuzz target for 10 minutes, single job (see ARCHITECTURE.md, "Fuzzing").
# usage: fuzz/run.sh TARGET [SECONDS]
set -e
cd "$(dirname "$0")"
t=$1; secs=${2:-600}
mkdir -p corpus/$t logs
RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a -s none "$t" corpus/"$t" ../tests/fuzz_corpus/"$t" -- \
  -dict=json.dict -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
