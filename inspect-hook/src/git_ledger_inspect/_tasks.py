"""Inspect tasks read through Inspect's own task loading: no model is called, no sample is run.

A task spec is what `inspect eval` takes: `file.py@task`, `file.py`, a directory, or a package
task's registered name (`inspect_evals/b3`). `load` creates each task with the task arguments
(as `inspect eval -T` does) and reads what a declaration needs: the name the log records
(`eval.task`), the scorer names the samples' `scores` will carry, every sample id, the epochs,
the limits, and the task arguments as the log records them (the defaults included).
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass, field
from typing import Any, Iterator

LIMITS = ("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit")


class TaskError(Exception):
    """Inspect could not load a task, or a task cannot be declared as it is."""


@dataclass
class TaskInfo:
    spec: str
    """The task spec as given."""
    name: str
    """The task's name as the log records it (`eval.task`)."""
    file: str | None
    """The task file (absolute), or None for a package task."""
    package: str | None
    """The distribution that registers a package task (e.g. `inspect_evals`), else None."""
    scorers: list[str]
    """The score names a sample gets, in order (Inspect's own unique names)."""
    sample_ids: list[Any]
    """Every dataset sample's id, in dataset order (None where a sample has none)."""
    epochs: int | None
    """The task's epochs, None when it sets none (Inspect then runs 1)."""
    limits: dict[str, Any] = field(default_factory=dict)
    """The limits the task sets, by declaration key."""
    task_args: dict[str, Any] = field(default_factory=dict)
    """The task arguments as the log records them (`eval.task_args`)."""
    model: str | None = None
    """The model the task sets itself (`Task(model=...)`), e.g. `mockllm/model`."""
    run_ids: list[Any] | None = None
    """The ids of the samples the run selects (`--limit`, `--sample-id`, through Inspect's own
    slicing), None when not known (no selection given to `load`, a shuffled or `task:id`
    selection)."""
    keyed: dict[str, list[str]] = field(default_factory=dict)
    """The scorers whose value is a dictionary (their metrics are given per key), by name: the
    keys. No declared pass value (a string or a number) can equal such a value."""


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Inspect prints its banner (`inspect_ai v…`, `hooks enabled: …`) on loading: not ours to
    show, and standard output is for what we write."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _scorer_names(task: Any) -> list[str]:
    from inspect_ai.scorer._scorer import unique_scorer_name

    names: list[str] = []
    for s in task.scorer or []:
        names.append(unique_scorer_name(s, names))
    return names


def _keyed_scorers(task: Any, names: list[str]) -> dict[str, list[str]]:
    """Scorers declared with metrics per key (`@scorer(metrics={"a": [...], "b": [...]})`):
    their scores' values are dictionaries with those keys."""
    from inspect_ai._util.registry import is_registry_object, registry_info

    keyed: dict[str, list[str]] = {}
    for name, s in zip(names, task.scorer or []):
        if not is_registry_object(s):
            continue
        metrics = registry_info(s).metadata.get("metrics")
        parts = metrics if isinstance(metrics, list) else [metrics]
        keys = sorted(k for m in parts if isinstance(m, dict) for k in m)
        if keys:
            keyed[name] = keys
    return keyed


def _package_of(spec: str) -> str | None:
    """The distribution that registers a package task `pkg/name` through `inspect_ai`'s
    entry points, by the module the entry point names."""
    if "/" not in spec or os.path.exists(spec.split("@", 1)[0]):
        return None
    from importlib import metadata

    prefix = spec.split("/", 1)[0]
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == "inspect_ai" and ep.name == prefix:
                return dist.metadata["Name"]
    return None


def _model_name(task: Any) -> str | None:
    model = getattr(task, "model", None)
    if model is None:
        return None
    name = str(model)
    return name if "/" in name else None


def _selected(task: Any, selection: dict[str, Any] | None) -> list[Any] | None:
    """The ids of the samples `inspect eval --limit/--sample-id` would run, by Inspect's own
    `slice_dataset`; None when that cannot be known before the run."""
    if selection is None:
        return None
    limit, sample_id = selection.get("limit"), selection.get("sample_id")
    if selection.get("sample_shuffle") or (sample_id and ":" in sample_id):
        return None
    from inspect_ai._eval.task.util import slice_dataset
    from inspect_ai._util.samples import parse_sample_id, parse_samples_limit

    try:
        sliced = slice_dataset(task.dataset, parse_samples_limit(limit), parse_sample_id(sample_id))
    except Exception as error:  # Inspect's own parsing of the options: its message
        raise TaskError(f"--limit {limit} / --sample-id {sample_id}: {error}") from error
    return [s.id for s in sliced]


def load(
    specs: list[str], task_args: dict[str, Any], selection: dict[str, Any] | None = None
) -> list[TaskInfo]:
    """Load `specs` with `task_args` through Inspect (as `inspect eval` would); with
    `selection` (the run's `limit`, `sample_id`, `sample_shuffle`), the samples it selects."""
    if not specs:
        raise TaskError("no task given (a task file, file.py@task, or a package task name)")
    with quiet_stdout():
        from inspect_ai._eval.loader import load_tasks, resolve_task_args
        from inspect_ai._eval.task.constants import TASK_ALL_PARAMS_ATTR
        from inspect_ai._eval.task.util import task_file

        infos: list[TaskInfo] = []
        for spec in specs:
            try:
                tasks = load_tasks([spec], task_args)
            except Exception as error:  # Inspect raises its own errors, and the task's
                raise TaskError(f"Inspect cannot load the task {spec}: {error}") from error
            if not tasks:
                raise TaskError(f"{spec} holds no Inspect task")
            for task in tasks:
                try:
                    sample_ids = [s.id for s in task.dataset]
                except Exception as error:
                    raise TaskError(
                        f"Inspect cannot read the dataset of task {task.name}: {error}"
                    ) from error
                file = task_file(task)
                scorers = _scorer_names(task)
                infos.append(
                    TaskInfo(
                        spec=spec,
                        name=task.name,
                        file=os.path.abspath(file) if file else None,
                        package=None if file else _package_of(spec),
                        scorers=scorers,
                        sample_ids=sample_ids,
                        epochs=task.epochs,
                        limits={k: getattr(task, k) for k in LIMITS if getattr(task, k, None) is not None},
                        # What the log records as eval.task_args: every parameter, defaults
                        # included (inspect_ai/_eval/run.py), else the arguments passed.
                        task_args=dict(getattr(task, TASK_ALL_PARAMS_ATTR, None) or resolve_task_args(task)),
                        model=_model_name(task),
                        keyed=_keyed_scorers(task, scorers),
                        run_ids=_selected(task, selection),
                    )
                )
    return infos


def parse_eval_args(argv: list[str]) -> dict[str, Any]:
    """`inspect eval|eval-set|eval-retry <args>` parsed by Inspect's own command-line parser:
    the subcommand, its task specs, task arguments (`-T`, `--task-config`), epochs, the
    limits, the log directory and the main models (`--model`, `INSPECT_EVAL_MODEL`)."""
    if not argv:
        raise TaskError("no Inspect command given (eval, eval-set or eval-retry, then its arguments)")
    sub, rest = argv[0], argv[1:]
    with quiet_stdout():
        from inspect_ai._cli import eval as cli
        from inspect_ai._cli.util import parse_cli_config

        commands = {
            "eval": cli.eval_command,
            "eval-set": cli.eval_set_command,
            "eval-retry": cli.eval_retry_command,
        }
        if sub not in commands:
            raise TaskError(f"not an Inspect evaluation command: {sub!r} (eval, eval-set or eval-retry)")
        try:
            ctx = commands[sub].make_context(f"inspect {sub}", list(rest), resilient_parsing=True)
        except Exception as error:
            raise TaskError(f"inspect {sub}: {error}") from error
        params = ctx.params
        task_args: dict[str, Any] = {}
        if sub != "eval-retry":
            task_args = parse_cli_config(params.get("t"), params.get("task_config"))
    log_dir = params.get("log_dir") or os.environ.get("INSPECT_LOG_DIR") or "./logs"
    model = params.get("model") or os.environ.get("INSPECT_EVAL_MODEL") or None
    selection = {
        "limit": params.get("limit") or os.environ.get("INSPECT_EVAL_LIMIT"),
        "sample_id": params.get("sample_id") or os.environ.get("INSPECT_EVAL_SAMPLE_ID"),
        "sample_shuffle": params.get("sample_shuffle") or os.environ.get("INSPECT_EVAL_SAMPLE_SHUFFLE"),
    }
    return {
        "command": sub,
        "tasks": list(params.get("tasks") or ()),
        "task_args": task_args,
        "epochs": params.get("epochs"),
        "limits": {k: params.get(k) for k in LIMITS if params.get(k) is not None},
        "log_dir": log_dir,
        # The main models (`--model a/b,c/d`); None: the task's own, or unknown.
        "models": [m.strip() for m in model.split(",") if m.strip()] if model else None,
        "selection": selection,
    }
