#!/usr/bin/env python3
"""Run one scheduled attempt of a pinned campaign.

Usage: run_case.py DECLARATION TASK_ID REPETITION --workdir DIR --agent CMD [--repo DIR]

The work directory receives the task's brief.md and a copy of seed/ (symlinks
kept as links); the agent edits seed/ there. The agent is given exactly the
declared configuration and is bounded by the task's declared limits; the
working copy is then graded and an evidence manifest written beside it.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import collect_evidence  # noqa: E402
import oracle_runner  # noqa: E402


def declared_options(profile, task):
    """The flags the harness writes for the profile (see the import spec), in order."""
    roles = profile["roles"]
    opts = ["--provider", profile["provider"]]
    if profile["joint_planning"]:
        opts.append("--joint-planning")
    opts += list(profile["extra_options"])
    opts += ["--reasoning-effort", roles["builder"]["effort"]]
    for role, spec in roles.items():
        opts += [f"--{role}-model", spec["model"]]
        if role != "builder":
            opts += [f"--{role}-reasoning-effort", spec["effort"]]
    if task["kind"] == "arena":
        opts += ["--max-iterations", str(task["limits"]["max_iterations"])]
    return opts


def prepare(repo, task, workdir):
    src = os.path.join(repo, task["definition"]["path"])
    os.makedirs(workdir, exist_ok=False)
    shutil.copy2(os.path.join(src, "brief.md"), os.path.join(workdir, "brief.md"))
    shutil.copytree(os.path.join(src, "seed"), os.path.join(workdir, "seed"), symlinks=True)
    return src


def drive(agent, options, workdir, task):
    """Invoke the agent within the declared limits; returns (status, elapsed seconds)."""
    limits = task["limits"]
    if task["kind"] == "arena":
        invocations, per_call = limits["max_iterations"], limits["cli_invocation_seconds"]
    else:
        invocations, per_call = 1, limits["harness_minutes"] * 60
    started = time.monotonic()
    status = "FAILED"
    for _ in range(int(invocations)):
        try:
            proc = subprocess.run([*agent.split(), *options, "--brief", "brief.md", "seed"],
                                  cwd=workdir, timeout=per_call)
        except subprocess.TimeoutExpired:
            status = "STOPPED"
            break
        if proc.returncode == 0:
            status = "COMPLETED" if task["kind"] == "arena" else "COMPLETE"
            break
    return status, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("declaration")
    parser.add_argument("task_id")
    parser.add_argument("repetition", type=int)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--repo", default=".")
    args = parser.parse_args()

    with open(args.declaration, encoding="utf-8") as f:
        decl = json.load(f)
    task = next(t for t in decl["tasks"] if t["id"] == args.task_id)
    schedule_id = f"{task['id']}/{args.repetition:02d}"

    src = prepare(args.repo, task, args.workdir)
    status, elapsed = drive(args.agent, declared_options(decl["profile"], task), args.workdir, task)
    checks = task.get("upstream", {}).get("checks")
    timeout = task["limits"].get("oracle_seconds", 120)
    results = oracle_runner.grade(src, os.path.join(args.workdir, "seed"), checks, timeout)

    checks_file = os.path.join(args.workdir, "oracle_checks.json")
    with open(checks_file, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=2)
    collect_evidence.write_manifest(os.path.join(args.workdir, "seed"),
                                    os.path.join(args.workdir, "evidence.json"), results, args.repo)
    print(json.dumps({"schedule_id": schedule_id, "status": status,
                      "elapsed_seconds": round(elapsed, 3), "oracle_checks": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
