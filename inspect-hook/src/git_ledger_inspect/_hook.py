"""The hook: when a task ends, run `git-ledger import --inspect <log>`; never fail the eval.

Inspect calls `on_task_end` only for a task that finished (status `success`, or `error` when
sample errors passed the threshold after the task completed). A task that raised or was
cancelled gets no `on_task_end`, but its log is among `on_run_end`'s logs, so the hook imports
every log there that it has not imported yet. A log is imported at most once per process.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import anyio.to_thread
from inspect_ai.hooks import Hooks, RunEnd, TaskEnd

from ._binary import binary_from_env

logger = logging.getLogger(__name__)

BANNER = "!!!!!!!!"


@dataclass(frozen=True)
class Config:
    """What the hook runs, read from the environment by `config_from_env`."""

    command: Sequence[str]
    """The git-ledger binary (and any leading arguments), e.g. `["git-ledger"]`."""
    ref: str | None = None
    """Ref mode: the ledger ref or declaration id (`--ref`)."""
    declaration: str | None = None
    """File mode: the declaration file (with `ledger`)."""
    ledger: str | None = None
    """File mode: the ledger file (with `declaration`)."""
    repo: str | None = None
    """The repository (`--repo`); default: discovered from the working directory."""
    runtime_identity: str | None = None
    """The evaluator's admission record (`--runtime-identity`)."""
    skip_undeclared: bool = False
    """Pass `--skip-undeclared`."""
    timeout: float = 300.0
    """Seconds one import may take before it is reported as failed."""
    report: str | None = None
    """A file to which each import's result is appended as one JSON line (`git-ledger-inspect
    run` reads it)."""
    problems: tuple[str, ...] = field(default_factory=tuple)
    """Configuration errors: when not empty, nothing is run and each is reported."""

    def argv(self, log_path: str) -> list[str]:
        """The import command for one log."""
        argv = [*self.command, "import"]
        if self.declaration is not None and self.ledger is not None:
            argv += [self.declaration, self.ledger]
        if self.ref is not None:
            argv += ["--ref", self.ref]
        if self.repo is not None:
            argv += ["--repo", self.repo]
        argv += ["--inspect", log_path]
        if self.runtime_identity is not None:
            argv += ["--runtime-identity", self.runtime_identity]
        if self.skip_undeclared:
            argv.append("--skip-undeclared")
        return argv


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def config_from_env(env: Mapping[str, str] | None = None) -> Config | None:
    """The hook's configuration, or None when the hook is off.

    - `GIT_LEDGER_REF`: import into this ledger ref (a full ref name or a declaration id).
    - `GIT_LEDGER_DECLARATION` and `GIT_LEDGER_LEDGER`: import in file mode into these files.
      Exactly one of the two modes turns the hook on.
    - `GIT_LEDGER`: the binary, split like a shell word list (default `git-ledger`);
      `GIT_LEDGER_BIN`, the older name, is read when `GIT_LEDGER` is not set.
    - `GIT_LEDGER_REPO`: the repository (`--repo`).
    - `GIT_LEDGER_RUNTIME_IDENTITY`: `--runtime-identity FILE`.
    - `GIT_LEDGER_SKIP_UNDECLARED`: `1`/`true` passes `--skip-undeclared`.
    - `GIT_LEDGER_TIMEOUT`: seconds per import (default 300).
    - `GIT_LEDGER_INSPECT_REPORT`: a file to append each import's result to (JSON Lines).
    """
    env = os.environ if env is None else env

    def get(name: str) -> str | None:
        value = env.get(name)
        return value if value else None

    ref, declaration, ledger = (
        get("GIT_LEDGER_REF"),
        get("GIT_LEDGER_DECLARATION"),
        get("GIT_LEDGER_LEDGER"),
    )
    if ref is None and declaration is None and ledger is None:
        return None
    problems: list[str] = []
    if ref is not None and (declaration is not None or ledger is not None):
        problems.append(
            "set either GIT_LEDGER_REF or GIT_LEDGER_DECLARATION and GIT_LEDGER_LEDGER, not both"
        )
    elif ref is None and (declaration is None or ledger is None):
        missing = "GIT_LEDGER_LEDGER" if ledger is None else "GIT_LEDGER_DECLARATION"
        problems.append(f"file mode needs {missing} too")
    command, binary_problems = binary_from_env(env)
    problems += binary_problems
    timeout = 300.0
    raw_timeout = get("GIT_LEDGER_TIMEOUT")
    if raw_timeout is not None:
        try:
            timeout = float(raw_timeout)
            if not timeout > 0:
                raise ValueError
        except ValueError:
            problems.append(f"GIT_LEDGER_TIMEOUT is not a positive number: {raw_timeout!r}")
            timeout = 300.0
    return Config(
        command=command,
        ref=ref,
        declaration=declaration,
        ledger=ledger,
        repo=get("GIT_LEDGER_REPO"),
        runtime_identity=get("GIT_LEDGER_RUNTIME_IDENTITY"),
        skip_undeclared=_flag(get("GIT_LEDGER_SKIP_UNDECLARED")),
        timeout=timeout,
        report=get("GIT_LEDGER_INSPECT_REPORT"),
        problems=tuple(problems),
    )


def local_path(location: str | None) -> str | None:
    """The local file a log location names, or None for a remote one (s3://…)."""
    if not location:
        return None
    if location.startswith("file://"):
        return location[len("file://") :]
    if "://" in location:
        return None
    return location


def report_failure(what: str, detail: str = "") -> None:
    """Say loudly, on stderr and through Inspect's logger, that a log is not in the ledger."""
    message = f"git-ledger-inspect: {what}"
    lines = [f"{BANNER} {message} {BANNER}"]
    if detail.strip():
        lines += ["  " + line for line in detail.rstrip().splitlines()]
    print("\n".join(lines), file=sys.stderr, flush=True)
    logger.warning(message + (f": {detail.strip()}" if detail.strip() else ""))


def import_log(config: Config, location: str | None) -> bool:
    """Import one log; report a failure loudly and return whether the import succeeded."""
    ok = _import_log(config, location)
    if config.report is not None:
        try:
            with open(config.report, "a", encoding="utf-8") as f:
                f.write(json.dumps({"log": location, "imported": ok}) + "\n")
        except OSError as error:
            report_failure(f"could not write the hook's report {config.report}", str(error))
    return ok


def _import_log(config: Config, location: str | None) -> bool:
    if config.problems:
        report_failure(
            f"not importing {location}: the hook's configuration is wrong",
            "\n".join(config.problems),
        )
        return False
    path = local_path(location)
    if path is None:
        report_failure(f"not importing {location}: only a local log file can be imported")
        return False
    argv = config.argv(path)
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=config.timeout,
        )
    except (OSError, subprocess.SubprocessError) as error:
        report_failure(f"could not run {shlex.join(argv)}", str(error))
        return False
    if done.returncode != 0:
        kind = "refused" if done.returncode == 2 else f"failed (exit {done.returncode})"
        # Under `git-ledger-inspect run` the command imports the log again and prints why not.
        report_failure(
            f"git-ledger {kind} to import {path}; the log is NOT in the ledger",
            "" if config.report is not None else (done.stderr or "") + (done.stdout or ""),
        )
        return False
    # Under `git-ledger-inspect run` (which reports to a file) the command prints the summary.
    detail = "" if config.report is not None else done.stdout
    sys.stderr.write(f"git-ledger-inspect: imported {path}\n{detail}")
    sys.stderr.flush()
    return True


class GitLedgerHook(Hooks):
    """Imports every log of the process's runs, once each, as soon as Inspect has written it."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def enabled(self) -> bool:
        return config_from_env() is not None

    async def _import(self, location: str | None) -> None:
        if location in self.seen:
            return
        if location is not None:
            self.seen.add(location)
        config = config_from_env()
        if config is None:
            return
        try:
            await anyio.to_thread.run_sync(import_log, config, location)
        except Exception as error:  # never let the ledger fail the evaluation
            report_failure(f"importing {location} raised", repr(error))

    async def on_task_end(self, data: TaskEnd) -> None:
        await self._import(data.log.location)

    async def on_run_end(self, data: RunEnd) -> None:
        for log in data.logs:
            await self._import(log.location)
