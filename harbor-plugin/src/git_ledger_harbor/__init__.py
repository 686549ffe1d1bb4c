"""git-ledger's Harbor plugin (docs/harbor.md).

- `GitLedgerPlugin` (entry point `git-ledger` of the `harbor.plugins` group): a job plugin
  whose trial hook (`TrialEvent.END`, which Harbor calls before its retry logic deletes a
  failed trial's directory) imports each trial into the ledger at once.
- `git-ledger-harbor run`: checks readiness, runs `harbor run` with the plugin, imports the
  job, exits non-zero when any step fails.
- `git-ledger-harbor draft`: writes the `harbor` blocks of a draft from a task directory or a
  dataset directory, the digest computed by Harbor's own packager.

The binary is `$GIT_LEDGER` (split like a shell word list; default `git-ledger`).
"""

from ._plugin import Config, GitLedgerPlugin, config_from_env

__all__ = ["Config", "GitLedgerPlugin", "config_from_env"]
