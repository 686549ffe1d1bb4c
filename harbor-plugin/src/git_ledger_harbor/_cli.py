"""`git-ledger-harbor`: run a Harbor job into a ledger (`run`), write a draft's harbor tasks
(`draft`)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from ._draft import draft_tasks
from ._plugin import head_of

PLUGIN = "git_ledger_harbor._plugin:GitLedgerPlugin"


def _ledger_command() -> list[str]:
    return shlex.split(os.environ.get("GIT_LEDGER") or "git-ledger")


def _target(args) -> list[str]:
    if args.ref:
        return ["--ref", args.ref]
    return []


def run(args) -> int:
    """Readiness, `harbor run` with the plugin, the job imported; non-zero when a step fails."""
    ledger = _ledger_command()
    repo = args.repo or "."
    if args.ledger is None and args.ref is None:
        print("git-ledger-harbor run: give --ledger FILE (file mode) or --ref REF", file=sys.stderr)
        return 64
    if args.declaration is None and args.ref is None:
        print("git-ledger-harbor run: file mode needs the declaration (DECLARATION --ledger FILE)", file=sys.stderr)
        return 64
    with tempfile.TemporaryDirectory(prefix="git-ledger-harbor-") as scratch:
        declaration = args.declaration
        if declaration is None:
            # Ref mode: the declaration the ledger ref holds.
            shown = subprocess.run(
                [*ledger, "show", "--ref", args.ref, "--declaration", "--repo", repo],
                capture_output=True,
            )
            if shown.returncode != 0:
                sys.stderr.write(shown.stderr.decode(errors="replace"))
                return shown.returncode
            declaration = os.path.join(scratch, "declaration.json")
            Path(declaration).write_bytes(shown.stdout)
        return _run(args, ledger, repo, declaration, scratch)


def _run(args, ledger: list[str], repo: str, declaration: str, scratch: str) -> int:
    # 1. Readiness: the working tree is the declared revision, nothing pinned modified.
    ready = subprocess.run([*ledger, "check", declaration, "--ready", "--repo", repo])
    if ready.returncode != 0:
        print(f"git-ledger-harbor: not ready (git ledger check --ready exited {ready.returncode}): no run", file=sys.stderr)
        return ready.returncode
    revision = head_of(repo)
    if not args.runtime_identity:
        # The runtime identity of this interpreter (Harbor's, the native provider), for every
        # import of the job.
        args.runtime_identity = os.path.join(scratch, "runtime-identity.json")
        measured = subprocess.run(
            [*ledger, "runtime-identity", declaration, "--python", sys.executable,
             "--native-provider", "harbor", "-o", args.runtime_identity]
        )
        if measured.returncode != 0:
            print(f"git-ledger-harbor: git ledger runtime-identity exited {measured.returncode}: no run", file=sys.stderr)
            return measured.returncode
    # 2. Harbor, with the plugin importing each trial as it ends.
    env = dict(os.environ)
    env.pop("GIT_LEDGER_REF", None)
    env.pop("GIT_LEDGER_DECLARATION", None)
    env.pop("GIT_LEDGER_LEDGER", None)
    if args.ref:
        env["GIT_LEDGER_REF"] = args.ref
    else:
        env["GIT_LEDGER_DECLARATION"] = declaration
        env["GIT_LEDGER_LEDGER"] = args.ledger
    env["GIT_LEDGER_REPO"] = repo
    env["GIT_LEDGER_REVISION"] = revision
    if args.runtime_identity:
        env["GIT_LEDGER_RUNTIME_IDENTITY"] = args.runtime_identity
    if args.skip_undeclared:
        env["GIT_LEDGER_SKIP_UNDECLARED"] = "1"
    status_fd, status = tempfile.mkstemp(prefix="git-ledger-harbor-", suffix=".json")
    os.close(status_fd)
    env["GIT_LEDGER_STATUS"] = status
    harbor = shlex.split(os.environ.get("HARBOR") or "harbor")
    harbor_args = list(args.harbor_args)
    ran = subprocess.run([*harbor, "run", *harbor_args, "--plugin", PLUGIN], env=env)
    try:
        state = json.loads(Path(status).read_text() or "{}")
    except (OSError, ValueError):
        state = {}
    finally:
        Path(status).unlink(missing_ok=True)
    failed = [i for i in state.get("imports", []) if i["outcome"] == "failed"]
    refused = [i for i in state.get("imports", []) if i["outcome"] == "refused"]
    for i in refused:
        print(f"git-ledger-harbor: trial {i['trial']}: its import was refused (listed; the job import below judges it again)", file=sys.stderr)
    code = 0
    if ran.returncode != 0:
        print(f"git-ledger-harbor: harbor run exited {ran.returncode}", file=sys.stderr)
        code = ran.returncode
    job_dir = state.get("job_dir")
    if not job_dir:
        print("git-ledger-harbor: the plugin did not run (no job directory known): nothing imported", file=sys.stderr)
        return code or 1
    # 3. The job: every trial the hook could not import, and the job.log rule.
    argv = [*ledger, "import"]
    if not args.ref:
        argv += [declaration, args.ledger]
    argv += [*_target(args), "--repo", repo, "--revision", revision, "--harbor", job_dir]
    if args.runtime_identity:
        argv += ["--runtime-identity", args.runtime_identity]
    if args.skip_undeclared:
        argv.append("--skip-undeclared")
    imported = subprocess.run(argv)
    if imported.returncode != 0:
        print(f"git-ledger-harbor: the import of {job_dir} exited {imported.returncode}", file=sys.stderr)
        code = code or imported.returncode
    if failed:
        for i in failed:
            print(f"git-ledger-harbor: trial {i['trial']}: import failed (exit {i['exit']})", file=sys.stderr)
        code = code or 1
    return code


def _runtime_requirements() -> dict:
    """What a declaration requires of this runtime: this interpreter (Harbor's), psutil, and
    harbor as the native provider and as a package (the keys `git ledger runtime-identity`
    measures)."""
    import platform
    from importlib import metadata

    harbor = metadata.version("harbor")
    try:
        psutil = metadata.version("psutil")
    except metadata.PackageNotFoundError:
        psutil = None
    out = {"python": platform.python_version()}
    if psutil is not None:
        out["psutil"] = psutil
    out["native_provider"] = f"harbor {harbor}"
    out["packages"] = {"harbor": harbor}
    return out


def draft(args) -> int:
    tasks = draft_tasks(
        Path(args.path),
        repo=Path(args.repo or "."),
        revision=args.revision,
        agent=args.agent,
        reward=args.reward,
        pass_at_least=args.pass_at_least,
        evidence=args.evidence,
        limits=json.loads(args.limits),
    )
    doc = tasks
    if args.into:
        try:
            doc = json.loads(Path(args.into).read_text())
        except ValueError as error:
            raise ValueError(f"{args.into}: not JSON: {error}") from None
        if not isinstance(doc, dict) or doc.get("format") != "campaign-declaration/1":
            raise ValueError(f"{args.into}: not a campaign draft (a JSON object with format campaign-declaration/1)")
        doc["tasks"] = tasks
        if "runtime_requirements" not in doc:
            doc["runtime_requirements"] = _runtime_requirements()
    out = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(out)
    else:
        sys.stdout.write(out)
    if args.into:
        names = ", ".join(t["harbor"]["task"] for t in tasks)
        where = args.output or "standard output"
        print(f"git-ledger-harbor: draft {doc.get('id')}: {len(tasks)} harbor tasks ({names}), written to {where}; next: git ledger pin", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="git-ledger-harbor", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="check readiness, run `harbor run` with the plugin, import the job")
    r.add_argument("declaration", nargs="?", help="the pinned declaration (campaign.json); in ref mode, default: the one the ledger ref holds")
    r.add_argument("--ledger", help="file mode: the ledger file")
    r.add_argument("--ref", help="ref mode: the ledger ref (or declaration id)")
    r.add_argument("--repo", help="the harness repository (default: the current directory)")
    r.add_argument("--runtime-identity", help="passed to every import (default: this interpreter's, written by git ledger runtime-identity)")
    r.add_argument("--skip-undeclared", action="store_true", help="passed to every import")
    r.epilog = "Everything after -- is passed to `harbor run`."
    r.set_defaults(func=run)
    d = sub.add_parser("draft", help="the harbor tasks of a draft, from a task or dataset directory")
    d.add_argument("path", help="a Harbor task directory (task.toml) or a directory of them, inside the repository")
    d.add_argument("--repo", help="the repository (default: the current directory)")
    d.add_argument("--revision", default="HEAD", help="the revision whose tree is hashed (default HEAD)")
    d.add_argument("--agent", required=True, help="the Harbor agent the trials must run")
    d.add_argument("--reward", default="reward", help="the reward key that decides (default: reward)")
    d.add_argument("--pass-at-least", type=float, default=1.0, help="the least reward that passes (default 1.0)")
    d.add_argument("--evidence", choices=["live", "fixture"], help="default: fixture for oracle and nop, else live")
    d.add_argument("--limits", default='{"agent_seconds": null}', help="the limits as a JSON object (null: the task's own timeout from task.toml)")
    d.add_argument("--into", metavar="DRAFT", help="a campaign draft whose tasks these replace: write the whole draft (its runtime_requirements, when it has none: this interpreter's)")
    d.add_argument("-o", "--output", help="write the tasks (or the draft) here (default: standard output)")
    d.set_defaults(func=draft)
    argv = sys.argv[1:] if argv is None else list(argv)
    harbor_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, harbor_args = argv[:at], argv[at + 1 :]
    args = p.parse_args(argv)
    args.harbor_args = harbor_args
    try:
        return args.func(args)
    except (ValueError, RuntimeError, OSError, subprocess.SubprocessError) as error:
        print(f"git-ledger-harbor: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
