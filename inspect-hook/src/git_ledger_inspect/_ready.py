"""Readiness that knows Inspect (docs/reference/workflow.md, rules 1 and 4): the run's tasks,
loaded through Inspect, against what the declaration says of them, before anything runs.

Refused (each on its own line):
- a task the run loads that no declared task names (its samples would be refused as
  undeclared), unless --skip-undeclared;
- a declared task name that none of the run's tasks has (a typo in `inspect.task`);
- a declared scorer the task does not have (its samples would be refused at import), or one
  whose value is a dictionary (metrics per key: no declared pass value can equal it, every
  sample would be a FAIL);
- a declared sample id that is not in the task's dataset (its rows could never be filled), and
  a sample the run selects (`--limit`, `--sample-id`) that is not declared (it would run, cost,
  and be refused at import), unless --skip-undeclared;
- epochs, limits or task arguments the run would take otherwise than declared (an option
  deviation: no PASS of the run could be a verified delivery);
- a declared evidence kind the run's main model contradicts: `fixture` with a model that is not
  Inspect's scripted `mockllm/…`, `live` with one that is (the import decides a row's evidence
  by the model, and refuses a row whose evidence is not the declared one);
- a work tree Inspect would record as dirty (its `source_revision` would be null), and a log
  directory inside the work tree that Git does not ignore (the first log makes it dirty).
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from ._draft import MAX_SHOWN, keyed_problem
from ._tasks import LIMITS, TaskInfo


def _same(a: Any, b: Any) -> bool:
    """JSON values compared by value (1 equals 1.0; True is not 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _shown(ids: list[str]) -> str:
    if len(ids) <= 3:
        return ", ".join(ids)
    return f"{', '.join(ids[:3])} and {len(ids) - 3} more"


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_SHOWN:
        return lines
    return lines[:MAX_SHOWN] + [f"… and {len(lines) - MAX_SHOWN} more"]


def task_problems(
    declaration: dict[str, Any],
    run: dict[str, Any],
    infos: list[TaskInfo],
    skip_undeclared: bool = False,
) -> list[str]:
    declared: dict[str, list[dict[str, Any]]] = {}
    for task in declaration.get("tasks", []):
        if task.get("kind") == "inspect":
            declared.setdefault(task["inspect"]["task"], []).append(task)
    problems: list[str] = []
    loaded = {i.name: i for i in infos}
    for info in infos:
        if info.name not in declared and not skip_undeclared:
            problems.append(
                f"the run's task {info.name} ({info.spec}) is not declared: its samples would be "
                f"refused as undeclared (the declaration's Inspect tasks: {', '.join(sorted(declared)) or 'none'})"
            )
    for name, tasks in sorted(declared.items()):
        if name not in loaded:
            problems.append(
                f"the declared Inspect task {name} ({_shown([t['id'] for t in tasks])}) is not "
                f"among the tasks this run loads ({', '.join(sorted(loaded)) or 'none'}): a typo "
                "in inspect.task, or the run names another task"
            )
            continue
        info = loaded[name]
        by_scorer: dict[str, list[str]] = {}
        for t in tasks:
            by_scorer.setdefault(t["inspect"]["scorer"], []).append(t["id"])
        for scorer, ids in sorted(by_scorer.items()):
            if scorer in info.keyed:
                others = [s for s in info.scorers if s not in info.keyed]
                problems.append(f"{_shown(ids)}: " + keyed_problem(name, scorer, info.keyed[scorer], others))
            elif scorer not in info.scorers:
                problems.append(
                    f"{_shown(ids)}: the declared scorer {scorer!r} is not a scorer of Inspect "
                    f"task {name} (its scorers: {', '.join(info.scorers) or 'none'}); every "
                    "sample would be refused at import"
                )
        if info.run_ids is not None and not skip_undeclared:
            declared_ids = {json.dumps(t["inspect"]["sample_id"]) for t in tasks}
            extra = [json.dumps(s) for s in info.run_ids if json.dumps(s) not in declared_ids]
            if extra:
                problems.append(
                    f"task {name}: the run would run {len(extra)} sample(s) the declaration does "
                    f"not declare ({_shown(extra)}): each would be refused at import after it "
                    "ran; select the declared ones (--limit N, --sample-id ID,…) or pass "
                    "--skip-undeclared"
                )
        dataset = {json.dumps(s) for s in info.sample_ids}
        missing = [
            f"{t['id']}: sample id {json.dumps(t['inspect']['sample_id'])} is not in the dataset "
            f"of Inspect task {name}; its rows could never be filled"
            for t in tasks
            if json.dumps(t["inspect"]["sample_id"]) not in dataset
        ]
        problems += _capped(missing)
        reps = declaration.get("repetitions")
        epochs = run.get("epochs") or info.epochs or 1
        if reps is not None and epochs != reps:
            problems.append(
                f"task {name}: the run would run {epochs} epoch(s), the declaration schedules "
                f"{reps} repetition(s): pass --epochs {reps}"
            )
        effective = dict(info.limits)
        effective.update(run.get("limits", {}))
        for key in LIMITS:
            for want_ids, want in _declared_values(tasks, "limits", key):
                got = effective.get(key)
                if want is None and got is not None:
                    problems.append(
                        f"{_shown(want_ids)}: the run sets {key} {got}, which the declaration "
                        "does not declare (an option deviation)"
                    )
                elif want is not None and (got is None or not _same(got, want)):
                    flag = "--" + key.replace("_", "-")
                    problems.append(
                        f"{_shown(want_ids)}: {key} is declared {want}, the run sets "
                        f"{'none' if got is None else got}: pass {flag} {want}"
                    )
        # The task's own model comes first (Inspect runs a Task(model=…) with it), then --model.
        problems += _evidence_problems(name, tasks, [info.model] if info.model else run.get("models") or [])
        for t in tasks:
            want = t["inspect"].get("task_args", {})
            if not _same(want, info.task_args):
                problems.append(
                    f"{t['id']}: task arguments declared {json.dumps(want, sort_keys=True)}, the run "
                    f"gives {json.dumps(info.task_args, sort_keys=True, default=str)} (Inspect "
                    "records the defaults too: declare them)"
                )
                break
    return problems


def _evidence_problems(name: str, tasks: list[dict[str, Any]], models: list[str]) -> list[str]:
    """Each declared evidence kind against the run's main models (none known: nothing to say;
    the import still decides by the models the log records)."""
    if not models:
        return []
    problems: list[str] = []
    scripted = [m for m in models if m.split("/", 1)[0] == "mockllm"]
    others = [m for m in models if m not in scripted]
    for evidence, ids in sorted(_by(tasks, lambda t: t.get("evidence")).items(), key=str):
        if evidence == "fixture" and others:
            problems.append(
                f"{_shown(ids)}: declared fixture evidence, but task {name} would run with "
                f"{', '.join(others)}, not Inspect's scripted mockllm: every row would import as "
                "live and be refused (declare \"evidence\": \"live\", or run with mockllm/…)"
            )
        elif evidence == "live" and scripted:
            problems.append(
                f"{_shown(ids)}: declared live evidence, but task {name} would run with "
                f"{', '.join(scripted)}, Inspect's scripted model: every row would import as "
                "fixture and be refused (declare \"evidence\": \"fixture\", or run a live model)"
            )
    return problems


def _by(tasks: list[dict[str, Any]], key) -> dict[Any, list[str]]:
    groups: dict[Any, list[str]] = {}
    for t in tasks:
        groups.setdefault(key(t), []).append(t["id"])
    return groups


def _declared_values(tasks: list[dict[str, Any]], block: str, key: str):
    """(task ids, value) for each distinct declared value of `block.key` (None: not declared)."""
    groups: dict[str, tuple[list[str], Any]] = {}
    for t in tasks:
        value = t.get(block, {}).get(key)
        k = json.dumps(value)
        groups.setdefault(k, ([], value))[0].append(t["id"])
    return list(groups.values())


def tree_problems(infos: list[TaskInfo], log_dir: str) -> list[str]:
    """What would make Inspect record the revision as dirty: `git status --porcelain` printing
    anything in the repository of a task file (Inspect takes the revision there), or a log
    directory inside that work tree that Git does not ignore."""
    problems: list[str] = []
    roots: set[str] = set()
    for info in infos:
        if info.file is None:
            continue
        top = _git(os.path.dirname(info.file), "rev-parse", "--show-toplevel")
        if top is not None:
            roots.add(top.strip())
    for root in sorted(roots):
        status = _git(root, "status", "--porcelain", "--untracked-files=all") or ""
        lines = [line for line in status.splitlines() if line.strip()]
        if lines:
            shown = "; ".join(lines[:5]) + (f"; and {len(lines) - 5} more" if len(lines) > 5 else "")
            problems.append(
                f"{root}: Inspect would record this run's revision as dirty (git status "
                f"--porcelain: {shown}), and a dirty revision is a null source_revision: run in a "
                "clean worktree at the declared revision"
            )
        logs = os.path.realpath(os.path.abspath(log_dir))
        rel = os.path.relpath(logs, os.path.realpath(root))
        if not (rel == os.pardir or rel.startswith(os.pardir + os.sep)):
            probe = os.path.join(rel, "probe.eval") if rel != os.curdir else "probe.eval"
            ignored = subprocess.run(
                ["git", "-C", root, "check-ignore", "-q", "--no-index", probe],
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
            if ignored.returncode != 0:
                problems.append(
                    f"the log directory {log_dir} is inside the work tree {root} and Git does not "
                    "ignore it: the first log would make every later revision dirty (add it to "
                    ".gitignore, or pass --log-dir outside the work tree)"
                )
    return problems


def _git(cwd: str, *args: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", cwd, *args], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    return done.stdout if done.returncode == 0 else None
