"""`git-ledger-inspect`: the way to run Inspect that cannot spoil a campaign
(docs/reference/workflow.md, rule 1).

    git-ledger-inspect draft TASK… [options] [-o DRAFT]          a draft from the task itself
    git-ledger-inspect check LEDGER… -- eval TASK… [inspect args]  readiness, nothing run
    git-ledger-inspect run LEDGER… -- eval TASK… [inspect args]    check, run, import
    git-ledger-inspect runtime-identity [-o FILE]                   this interpreter's identity

LEDGER is `--ref REF` (ref mode: the declaration is read from the ledger ref) or
`--declaration FILE --ledger FILE` (file mode). Exit status: 0 done; 1 could not run (Inspect
failed, git-ledger could not run); 2 refused (not ready, an import refused); 64 usage.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Sequence

from ._binary import binary_from_env
from ._hook import local_path

EXIT_OK, EXIT_FAILED, EXIT_REFUSED, EXIT_USAGE = 0, 1, 2, 64
PREFIX = "git-ledger-inspect"
MANIFESTS = ("eval-set.json", "logs.json")


class Usage(Exception):
    pass


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def refused(lines: list[str], hint: str | None = None) -> int:
    say(f"{PREFIX}: refused ({len(lines)} reason{'s' if len(lines) != 1 else ''}):")
    for line in lines:
        say(f"  {line}")
    if hint:
        say(f"hint: {hint}")
    return EXIT_REFUSED


class Ledger:
    """The ledger a command works on, and the git-ledger binary it runs."""

    def __init__(self, args: argparse.Namespace):
        command, problems = binary_from_env(os.environ)
        if problems:
            raise Usage("; ".join(problems))
        self.command = command
        self.ref: str | None = args.ref
        self.declaration: str | None = args.declaration
        self.ledger: str | None = getattr(args, "ledger", None)
        self.repo: str | None = args.repo
        needs_ledger = args.cmd == "run"
        if self.ref is not None and (self.declaration or self.ledger):
            raise Usage("give either --ref or --declaration (and --ledger), not both")
        if self.ref is None and self.declaration is None:
            raise Usage("give --ref REF (ref mode) or --declaration FILE --ledger FILE (file mode)")
        if self.ref is None and needs_ledger and self.ledger is None:
            raise Usage("file mode needs --ledger FILE too")

    def git_ledger(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = [*self.command, *args]
        try:
            return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        except OSError as error:
            return subprocess.CompletedProcess(argv, 1, "", f"could not run {argv[0]}: {error}\n")

    def repo_args(self) -> list[str]:
        return ["--repo", self.repo] if self.repo else []

    def ledger_args(self) -> list[str]:
        if self.ref is not None:
            return ["--ref", self.ref]
        return [self.declaration or "", self.ledger or ""]

    def declaration_file(self, scratch: str) -> tuple[str | None, str]:
        """The declaration's path (read from the ref in ref mode), or None and why not."""
        if self.ref is None:
            return self.declaration, ""
        done = self.git_ledger("show", "--ref", self.ref, "--declaration", *self.repo_args())
        if done.returncode != 0:
            return None, done.stderr + done.stdout
        path = os.path.join(scratch, f"declaration-of-{self.ref.replace('/', '-')}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(done.stdout)
        return path, ""


def add_ledger_options(p: argparse.ArgumentParser, with_ledger: bool) -> None:
    p.add_argument("--ref", help="ref mode: the ledger ref or declaration id")
    p.add_argument("--declaration", metavar="FILE", help="file mode: the pinned declaration")
    if with_ledger:
        p.add_argument("--ledger", metavar="FILE", help="file mode: the ledger file")
    p.add_argument("--repo", metavar="DIR", help="the repository (default: the current one)")
    p.add_argument(
        "--skip-undeclared", action="store_true", help="samples no task declares are skipped, not refused"
    )
    p.add_argument("inspect", nargs=argparse.REMAINDER, help="-- eval|eval-set|eval-retry TASK… [inspect options]")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog=PREFIX, description="Run Inspect AI evaluations into a git-ledger ledger, with no trap."
    )
    sub = top.add_subparsers(dest="cmd", required=True)

    d = sub.add_parser("draft", help="generate a campaign draft from Inspect tasks (no model called)")
    d.add_argument("tasks", nargs="+", metavar="TASK", help="file.py@task, file.py, or a package task")
    d.add_argument("-T", dest="t", action="append", default=[], metavar="NAME=VALUE", help="a task argument, as inspect eval -T")
    d.add_argument("--task-config", metavar="FILE", help="task arguments from a file, as inspect eval --task-config")
    d.add_argument("--id", help="the declaration id (default: the task's name)")
    d.add_argument("--title", help="the declaration's title")
    d.add_argument("--epochs", type=int, help="repetitions (default: the task's epochs, else 1)")
    d.add_argument("--scorer", help="the score that is the verdict (default: the task's first scorer)")
    d.add_argument("--pass", dest="pass_values", action="append", default=[], metavar="VALUE", help="a score value that is a PASS (repeatable; default C); a number is read as a number")
    d.add_argument("--evidence", choices=["live", "fixture"], help="default: fixture when the model is mockllm, else live")
    d.add_argument("--definition", metavar="DIR", help="the tree that pins the task (default: the task file's directory)")
    d.add_argument("--profile", required=True, metavar="FILE", help="the profile file; written from --model (or the task's model) when it does not exist")
    d.add_argument("--model", help="the main model, for a profile file that does not exist yet")
    d.add_argument("--policy", action="append", default=[], metavar="FILE", help="a policy file (repeatable)")
    d.add_argument("--runner-tools", required=True, metavar="DIR", help="the runner's tree")
    for key in ("message_limit", "token_limit"):
        d.add_argument("--" + key.replace("_", "-"), dest=key, type=int, help=f"declare {key} (the run must set it)")
    for key in ("time_limit", "working_limit", "cost_limit"):
        d.add_argument("--" + key.replace("_", "-"), dest=key, type=float, help=f"declare {key} (the run must set it)")
    d.add_argument("--limit", dest="sample_limit", type=int, metavar="N", help="declare only the first N samples (run with --limit N)")
    d.add_argument("-o", "--output", metavar="FILE", help="write the draft here (default: standard output)")

    c = sub.add_parser("check", help="is the run ready? git ledger check --ready, then the tasks through Inspect")
    add_ledger_options(c, with_ledger=False)

    r = sub.add_parser("run", help="check, run inspect with the git-ledger hook, import every log; non-zero on any failure")
    add_ledger_options(r, with_ledger=True)
    r.add_argument("--runtime-identity", metavar="FILE", help="the runtime identity (default: this interpreter's, written by the tool)")

    i = sub.add_parser("runtime-identity", help="write this interpreter's runtime identity (import.md)")
    i.add_argument("-o", "--output", metavar="FILE", help="default: standard output")
    return top


def inspect_argv(args: argparse.Namespace) -> list[str]:
    rest = list(args.inspect)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        raise Usage("give the Inspect command after --: -- eval TASK… [inspect options]")
    return rest


def parse_value(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (int, float, str)) and not isinstance(value, bool) else text


def cmd_draft(args: argparse.Namespace) -> int:
    from ._draft import DraftError, Options, generate, profile_for
    from ._tasks import TaskError, load, quiet_stdout

    with quiet_stdout():
        from inspect_ai._cli.util import parse_cli_config

        task_args = parse_cli_config(tuple(args.t), args.task_config)
    try:
        infos = load(list(args.tasks), task_args)
    except TaskError as error:
        return refused([str(error)])
    limits = {
        k: getattr(args, k)
        for k in ("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit")
        if getattr(args, k) is not None
    }
    opts = Options(
        id=args.id,
        title=args.title,
        repetitions=args.epochs,
        scorer=args.scorer,
        pass_values=[parse_value(v) for v in args.pass_values],
        evidence=args.evidence,
        definition=args.definition,
        profile=args.profile,
        model=args.model,
        policies=list(args.policy),
        runner_tools=args.runner_tools,
        limits=limits,
        sample_limit=args.sample_limit,
    )
    if not os.path.exists(args.profile):
        models = {args.model} if args.model else {i.model for i in infos if i.model}
        if len(models) != 1:
            return refused(
                [f"the profile file {args.profile} does not exist, and no one model to write it from"],
                "pass --model PROVIDER/MODEL (the main model the run uses)",
            )
        opts.model = models.pop()
    try:
        draft = generate(infos, opts, os.getcwd())
    except DraftError as error:
        return refused(error.problems)
    if not os.path.exists(args.profile):
        os.makedirs(os.path.dirname(os.path.abspath(args.profile)), exist_ok=True)
        with open(args.profile, "w", encoding="utf-8") as f:
            f.write(json.dumps(profile_for(opts.model or ""), indent=2) + "\n")
        say(f"{PREFIX}: wrote the profile {args.profile} (model {opts.model}); commit it before pin")
    text = json.dumps(draft, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    n = len(draft["tasks"])
    say(
        f"{PREFIX}: draft {draft['id']}: {n} task{'s' if n != 1 else ''} "
        f"({', '.join(sorted({t['inspect']['task'] for t in draft['tasks']}))}) x "
        f"{draft['repetitions']} repetition{'s' if draft['repetitions'] != 1 else ''}"
        f"{f', written to {args.output}' if args.output else ''}; next: git ledger pin"
    )
    return EXIT_OK


def readiness(ledger: Ledger, args: argparse.Namespace, argv: list[str], scratch: str) -> tuple[int, dict[str, Any] | None]:
    """`git ledger check --ready`, then the run's tasks through Inspect. (status, parsed run)."""
    from ._ready import task_problems, tree_problems
    from ._tasks import TaskError, load, parse_eval_args

    decl_path, why = ledger.declaration_file(scratch)
    if decl_path is None:
        say(why.rstrip())
        return (EXIT_REFUSED if "refused" in why else EXIT_FAILED), None
    done = ledger.git_ledger("check", decl_path, "--ready", *ledger.repo_args())
    out = (done.stdout + done.stderr).rstrip()
    if out:
        say(out)
    if done.returncode != 0:
        return done.returncode, None
    try:
        run = parse_eval_args(argv)
        if run["command"] == "eval-retry":
            infos = []
        else:
            infos = load(run["tasks"], run["task_args"], run["selection"])
    except TaskError as error:
        return refused([str(error)]), None
    with open(decl_path, encoding="utf-8") as f:
        declaration = json.load(f)
    problems = task_problems(declaration, run, infos, args.skip_undeclared) if infos else []
    problems += tree_problems(infos, run["log_dir"])
    if problems:
        return refused(problems), None
    names = ", ".join(sorted({i.name for i in infos})) or "the retried tasks"
    say(f"{PREFIX}: ready: {names} as declared (scorers, samples, epochs, limits, task arguments)")
    return EXIT_OK, run


def cmd_check(args: argparse.Namespace) -> int:
    ledger = Ledger(args)
    argv = inspect_argv(args)
    with tempfile.TemporaryDirectory(prefix="git-ledger-inspect-") as scratch:
        status, _ = readiness(ledger, args, argv, scratch)
    return status


def log_files(log_dir: str) -> set[str]:
    try:
        names = os.listdir(log_dir)
    except OSError:
        return set()
    return {
        os.path.join(log_dir, n)
        for n in names
        if (n.endswith(".eval") or n.endswith(".json")) and n not in MANIFESTS and not n.startswith(".")
    }


def cmd_run(args: argparse.Namespace) -> int:
    ledger = Ledger(args)
    argv = inspect_argv(args)
    with tempfile.TemporaryDirectory(prefix="git-ledger-inspect-") as scratch:
        status, run = readiness(ledger, args, argv, scratch)
        if status != EXIT_OK or run is None:
            say(f"{PREFIX}: not ready; the run was not started")
            return status
        identity = args.runtime_identity
        if identity is None:
            from ._runtime import identity_bytes

            identity = os.path.join(scratch, "runtime-identity.json")
            with open(identity, "wb") as f:
                f.write(identity_bytes())
        report = os.path.join(scratch, "hook-report.jsonl")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_LEDGER_")}
        env.pop("GIT_LEDGER", None)
        env["GIT_LEDGER"] = " ".join(_quote(c) for c in ledger.command)
        if ledger.ref is not None:
            env["GIT_LEDGER_REF"] = ledger.ref
        else:
            env["GIT_LEDGER_DECLARATION"] = os.path.abspath(ledger.declaration or "")
            env["GIT_LEDGER_LEDGER"] = os.path.abspath(ledger.ledger or "")
        if ledger.repo:
            env["GIT_LEDGER_REPO"] = os.path.abspath(ledger.repo)
        env["GIT_LEDGER_RUNTIME_IDENTITY"] = os.path.abspath(identity)
        if args.skip_undeclared:
            env["GIT_LEDGER_SKIP_UNDECLARED"] = "1"
        env["GIT_LEDGER_INSPECT_REPORT"] = report
        log_dir = run["log_dir"]
        before = log_files(log_dir)
        say(f"{PREFIX}: running inspect {' '.join(argv)}")
        try:
            inspect_status = subprocess.call([sys.executable, "-m", "inspect_ai", *argv], env=env)
        except OSError as error:
            say(f"{PREFIX}: could not run Inspect: {error}")
            inspect_status = EXIT_FAILED
        hooked: dict[str, bool] = {}
        if os.path.exists(report):
            with open(report, encoding="utf-8") as f:
                for line in f:
                    entry = json.loads(line)
                    path = local_path(entry.get("log"))
                    if path is not None:
                        hooked[os.path.abspath(path)] = hooked.get(os.path.abspath(path), False) or entry["imported"]
        logs = sorted({os.path.abspath(p) for p in log_files(log_dir) - before} | set(hooked))
        return settle(ledger, args, identity, logs, hooked, inspect_status)


def settle(
    ledger: Ledger,
    args: argparse.Namespace,
    identity: str,
    logs: list[str],
    hooked: dict[str, bool],
    inspect_status: int,
) -> int:
    """Import every log of the run again (a sample the hook imported is skipped as already in
    the ledger, so this proves each is there; one the hook missed is imported now)."""
    failures: list[str] = []
    refusals = 0
    if inspect_status != 0:
        failures.append(f"inspect exited with status {inspect_status}")
    if not logs:
        failures.append("the run wrote no log")
    for log in logs:
        if not os.path.exists(log):
            if hooked.get(log):
                say(f"{PREFIX}: {log}: imported by the hook, since removed by Inspect")
                continue
            failures.append(f"{log}: the hook could not import it and the log is gone")
            continue
        extra = ["--skip-undeclared"] if args.skip_undeclared else []
        done = ledger.git_ledger(
            "import", *ledger.ledger_args(), *ledger.repo_args(), "--inspect", log,
            "--runtime-identity", identity, *extra, "--json",
        )
        if done.returncode != 0:
            refusals += done.returncode == EXIT_REFUSED
            detail = _reasons(done)
            failures.append(f"{log}: NOT in the ledger (git-ledger import exit {done.returncode}){detail}")
            continue
        status = log_status(log)
        if status != "success":
            failures.append(f"{log}: the run ended with status {status}")
        summary = json.loads(done.stdout)
        now = len(summary.get("imported", []))
        skipped = summary.get("skipped", {})
        already = len(skipped.get("already_in_ledger", []))
        undeclared = len(skipped.get("undeclared", []))
        by = "" if hooked.get(log) else (" (the hook had not imported it)" if log not in hooked else " (the hook's import had failed)")
        say(
            f"{PREFIX}: {log}: every sample in the ledger ({already} imported by the hook, "
            f"{now} now{by}{f', {undeclared} undeclared skipped' if undeclared else ''}); "
            f"{summary.get('filled')} of {summary.get('scheduled')} rows filled"
        )
    if failures:
        say(f"{PREFIX}: FAILED:")
        for f in failures:
            say(f"  {f}")
        return EXIT_REFUSED if refusals else EXIT_FAILED
    say(f"{PREFIX}: done: {len(logs)} log{'s' if len(logs) != 1 else ''}, every sample in the ledger")
    return EXIT_OK


def log_status(log: str) -> str:
    """The log's `status` as Inspect reads it (`started` for a log without its header)."""
    from ._tasks import quiet_stdout

    with quiet_stdout():
        from inspect_ai.log import read_eval_log

        try:
            return str(read_eval_log(log, header_only=True).status)
        except Exception as error:  # Inspect's own reader: any failure is reported, not raised
            return f"unknown (Inspect cannot read the log: {error})"


def _reasons(done: subprocess.CompletedProcess[str]) -> str:
    try:
        value = json.loads(done.stdout)
        reasons = value.get("reasons", [])
        lines = [r if isinstance(r, str) else r.get("text") or json.dumps(r) for r in reasons]
    except (ValueError, AttributeError):
        lines = [l for l in (done.stderr + done.stdout).splitlines() if l.strip()]
    return "".join(f"\n    {l}" for l in lines)


def _quote(word: str) -> str:
    import shlex

    return shlex.quote(word)


def cmd_runtime_identity(args: argparse.Namespace) -> int:
    from ._runtime import identity_bytes

    data = identity_bytes()
    if args.output:
        with open(args.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser().parse_args(argv)
    except SystemExit as exit:
        return EXIT_OK if exit.code == 0 else EXIT_USAGE
    try:
        return {
            "draft": cmd_draft,
            "check": cmd_check,
            "run": cmd_run,
            "runtime-identity": cmd_runtime_identity,
        }[args.cmd](args)
    except Usage as error:
        say(f"{PREFIX}: usage error: {error}")
        return EXIT_USAGE


def entry() -> None:
    sys.exit(main())
