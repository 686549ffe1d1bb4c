#!/usr/bin/env python3
"""Grade a working copy against a task's oracle or hidden tests.

Usage: oracle_runner.py TASK_DIR WORKDIR [--checks ID ...] [--timeout SECONDS]

Prints a JSON list of {"name", "ok"} ordered by name. A missing declared check
is reported as failed, so a partial oracle cannot look like a pass.
"""

import argparse
import json
import os
import subprocess
import sys


def run_oracle(task_dir, workdir, checks, timeout):
    """Arena: run oracle.py and keep exactly the declared checks."""
    try:
        proc = subprocess.run(
            [sys.executable, os.path.join(task_dir, "oracle.py"), os.path.abspath(workdir)],
            cwd=task_dir, capture_output=True, text=True, timeout=timeout,
        )
        reported = {r["name"]: bool(r["ok"]) for r in json.loads(proc.stdout or "[]")}
    except (subprocess.TimeoutExpired, ValueError):
        reported = {}
    names = sorted(checks) if checks else sorted(reported)
    return [{"name": n, "ok": reported.get(n, False)} for n in names]


def run_hidden_tests(task_dir, workdir, timeout):
    """Scenario: run each hidden test file with TARGET pointing at the working copy."""
    env = dict(os.environ, TARGET=os.path.abspath(workdir), PYTHONDONTWRITEBYTECODE="1")
    tests_dir = os.path.join(task_dir, "hidden_tests")
    results = []
    for name in sorted(os.listdir(tests_dir)):
        if not (name.startswith("test_") and name.endswith(".py")):
            continue
        node = f"hidden_tests/{name}"
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node],
                cwd=task_dir, env=env, capture_output=True, timeout=timeout,
            )
            ok = proc.returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
        results.append({"name": node, "ok": ok})
    return results


def grade(task_dir, workdir, checks=None, timeout=120):
    task_dir = os.path.abspath(task_dir)
    if os.path.exists(os.path.join(task_dir, "oracle.py")):
        return run_oracle(task_dir, workdir, checks, timeout)
    return run_hidden_tests(task_dir, workdir, timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_dir")
    parser.add_argument("workdir")
    parser.add_argument("--checks", nargs="*", default=None)
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    results = grade(args.task_dir, args.workdir, args.checks, args.timeout)
    print(json.dumps(results, indent=2))
    return 0 if results and all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
