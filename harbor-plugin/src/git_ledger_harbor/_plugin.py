"""The job plugin: a `TrialEvent.END` hook that runs `git ledger import --harbor <trial dir>`.

Configuration comes from the environment (so that `harbor run --plugin git-ledger` needs no
kwargs), or from plugin kwargs of the same names in lower case without the prefix
(`--pk ref=...`):

- `GIT_LEDGER_REF`: import into this ledger ref (a full ref name or a declaration id), or
- `GIT_LEDGER_DECLARATION` and `GIT_LEDGER_LEDGER`: import in file mode into these files.
- `GIT_LEDGER`: the binary (default `git-ledger`).
- `GIT_LEDGER_REPO`: the repository (`--repo`, and where HEAD is read).
- `GIT_LEDGER_REVISION`: the source revision; default: the repository's HEAD at job start.
- `GIT_LEDGER_RUNTIME_IDENTITY`: `--runtime-identity FILE`.
- `GIT_LEDGER_SKIP_UNDECLARED`: `1`/`true` passes `--skip-undeclared`.
- `GIT_LEDGER_STATUS`: a file the plugin writes at job end: every trial's import as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

# Exit statuses of git-ledger (docs/reference/exit-codes.md).
REFUSED = 2
CONTENDED = 3
# A contended import (another writer moved the ref 64 times) is tried again this often.
CONTENDED_TRIES = 5


@dataclass
class Config:
    command: list[str]
    ref: str | None = None
    declaration: str | None = None
    ledger: str | None = None
    repo: str | None = None
    revision: str | None = None
    runtime_identity: str | None = None
    skip_undeclared: bool = False
    status: str | None = None

    def argv(self, trial_dir: str) -> list[str]:
        argv = [*self.command, "import"]
        if self.declaration is not None:
            argv += [self.declaration, self.ledger or ""]
        if self.ref is not None:
            argv += ["--ref", self.ref]
        if self.repo is not None:
            argv += ["--repo", self.repo]
        if self.revision is not None:
            argv += ["--revision", self.revision]
        if self.runtime_identity is not None:
            argv += ["--runtime-identity", self.runtime_identity]
        if self.skip_undeclared:
            argv.append("--skip-undeclared")
        argv += ["--harbor", trial_dir]
        return argv


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def config_from_env(
    env: Mapping[str, str] | None = None, kwargs: Mapping[str, Any] | None = None
) -> Config:
    """The configuration, from `kwargs` first, then `env` (default `os.environ`)."""
    env = os.environ if env is None else env
    kwargs = kwargs or {}

    def get(name: str) -> str | None:
        key = name.removeprefix("GIT_LEDGER_").lower() if name != "GIT_LEDGER" else "bin"
        value = kwargs.get(key)
        if value is None:
            value = env.get(name)
        value = None if value is None else str(value)
        return value if value else None

    ref, decl, ledger = get("GIT_LEDGER_REF"), get("GIT_LEDGER_DECLARATION"), get("GIT_LEDGER_LEDGER")
    if ref is not None and (decl is not None or ledger is not None):
        raise ValueError(
            "git-ledger plugin: set either GIT_LEDGER_REF or GIT_LEDGER_DECLARATION and GIT_LEDGER_LEDGER, not both"
        )
    if (decl is None) != (ledger is None):
        missing = "GIT_LEDGER_LEDGER" if ledger is None else "GIT_LEDGER_DECLARATION"
        raise ValueError(f"git-ledger plugin: {missing} is not set")
    command = shlex.split(get("GIT_LEDGER") or "git-ledger")
    if not command:
        raise ValueError("git-ledger plugin: GIT_LEDGER is empty")
    return Config(
        command=command,
        ref=ref,
        declaration=decl,
        ledger=ledger,
        repo=get("GIT_LEDGER_REPO"),
        revision=get("GIT_LEDGER_REVISION"),
        runtime_identity=get("GIT_LEDGER_RUNTIME_IDENTITY"),
        skip_undeclared=_flag(get("GIT_LEDGER_SKIP_UNDECLARED")),
        status=get("GIT_LEDGER_STATUS"),
    )


def head_of(repo: str | None) -> str:
    """The full commit id of HEAD in `repo` (the current directory's repository)."""
    argv = ["git"] + (["-C", repo] if repo else []) + ["rev-parse", "--verify", "HEAD^{commit}"]
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"git-ledger plugin: cannot read HEAD: {done.stderr.strip()}")
    return done.stdout.strip()


@dataclass
class TrialImport:
    trial: str
    directory: str
    code: int
    stdout: str
    stderr: str

    def as_json(self) -> dict[str, Any]:
        outcome = {0: "imported", REFUSED: "refused"}.get(self.code, "failed")
        return {
            "trial": self.trial,
            "directory": self.directory,
            "exit": self.code,
            "outcome": outcome,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }


class GitLedgerPlugin:
    """A Harbor job plugin (`harbor.models.job.plugin.JobPlugin`)."""

    def __init__(self, **kwargs: Any) -> None:
        self.config = config_from_env(kwargs=kwargs)
        self.imports: list[TrialImport] = []
        self.job_dir: str | None = None

    async def on_job_start(self, job) -> None:
        from harbor.trial.hooks import TrialEvent

        if self.config.revision is None:
            # The worktree's HEAD at job start, after the readiness check passed.
            self.config.revision = head_of(self.config.repo)
        self.job_dir = str(job.job_dir)
        job.add_hook(TrialEvent.END, self.on_trial_end)

    async def on_trial_end(self, event) -> None:
        trial_dir = str(Path(event.config.trials_dir) / event.config.trial_name)
        await self.import_trial(event.config.trial_name, trial_dir)

    async def import_trial(self, trial: str, trial_dir: str) -> TrialImport:
        argv = self.config.argv(trial_dir)
        code, out, err = -1, "", ""
        for _ in range(CONTENDED_TRIES):
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                raw_out, raw_err = await proc.communicate()
                code, out, err = proc.returncode, raw_out.decode(errors="replace"), raw_err.decode(errors="replace")
            except OSError as error:
                code, out, err = -1, "", f"cannot run {argv[0]}: {error}"
            if code != CONTENDED:
                break
        result = TrialImport(trial, trial_dir, code, out, err)
        self.imports.append(result)
        what = {0: "imported", REFUSED: "refused"}.get(code, "FAILED")
        print(f"git-ledger: trial {trial}: {what} (exit {code})", file=sys.stderr)
        if code != 0:
            for line in (err or out).strip().splitlines():
                print(f"git-ledger:   {line}", file=sys.stderr)
        return result

    async def on_job_end(self, job_result) -> None:
        if self.config.status is not None:
            Path(self.config.status).write_text(
                json.dumps(
                    {
                        "job_dir": self.job_dir,
                        "revision": self.config.revision,
                        "imports": [i.as_json() for i in self.imports],
                    },
                    indent=2,
                )
                + "\n"
            )
