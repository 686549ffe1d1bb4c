"""The draft generator: one `harbor` task per Harbor task directory, its `digest` computed by
Harbor's own packager (`Packager.compute_content_hash`) over the task's tree as the repository
holds it at a revision (exported with `git archive`, so that the work tree's state does not
count), its name as Harbor reads it (`harbor.models.task.task.Task`)."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
import tomllib
from pathlib import Path
from typing import Any

SCRIPTED = ("oracle", "nop")


def _git(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _task_dirs(root: Path) -> list[Path]:
    if (root / "task.toml").is_file():
        return [root]
    dirs = sorted(p for p in root.iterdir() if (p / "task.toml").is_file())
    if not dirs:
        raise ValueError(f"{root}: neither a Harbor task directory (task.toml) nor a directory of them")
    return dirs


def draft_tasks(
    path: Path,
    *,
    repo: Path,
    revision: str,
    agent: str,
    reward: str,
    pass_at_least: float,
    evidence: str | None,
    limits: dict[str, Any],
) -> list[dict[str, Any]]:
    from harbor.models.task.task import Task
    from harbor.publisher.packager import Packager

    top = Path(_git(repo, "rev-parse", "--show-toplevel").decode().strip()).resolve()
    commit = _git(repo, "rev-parse", "--verify", f"{revision}^{{commit}}").decode().strip()
    out = []
    for task_dir in _task_dirs(path.resolve()):
        rel = task_dir.relative_to(top).as_posix()
        with tempfile.TemporaryDirectory(prefix="git-ledger-harbor-") as tmp:
            archive = _git(repo, "archive", "--format=tar", commit, "--", rel)
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tmp, filter="data")
            exported = Path(tmp) / rel
            if not (exported / "task.toml").is_file():
                raise ValueError(f"{rel}: not committed at {commit} (git archive has no task.toml)")
            digest, _files = Packager.compute_content_hash(exported)
            name = Task(exported).name
            toml = tomllib.loads((exported / "task.toml").read_text())
        declared = {}
        for k, v in limits.items():
            if v is None and k == "agent_seconds":
                v = toml.get("agent", {}).get("timeout_sec")
            if v is None and k == "verifier_seconds":
                v = toml.get("verifier", {}).get("timeout_sec")
            if v is not None:
                declared[k] = v
        short = name.split("/")[-1]
        out.append(
            {
                "id": f"harbor/{short}",
                "kind": "harbor",
                "evidence": evidence or ("fixture" if agent in SCRIPTED else "live"),
                "expects": "completion",
                "definition": {"path": rel},
                "harbor": {
                    "task": name,
                    "digest": f"sha256:{digest}",
                    "agent": agent,
                    "reward": reward,
                    "pass_at_least": pass_at_least,
                },
                "limits": declared,
                "native_outcomes": ["PASS", "FAIL", "ERROR", "UNSCORED"],
            }
        )
    return out
