#!/bin/sh
# Run this task's hidden tests against a working copy: ./run_hidden.sh [DIR]
# DIR defaults to seed/; it is the directory that holds weekcal.py.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
target=${1:-"$here/seed"}
TARGET=$(cd "$target" && pwd)
export TARGET
exec "${PYTHON:-python3}" -m pytest -q -p no:cacheprovider "$here/hidden_tests"
