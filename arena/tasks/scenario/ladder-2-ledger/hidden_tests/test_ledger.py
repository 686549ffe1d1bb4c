"""Hidden tests for ladder-2-ledger (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import ledger  # noqa: E402


def test_balanced_posting_updates_balances():
    book = ledger.Ledger()
    book.post("rent", [("cash", -120000), ("rent", 120000)])
    book.post("split", [("cash", -3000), ("food", 2000), ("tips", 1000)])
    assert book.balance("cash") == -123000
    assert book.balance("food") == 2000
    assert book.balance("nobody") == 0


def test_unbalanced_posting_refused():
    book = ledger.Ledger()
    with pytest.raises(ledger.UnbalancedPosting):
        book.post("typo", [("cash", -100), ("rent", 101)])
    assert issubclass(ledger.UnbalancedPosting, ValueError)
    with pytest.raises(ValueError):
        book.post("single", [("cash", 100)])


def test_refused_posting_leaves_no_trace(tmp_path):
    book = ledger.Ledger(str(tmp_path / "l.db"))
    book.post("ok", [("cash", -5), ("fees", 5)])
    for bad in (
        [("cash", -100), ("rent", 101)],
        [("cash", -100), ("rent", 100.0)],
        [("cash", -100), ("", 100)],
        [("cash", 0), ("rent", 0)],
    ):
        with pytest.raises(ValueError):
            book.post("bad", bad)
    assert book.posting_count() == 1
    assert book.trial_balance() == {"cash": -5, "fees": 5}
    again = ledger.Ledger(str(tmp_path / "l.db"))
    assert again.trial_balance() == {"cash": -5, "fees": 5}


def test_trial_balance_sums_to_zero():
    book = ledger.Ledger()
    book.post("a", [("cash", -700), ("stock", 700)])
    book.post("b", [("stock", -200), ("cogs", 200)])
    with pytest.raises(ValueError):
        book.post("c", [("cash", 50), ("sales", -40)])
    tb = book.trial_balance()
    assert tb == {"cash": -700, "cogs": 200, "stock": 500}
    assert sum(tb.values()) == 0
