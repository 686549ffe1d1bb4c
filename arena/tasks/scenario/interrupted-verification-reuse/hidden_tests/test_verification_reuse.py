"""Hidden tests for interrupted-verification-reuse (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import verifycache  # noqa: E402


def make_tree(root, files):
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return str(root)


def test_finished_run_is_reused(tmp_path):
    tree = make_tree(tmp_path / "w", {"a.py": b"x = 1\n"})
    cache = verifycache.VerificationCache(str(tmp_path / "cache.json"))
    digest = verifycache.tree_digest(tree)
    cache.finish(cache.start(digest), passed=True)
    assert cache.reusable(digest) is True
    reopened = verifycache.VerificationCache(str(tmp_path / "cache.json"))
    assert reopened.reusable(digest) is True


def test_interrupted_run_is_not_reused(tmp_path):
    tree = make_tree(tmp_path / "w", {"a.py": b"x = 1\n"})
    cache = verifycache.VerificationCache(str(tmp_path / "cache.json"))
    digest = verifycache.tree_digest(tree)
    cache.start(digest)  # the scripted fault kills the run here
    resumed = verifycache.VerificationCache(str(tmp_path / "cache.json"))
    assert resumed.reusable(digest) is None
    resumed.finish(resumed.start(digest), passed=False)
    assert resumed.reusable(digest) is False


def test_digest_covers_contents_and_paths(tmp_path):
    base = {"pkg/a.py": b"x = 1\n", "pkg/b.py": b"y = 2\n"}
    d0 = verifycache.tree_digest(make_tree(tmp_path / "t0", base))
    assert d0 == verifycache.tree_digest(make_tree(tmp_path / "t1", dict(reversed(list(base.items())))))
    edited = dict(base, **{"pkg/a.py": b"x = 2\n"})
    assert verifycache.tree_digest(make_tree(tmp_path / "t2", edited)) != d0
    moved = {"lib/a.py": b"x = 1\n", "pkg/b.py": b"y = 2\n"}
    assert verifycache.tree_digest(make_tree(tmp_path / "t3", moved)) != d0


def test_result_for_other_tree_is_not_reused(tmp_path):
    cache = verifycache.VerificationCache(str(tmp_path / "cache.json"))
    old = verifycache.tree_digest(make_tree(tmp_path / "old", {"a.py": b"x = 1\n"}))
    new = verifycache.tree_digest(make_tree(tmp_path / "new", {"a.py": b"x = 1  # edited\n"}))
    cache.finish(cache.start(old), passed=True)
    assert cache.reusable(new) is None
