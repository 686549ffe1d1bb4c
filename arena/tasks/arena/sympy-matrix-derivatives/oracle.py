#!/usr/bin/env python3
"""Oracle for the Arena case sympy-matrix-derivatives.

Usage: python3 oracle.py [TARGET]

Runs each required upstream check (a pytest node id under hidden_tests/)
against the working copy TARGET (default: this case's seed/) and prints a
JSON list of {"name", "ok"} sorted by name. The exit status is 0 only when
every check passed. The whole run is bounded by the case's oracle limit
(120 s); a check still running at the deadline counts as failed.
"""

import json
import os
import subprocess
import sys
import time

CHECKS = [
    "hidden_tests/test_matrix_derivatives.py::test_diff_keeps_shape",
    "hidden_tests/test_matrix_derivatives.py::test_jacobian_column_vector",
    "hidden_tests/test_matrix_derivatives.py::test_jacobian_entries",
    "hidden_tests/test_matrix_derivatives.py::test_jacobian_shape",
]
ORACLE_SECONDS = 120


def run_checks(target):
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TARGET=os.path.abspath(target), PYTHONDONTWRITEBYTECODE="1")
    deadline = time.monotonic() + ORACLE_SECONDS
    results = []
    for check in sorted(CHECKS):
        remaining = deadline - time.monotonic()
        ok = False
        if remaining > 0:
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", check],
                    cwd=here, env=env, capture_output=True, timeout=remaining,
                )
                ok = proc.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
        results.append({"name": check, "ok": ok})
    return results


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    target = argv[1] if len(argv) > 1 else os.path.join(here, "seed")
    results = run_checks(target)
    print(json.dumps(results, indent=2))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
