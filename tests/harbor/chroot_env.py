"""A Harbor environment for tests: each trial gets a directory that is the root of its own
filesystem view, and every command runs there, chrooted inside a private mount namespace
(`unshare -m`, as root) with the host's /usr, /etc and /dev bound read-only-ish beneath it.
No containers, no network set-up: enough for tasks that need only the host's tools.

`FlakyChrootEnvironment` fails the first start of every trial whose name is listed (by task
name prefix) in $GIT_LEDGER_TEST_FLAKY, once per trial name (a marker under
$GIT_LEDGER_TEST_FLAKY_DIR), with Harbor's retryable `EnvironmentStartTimeoutError`.

`BarrierChrootEnvironment` holds every trial in `stop()` until $GIT_LEDGER_TEST_BARRIER trials
have reached it (markers under $GIT_LEDGER_TEST_BARRIER_DIR; 120 s at most), so that their
`TrialEvent.END` hooks, which Harbor calls right after `stop()`, run at the same moment: the
concurrent imports the plugin must survive.
"""

import asyncio
import os
import time
import shlex
import shutil
import tempfile
from pathlib import Path

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.trial.errors import EnvironmentStartTimeoutError

HOST_DIRS = ("usr", "etc", "dev")
LINKS = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64", "sbin": "usr/sbin"}


class ChrootEnvironment(BaseEnvironment):
    @staticmethod
    def type() -> str:
        return "git-ledger-chroot"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self):
        pass

    def _root(self) -> Path:
        return Path(self._sandbox) / "root"

    def _inside(self, path: str) -> Path:
        return self._root() / str(path).lstrip("/")

    async def start(self, force_build: bool) -> None:
        self._sandbox = tempfile.mkdtemp(prefix="harbor-chroot-")
        root = self._root()
        for d in HOST_DIRS + ("proc", "tmp", "app", "logs/agent", "logs/verifier", "logs/artifacts", "root"):
            (root / d).mkdir(parents=True, exist_ok=True)
        for name, target in LINKS.items():
            if Path("/" + target).exists():
                os.symlink(target, root / name)
        os.chmod(root / "tmp", 0o1777)

    async def stop(self, delete: bool):
        sandbox = getattr(self, "_sandbox", None)
        if sandbox:
            shutil.rmtree(sandbox, ignore_errors=True)

    async def upload_file(self, source_path, target_path: str):
        dest = self._inside(target_path)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, dest)

    async def upload_dir(self, source_dir, target_dir: str):
        shutil.copytree(source_dir, self._inside(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path):
        if getattr(self, "_sandbox", None) is None:
            raise FileNotFoundError(f"{source_path}: the environment never started")
        src = self._inside(source_path)
        if src.is_dir():
            raise IsADirectoryError(source_path)
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target_path)

    async def download_dir(self, source_dir: str, target_dir):
        if getattr(self, "_sandbox", None) is None:
            return  # never started (a failed start): nothing to download
        src = self._inside(source_dir)
        if src.is_dir():
            shutil.copytree(src, target_dir, dirs_exist_ok=True)

    async def exec(self, command, cwd=None, env=None, timeout_sec=None, user=None) -> ExecResult:
        root = self._root()
        workdir = cwd or self.task_env_config.workdir or "/app"
        exports = "".join(
            f"export {k}={shlex.quote(str(v))}; " for k, v in (env or {}).items()
        )
        inner = f"cd {shlex.quote(workdir)} 2>/dev/null || cd /; {exports}{command}"
        mounts = "".join(
            f"mount --rbind /{d} {shlex.quote(str(root / d))} && " for d in HOST_DIRS
        )
        script = (
            f"{mounts}mount -t proc proc {shlex.quote(str(root / 'proc'))} && "
            f"exec chroot {shlex.quote(str(root))} /bin/sh -c {shlex.quote(inner)}"
        )
        proc = await asyncio.create_subprocess_exec(
            "unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LC_ALL": "C"},
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout_sec)
        except asyncio.TimeoutError:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
            await proc.wait()
            raise
        return ExecResult(
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            return_code=proc.returncode,
        )


class FlakyChrootEnvironment(ChrootEnvironment):
    async def start(self, force_build: bool) -> None:
        trial = self.trial_paths.trial_dir.name
        flaky = [t for t in os.environ.get("GIT_LEDGER_TEST_FLAKY", "").split(",") if t]
        marks = Path(os.environ.get("GIT_LEDGER_TEST_FLAKY_DIR", tempfile.gettempdir()))
        if any(trial.startswith(t + "__") for t in flaky):
            mark = marks / f"{trial}.failed-once"
            if not mark.exists():
                marks.mkdir(parents=True, exist_ok=True)
                mark.write_text("failed the first start\n")
                raise EnvironmentStartTimeoutError(f"test environment: first start of {trial} fails on purpose")
        await super().start(force_build)


class BarrierChrootEnvironment(ChrootEnvironment):
    async def stop(self, delete: bool):
        await super().stop(delete)
        n = int(os.environ.get("GIT_LEDGER_TEST_BARRIER", "1"))
        marks = Path(os.environ.get("GIT_LEDGER_TEST_BARRIER_DIR", tempfile.gettempdir()))
        marks.mkdir(parents=True, exist_ok=True)
        (marks / f"{self.trial_paths.trial_dir.name}.stopped").write_text("stopped\n")
        deadline = time.monotonic() + 120
        while len(list(marks.glob("*.stopped"))) < n:
            if time.monotonic() > deadline:
                raise RuntimeError(f"test environment: fewer than {n} trials reached the barrier")
            await asyncio.sleep(0.02)
