"""A campaign draft generated from Inspect tasks (docs/reference/workflow.md, rule 5): one task
block per dataset sample, ready for `git ledger pin`.

Every field is filled with what the guide would tell a user to write: the ten acceptance
rules, the twenty attempt fields, the runtime requirements of this interpreter, the profile,
policy and runner paths given, and per sample its id, the task's name and arguments, the
verdict scorer, the task's limits and `repetitions` from its epochs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ._runtime import requirements
from ._tasks import LIMITS, TaskInfo

ACCEPTANCE_RULES = (
    "one_row_per_schedule_id",
    "retry_needs_new_schedule",
    "unknown_is_null",
    "fixture_is_never_live",
    "pass_requires_passing_oracle",
    "verified_requires_evidence",
    "over_limit_is_not_verified",
    "stop_is_appropriate_only_when_expected",
    "non_pass_requires_reason",
    "deferred_carries_nothing",
)
ATTEMPT_FIELDS = (
    "schedule_id",
    "task_id",
    "repetition",
    "evidence",
    "native_outcome",
    "native_status",
    "reason",
    "source_revision",
    "runtime_identity",
    "actual_models_and_efforts",
    "runner_options",
    "option_deviations",
    "oracle_checks",
    "evidence_refs",
    "elapsed_seconds",
    "usage",
    "estimated_usd",
    "spent_budget",
    "interventions_decision_or_repair",
    "native_record",
)
NATIVE_OUTCOMES = ("PASS", "FAIL", "ERROR", "UNSCORED")
# Inspect's CORRECT: the value match, includes, choice, model_graded_* give a right answer.
DEFAULT_PASS = ("C",)
MAX_SHOWN = 20
_ID_PART = re.compile(r"[^A-Za-z0-9._-]+")


class DraftError(Exception):
    """The draft cannot be generated; `problems` says why, one line each."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass
class Options:
    id: str | None = None
    title: str | None = None
    repetitions: int | None = None
    scorer: str | None = None
    pass_values: list[Any] = field(default_factory=list)
    evidence: str | None = None
    definition: str | None = None
    profile: str = ""
    model: str | None = None
    policies: list[str] = field(default_factory=list)
    runner_tools: str = ""
    limits: dict[str, Any] = field(default_factory=dict)
    sample_limit: int | None = None


def repo_root(start: str) -> str:
    done = subprocess.run(
        ["git", "-C", start, "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise DraftError([f"{start} is not inside a Git repository: {done.stderr.strip()}"])
    return done.stdout.strip()


def repo_path(root: str, path: str, what: str, problems: list[str]) -> str:
    """`path` (relative to the working directory) as a path relative to the repository root."""
    full = os.path.realpath(os.path.abspath(path))
    rel = os.path.relpath(full, os.path.realpath(root))
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        problems.append(f"{what} {path} is not inside the repository {root}")
        return path
    return rel.replace(os.sep, "/")


def _id_part(value: Any) -> str:
    text = re.sub(r"\.{2,}", ".", _ID_PART.sub("-", str(value)))
    return text.strip("-._") or "sample"


def task_ids(task_name: str, sample_ids: list[Any]) -> list[str]:
    """`inspect/<task>-<sample>`, with every run of characters a task id may not hold replaced
    by `-`; an id too long, or one that an earlier sample's id folds into, ends in a hash of the
    sample id instead."""
    base = _id_part(task_name.split("/")[-1])
    out: list[str] = []
    seen: set[str] = set()
    for sid in sample_ids:
        tail = f"{base}-{_id_part(sid)}"
        if len(tail) > 100 or tail in seen:
            digest = hashlib.sha256(json.dumps(sid).encode()).hexdigest()[:10]
            tail = f"{tail[:89].rstrip('-._')}-{digest}"
        seen.add(tail)
        out.append(f"inspect/{tail}")
    return out


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_SHOWN:
        return lines
    return lines[:MAX_SHOWN] + [f"… and {len(lines) - MAX_SHOWN} more"]


def sample_id_problems(info: TaskInfo) -> list[str]:
    """Missing or repeated sample ids: Inspect then numbers samples by position, which is not a
    stable identity across runs."""
    problems: list[str] = []
    first: dict[str, int] = {}
    for i, sid in enumerate(info.sample_ids, 1):
        if sid is None or sid == "" or isinstance(sid, bool) or not isinstance(sid, (str, int)):
            problems.append(
                f"task {info.name}: sample #{i} has no id ({sid!r}); give every sample a unique "
                "id in the dataset (Inspect would number it by position, which is no stable identity)"
            )
            continue
        key = json.dumps(sid)
        if key in first:
            problems.append(
                f"task {info.name}: sample id {key} is repeated (samples #{first[key]} and #{i}); "
                "every sample needs its own id"
            )
        else:
            first[key] = i
    return _capped(problems)


def keyed_problem(task: str, scorer: str, keys: list[str], others: list[str]) -> str:
    """Why a scorer whose value is a dictionary cannot be a declaration's verdict."""
    alt = f"; declare another of its scorers ({', '.join(others)})" if others else ""
    return (
        f"task {task}: the scorer {scorer!r} gives one value per key ({', '.join(keys)}), and a "
        "declared pass value is one string or number, so every sample would import as FAIL; a "
        f"verdict is one value (wrap the task with a scorer that gives one){alt}"
    )


def generate(infos: list[TaskInfo], opts: Options, cwd: str) -> dict[str, Any]:
    """The draft for `infos`, or DraftError with every problem."""
    problems: list[str] = []
    root = repo_root(cwd)
    names = [i.name for i in infos]
    if len(set(names)) != len(names):
        problems.append(f"the same task is given twice: {', '.join(names)}")
    for info in infos:
        problems += sample_id_problems(info)
        if opts.scorer is not None and opts.scorer not in info.scorers:
            problems.append(
                f"task {info.name} has no scorer {opts.scorer!r} (its scorers: "
                f"{', '.join(info.scorers) or 'none'})"
            )
        if not info.scorers:
            problems.append(f"task {info.name} has no scorer: a sample without a score has no verdict")
        verdict = opts.scorer if opts.scorer is not None else (info.scorers[0] if info.scorers else None)
        if verdict in info.keyed:
            problems.append(keyed_problem(info.name, verdict, info.keyed[verdict], [s for s in info.scorers if s not in info.keyed]))
    epochs = {i.epochs or 1 for i in infos}
    if opts.repetitions is not None:
        repetitions = opts.repetitions
    elif len(epochs) == 1:
        repetitions = epochs.pop()
    else:
        repetitions = 0
        problems.append(
            f"the tasks run different epochs ({', '.join(f'{i.name}: {i.epochs or 1}' for i in infos)}); "
            "a declaration has one repetitions count: pass --epochs"
        )
    if repetitions < 1 and not problems:
        problems.append(f"--epochs must be at least 1, not {repetitions}")

    definitions: dict[str, str] = {}
    for info in infos:
        if opts.definition is not None:
            definitions[info.name] = repo_path(root, opts.definition, "--definition", problems)
        elif info.file is not None:
            definitions[info.name] = repo_path(
                root, os.path.dirname(info.file), f"the directory of task {info.name}", problems
            )
        else:
            problems.append(
                f"task {info.name} comes from a package{f' ({info.package})' if info.package else ''}, "
                "not from a file of this repository: pass --definition DIR, the directory of this "
                "repository that pins it (e.g. the requirements file that installs the package)"
            )
    profile = repo_path(root, opts.profile, "--profile", problems)
    policies = [repo_path(root, p, "--policy", problems) for p in opts.policies]
    runner = repo_path(root, opts.runner_tools, "--runner-tools", problems)

    limits_of: dict[str, dict[str, Any]] = {}
    for info in infos:
        limits = {k: v for k, v in info.limits.items()}
        limits.update(opts.limits)
        limits = {k: limits[k] for k in LIMITS if limits.get(k) is not None}
        if not limits:
            problems.append(
                f"task {info.name} sets no limit, and a declaration declares at least one: pass "
                "--message-limit, --token-limit, --time-limit, --working-limit or --cost-limit "
                "(and run with the same)"
            )
        for k in ("message_limit", "token_limit"):
            if k in limits and isinstance(limits[k], float) and limits[k].is_integer():
                limits[k] = int(limits[k])
        limits_of[info.name] = limits

    models = {opts.model} if opts.model else {i.model for i in infos}
    evidence = opts.evidence
    if evidence is None:
        scripted = bool(models) and all(m is not None and m.startswith("mockllm/") for m in models)
        evidence = "fixture" if scripted else "live"
    if problems:
        raise DraftError(problems)

    packages = {i.package: _version(i.package) for i in infos if i.package}
    tasks: list[dict[str, Any]] = []
    for info in infos:
        ids = info.sample_ids[: opts.sample_limit] if opts.sample_limit else info.sample_ids
        scorer = opts.scorer or info.scorers[0]
        for task_id, sid in zip(task_ids(info.name, ids), ids):
            tasks.append(
                {
                    "id": task_id,
                    "kind": "inspect",
                    "evidence": evidence,
                    "expects": "completion",
                    "definition": {"path": definitions[info.name]},
                    "inspect": {
                        "task": info.name,
                        "sample_id": sid,
                        "scorer": scorer,
                        "pass": list(opts.pass_values or DEFAULT_PASS),
                        "task_args": info.task_args,
                    },
                    "limits": limits_of[info.name],
                    "native_outcomes": list(NATIVE_OUTCOMES),
                }
            )
    ident = opts.id or _id_part(infos[0].name.split("/")[-1] if len(infos) == 1 else "inspect-campaign")
    draft: dict[str, Any] = {
        "format": "campaign-declaration/1",
        "id": ident,
        "title": opts.title or f"Inspect {', '.join(names)}",
        "status": "PLANNED",
        "repetitions": repetitions,
        "profile": {"source": {"path": profile}},
        "policy_files": [{"path": p} for p in policies],
        "runner_tools": {"path": runner},
        "runtime_requirements": requirements(packages),
        "acceptance": {rule: True for rule in ACCEPTANCE_RULES},
        "attempt_fields": list(ATTEMPT_FIELDS),
        "tasks": tasks,
    }
    return draft


def _version(dist: str) -> str:
    from importlib import metadata

    return metadata.version(dist)


def profile_for(model: str) -> dict[str, Any]:
    """The profile file of a run of one model as Inspect's main model, without reasoning effort."""
    return {
        "name": _id_part(model),
        "provider": model.split("/", 1)[0],
        "joint_planning": False,
        "roles": {"default": {"model": model, "effort": None}},
        "extra_options": [],
    }
