"""git-ledger's Inspect AI hook: import each eval log into a ledger as soon as its task ends.

Installed with `pip install ./inspect-hook`; Inspect finds it through the `inspect_ai`
entry-point group (see `_registry`). The hook is off unless `GIT_LEDGER_REF` or
`GIT_LEDGER_DECLARATION` is set; `config_from_env` lists every variable it reads.
"""

from ._hook import Config, GitLedgerHook, config_from_env, import_log

__all__ = ["Config", "GitLedgerHook", "config_from_env", "import_log"]
