"""Unit tests of the hook's configuration and command (run by tests/cli/inspect_runs.rs with the
venv's Python: `python -m unittest test_hook`). Each rule from both sides."""

import unittest

from git_ledger_inspect import config_from_env
from git_ledger_inspect._hook import local_path


class ConfigFromEnv(unittest.TestCase):
    def test_off_without_a_mode(self):
        self.assertIsNone(config_from_env({}))
        self.assertIsNone(config_from_env({"GIT_LEDGER_BIN": "x", "GIT_LEDGER_REPO": "/r"}))
        self.assertIsNone(config_from_env({"GIT_LEDGER_REF": ""}))

    def test_ref_mode(self):
        c = config_from_env({"GIT_LEDGER_REF": "camp", "GIT_LEDGER_REPO": "/r"})
        self.assertEqual(c.problems, ())
        self.assertEqual(
            c.argv("/l/x.eval"),
            ["git-ledger", "import", "--ref", "camp", "--repo", "/r", "--inspect", "/l/x.eval"],
        )

    def test_file_mode_needs_both_files(self):
        c = config_from_env({"GIT_LEDGER_DECLARATION": "d.json", "GIT_LEDGER_LEDGER": "l.json"})
        self.assertEqual(c.problems, ())
        self.assertEqual(
            c.argv("x.eval"), ["git-ledger", "import", "d.json", "l.json", "--inspect", "x.eval"]
        )
        c = config_from_env({"GIT_LEDGER_DECLARATION": "d.json"})
        self.assertEqual(c.problems, ("file mode needs GIT_LEDGER_LEDGER too",))
        c = config_from_env({"GIT_LEDGER_LEDGER": "l.json"})
        self.assertEqual(c.problems, ("file mode needs GIT_LEDGER_DECLARATION too",))

    def test_not_both_modes(self):
        c = config_from_env(
            {"GIT_LEDGER_REF": "camp", "GIT_LEDGER_DECLARATION": "d", "GIT_LEDGER_LEDGER": "l"}
        )
        self.assertEqual(len(c.problems), 1)
        self.assertIn("not both", c.problems[0])

    def test_bin_is_split_like_shell_words(self):
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_BIN": "git ledger"})
        self.assertEqual(c.argv("x")[:3], ["git", "ledger", "import"])
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_BIN": "'/opt/my tools/git-ledger'"})
        self.assertEqual(c.argv("x")[0], "/opt/my tools/git-ledger")
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_BIN": "  "})
        self.assertEqual(c.problems, ("GIT_LEDGER_BIN is empty",))

    def test_options(self):
        c = config_from_env(
            {
                "GIT_LEDGER_REF": "c",
                "GIT_LEDGER_RUNTIME_IDENTITY": "rt.json",
                "GIT_LEDGER_SKIP_UNDECLARED": "true",
                "GIT_LEDGER_TIMEOUT": "12.5",
            }
        )
        self.assertEqual(
            c.argv("x")[-4:], ["x", "--runtime-identity", "rt.json", "--skip-undeclared"]
        )
        self.assertEqual(c.timeout, 12.5)
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_SKIP_UNDECLARED": "0"})
        self.assertNotIn("--skip-undeclared", c.argv("x"))

    def test_timeout_must_be_positive(self):
        for bad in ("0", "-1", "soon", "nan"):
            c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_TIMEOUT": bad})
            self.assertEqual(len(c.problems), 1, bad)
            self.assertIn("GIT_LEDGER_TIMEOUT", c.problems[0])


class LocalPath(unittest.TestCase):
    def test_local_and_file_urls(self):
        self.assertEqual(local_path("/l/x.eval"), "/l/x.eval")
        self.assertEqual(local_path("logs/x.eval"), "logs/x.eval")
        self.assertEqual(local_path("file:///l/x.eval"), "/l/x.eval")

    def test_remote_and_missing(self):
        self.assertIsNone(local_path("s3://bucket/x.eval"))
        self.assertIsNone(local_path(""))
        self.assertIsNone(local_path(None))


if __name__ == "__main__":
    unittest.main()
