"""The runtime identity of the running interpreter, in the shape `git ledger import
--runtime-identity FILE` reads (import.md, docs/schemas/runtime-identity.schema.json):

    {"python": "3.11.7", "psutil": "7.2.2", "native_provider": "inspect_ai 0.3.285",
     "packages": {"inspect_ai": "0.3.285", ...}, "dependencies": ["name==version", ...]}

`packages` names inspect_ai and every installed distribution that extends Inspect (registers
an `inspect_ai` entry point: task packages such as inspect_evals, this package); `dependencies`
is the interpreter's `pip freeze`, sorted (editable installs left out: they have no version).
The same interpreter gives the same bytes.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from importlib import metadata
from typing import Any


def inspect_version() -> str:
    return metadata.version("inspect_ai")


def extension_packages() -> dict[str, str]:
    """inspect_ai and every distribution with an `inspect_ai` entry point, by name."""
    packages = {"inspect_ai": inspect_version()}
    for dist in metadata.distributions():
        if any(ep.group == "inspect_ai" for ep in dist.entry_points):
            name = dist.metadata["Name"]
            if name:
                packages[name] = dist.version
    return dict(sorted(packages.items()))


def requirements(extra_packages: dict[str, str] | None = None) -> dict[str, Any]:
    """What a declaration requires of this runtime (`runtime_requirements`): the interpreter,
    psutil, inspect_ai as the native provider and as a package, and `extra_packages`."""
    import psutil

    packages = {"inspect_ai": inspect_version(), **(extra_packages or {})}
    return {
        "python": platform.python_version(),
        "psutil": psutil.__version__,
        "native_provider": f"inspect_ai {inspect_version()}",
        "packages": dict(sorted(packages.items())),
    }


def freeze() -> list[str]:
    """`pip freeze --exclude-editable` of this interpreter: the `name==version` lines, sorted."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    return sorted(line.strip() for line in done.stdout.splitlines() if "==" in line)


def identity() -> dict[str, Any]:
    """The runtime identity of this interpreter."""
    value = requirements()
    value["packages"] = extension_packages()
    value["dependencies"] = freeze()
    return value


def identity_bytes() -> bytes:
    return (json.dumps(identity(), indent=2, ensure_ascii=False) + "\n").encode()
