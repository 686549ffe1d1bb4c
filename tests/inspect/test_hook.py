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

    def test_git_ledger_names_the_binary_and_the_old_name_is_still_read(self):
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER": "/opt/gl"})
        self.assertEqual(c.argv("x")[0], "/opt/gl")
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER_BIN": "/old/gl"})
        self.assertEqual(c.argv("x")[0], "/old/gl")
        # GIT_LEDGER wins over the old name.
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER": "/new", "GIT_LEDGER_BIN": "/old"})
        self.assertEqual(c.argv("x")[0], "/new")
        c = config_from_env({"GIT_LEDGER_REF": "c", "GIT_LEDGER": " "})
        self.assertEqual(c.problems, ("GIT_LEDGER is empty",))

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


class Drafts(unittest.TestCase):
    def test_task_ids_fold_what_an_id_cannot_hold(self):
        from git_ledger_inspect._draft import task_ids

        self.assertEqual(task_ids("arith", ["add-1", 7]), ["inspect/arith-add-1", "inspect/arith-7"])
        self.assertEqual(task_ids("inspect_evals/gsm8k", ["a b/c"]), ["inspect/gsm8k-a-b-c"])
        # Two ids that fold into one, and an id too long: a hash of the sample id ends them.
        a, b = task_ids("t", ["x y", "x/y"])
        self.assertEqual(a, "inspect/t-x-y")
        self.assertRegex(b, r"^inspect/t-x-y-[0-9a-f]{10}$")
        (long,) = task_ids("t", ["z" * 200])
        self.assertLessEqual(len(long), len("inspect/") + 100)
        self.assertNotIn("..", task_ids("t", ["a..b"])[0])

    def test_repeated_and_missing_sample_ids(self):
        from git_ledger_inspect._draft import sample_id_problems
        from git_ledger_inspect._tasks import TaskInfo

        def info(ids):
            return TaskInfo("s", "t", None, None, ["match"], ids, None)

        self.assertEqual(sample_id_problems(info(["a", 2, "2"])), [])
        (p,) = sample_id_problems(info(["a", "b", "a"]))
        self.assertIn('sample id "a" is repeated (samples #1 and #3)', p)
        (p,) = sample_id_problems(info(["a", None]))
        self.assertIn("sample #2 has no id", p)
        many = sample_id_problems(info([None] * 25))
        self.assertEqual(len(many), 21)
        self.assertEqual(many[-1], "… and 5 more")


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
