"""Hidden tests for feature-csv-export (run with TARGET=<working copy>)."""

import csv
import datetime as dt
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

from expenses import Expense, Report  # noqa: E402


def sample():
    r = Report("March")
    r.add(Expense(dt.date(2024, 3, 5), "travel", 1250, "taxi, airport"))
    r.add(Expense(dt.date(2024, 3, 6), "meals", 899, 'lunch "team"'))
    r.add(Expense(dt.date(2024, 3, 7), "refund", -300, "line one\nline two"))
    return r


def test_empty_report_is_header_only():
    assert Report("empty").to_csv() == "date,category,amount,note\r\n"


def test_amounts_have_two_places():
    rows = list(csv.reader(io.StringIO(sample().to_csv(), newline="")))
    assert [row[2] for row in rows[1:]] == ["12.50", "8.99", "-3.00"]
    r = Report("big").add(Expense(dt.date(2024, 1, 1), "rent", 123456789, ""))
    assert "1234567.89" in r.to_csv()


def test_quoting_follows_rfc4180():
    text = sample().to_csv()
    assert '"taxi, airport"' in text
    assert '"lunch ""team"""' in text
    assert '"line one\nline two"' in text
    assert text.startswith("date,category,amount,note\r\n2024-03-05,travel,12.50,")
    assert text.endswith("\r\n")


def test_csv_round_trips_through_reader():
    r = sample()
    rows = list(csv.reader(io.StringIO(r.to_csv(), newline="")))
    assert rows[0] == ["date", "category", "amount", "note"]
    assert [(row[0], row[1], row[3]) for row in rows[1:]] == [
        (e.date.isoformat(), e.category, e.note) for e in r.expenses
    ]


def test_json_unchanged():
    data = json.loads(sample().to_json())
    assert data["total_cents"] == 1849
    assert data["expenses"][0] == {"date": "2024-03-05", "category": "travel",
                                   "amount_cents": 1250, "note": "taxi, airport"}
