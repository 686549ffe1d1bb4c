"""The module the `inspect_ai` entry point names: importing it registers the hook with Inspect."""

from inspect_ai.hooks import hooks

from ._hook import GitLedgerHook


@hooks(
    name="git_ledger",
    description="Imports each log into a git-ledger ledger.",
)
def git_ledger_hook() -> type[GitLedgerHook]:
    return GitLedgerHook
