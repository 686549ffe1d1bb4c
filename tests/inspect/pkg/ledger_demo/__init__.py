"""A task package as inspect_evals is one, for git-ledger's tests: installed by putting this
directory (tests/inspect/pkg) on PYTHONPATH, where importlib.metadata finds its dist-info and
Inspect its `inspect_ai` entry point; the task is then `ledger_demo/spell`."""
