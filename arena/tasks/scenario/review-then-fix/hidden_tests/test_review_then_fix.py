"""Hidden tests for review-then-fix (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed")))
sys.path.insert(0, TARGET)

from slug import slugify  # noqa: E402


def test_review_written():
    path = os.path.join(TARGET, "REVIEW.md")
    assert os.path.isfile(path), "REVIEW.md is missing"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert "slugify" in text
    bullets = [line for line in text.splitlines() if line.lstrip().startswith("- ")]
    assert len(bullets) >= 3


def test_accents_reduced_to_ascii():
    assert slugify("Cr\u00e8me Br\u00fbl\u00e9e") == "creme-brulee"
    assert slugify("na\u00efve caf\u00e9 \u2603 ok") == "naive-cafe-ok"


def test_separators_collapsed():
    assert slugify("a  --  b") == "a-b"
    assert slugify("  Hello, World!  ") == "hello-world"
    assert slugify("!!!") == ""


def test_max_length_has_no_trailing_hyphen():
    assert slugify("Hello big world", max_length=6) == "hello"
    assert slugify("Hello big world", max_length=9) == "hello-big"
    assert len(slugify("x" * 50, max_length=10)) == 10
