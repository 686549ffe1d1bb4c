"""Which git-ledger binary to run: `GIT_LEDGER`, as the Git hooks read it.

`GIT_LEDGER_BIN`, the name the Inspect hook read before 0.2, is still read when `GIT_LEDGER` is
not set. The value is split like shell words, so `git ledger` works.
"""

from __future__ import annotations

import shlex
from typing import Mapping

VARIABLE = "GIT_LEDGER"
OLD_VARIABLE = "GIT_LEDGER_BIN"
DEFAULT = "git-ledger"


def binary_from_env(env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The command that runs git-ledger, and the problems with its configuration."""
    for name in (VARIABLE, OLD_VARIABLE):
        value = env.get(name)
        if value:
            command = shlex.split(value)
            if not command:
                return [], [f"{name} is empty"]
            return command, []
    return [DEFAULT], []
