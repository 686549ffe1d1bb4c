"""The draft generator: one `harbor` task per Harbor task directory, its `digest` computed by
Harbor's own packager (`Packager.compute_content_hash`) over the task's tree as the repository
holds it at a revision (exported with `git archive`, so that the work tree's state does not
count), its name as Harbor reads it (`harbor.models.task.task.Task`).

The path is a task directory (`task.toml`), a dataset (a directory with `dataset.toml`, Harbor's
manifest: its tasks, in its order, each found among the dataset's task directories by its
`[task] name`, as `harbor sync` finds them), or a directory of task directories (what
`harbor run -p` takes). A dataset's task that is not a directory of the dataset (a registry
task) has no definition in the repository and is refused; so is a manifest digest that is not
the committed task's (`harbor sync` was not run, or not committed)."""

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
    """The task directories of `root` (exported), in the draft's order."""
    if (root / "task.toml").is_file():
        return [root]
    if (root / "dataset.toml").is_file():
        return _dataset_tasks(root)
    dirs = sorted(p for p in root.iterdir() if (p / "task.toml").is_file())
    if not dirs:
        raise ValueError(f"{root.name}: neither a Harbor task directory (task.toml), a dataset (dataset.toml) nor a directory of task directories")
    return dirs


def _dataset_tasks(root: Path) -> list[Path]:
    from harbor.models.dataset.manifest import DatasetManifest
    from harbor.models.task.config import TaskConfig
    from harbor.publisher.packager import Packager

    try:
        manifest = DatasetManifest.from_toml_file(root / "dataset.toml")
    except Exception as error:  # pydantic's ValidationError, tomllib's TOMLDecodeError
        raise ValueError(f"{root.name}/dataset.toml: not a Harbor dataset manifest: {error}") from None
    local: dict[str, Path] = {}
    for child in sorted(root.iterdir()):
        config = child / "task.toml"
        if child.is_dir() and config.is_file():
            parsed = TaskConfig.model_validate_toml(config.read_text())
            if parsed.task and parsed.task.name:
                local[parsed.task.name] = child
    out = []
    for ref in manifest.tasks:
        task_dir = local.get(ref.name)
        if task_dir is None:
            raise ValueError(
                f"{root.name}/dataset.toml: task {ref.name} is not one of the dataset's task directories "
                "(a registry task has no definition in this repository to pin)"
            )
        digest, _ = Packager.compute_content_hash(task_dir)
        if ref.digest != f"sha256:{digest}":
            raise ValueError(
                f"{root.name}/dataset.toml pins {ref.name} at {ref.digest}, but the committed task hashes to "
                f"sha256:{digest} (Harbor's packager): run `harbor sync` on the dataset and commit"
            )
        if task_dir not in out:
            out.append(task_dir)
    if not out:
        raise ValueError(f"{root.name}/dataset.toml lists no tasks")
    return out


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
    try:
        base = path.resolve().relative_to(top).as_posix()
    except ValueError:
        raise ValueError(f"{path}: not inside the repository {top}") from None
    out = []
    with tempfile.TemporaryDirectory(prefix="git-ledger-harbor-") as tmp:
        done = subprocess.run(
            ["git", "-C", str(top), "archive", "--format=tar", commit, "--", base],
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise ValueError(f"{base}: not committed at {commit} (git archive: {done.stderr.decode(errors='replace').strip()})")
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
            tar.extractall(tmp, filter="data")
        exported_root = Path(tmp) / base if base != "." else Path(tmp)
        found = [(d, d.relative_to(Path(tmp)).as_posix()) for d in _task_dirs(exported_root)]
        tasks = []
        for exported, rel in found:
            digest, _files = Packager.compute_content_hash(exported)
            name = Task(exported).name
            toml = tomllib.loads((exported / "task.toml").read_text())
            tasks.append((rel, digest, name, toml))
    for rel, digest, name, toml in tasks:
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
