"""Hidden tests for ladder-1-transactional-import (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import importer  # noqa: E402


def rows(*ids):
    return [{"id": i, "owner": f"owner-{i}", "balance_cents": 100} for i in ids]


def all_ids(path):
    conn = importer.connect(path)
    try:
        return sorted(r[0] for r in conn.execute("SELECT id FROM accounts"))
    finally:
        conn.close()


def test_valid_import_is_committed(tmp_path):
    db = str(tmp_path / "a.db")
    conn = importer.connect(db)
    assert importer.import_rows(conn, rows("a", "b", "c")) == 3
    assert all_ids(db) == ["a", "b", "c"]


def test_invalid_row_keeps_nothing(tmp_path):
    db = str(tmp_path / "a.db")
    conn = importer.connect(db)
    bad = rows("a", "b") + [{"id": "c", "owner": "", "balance_cents": 1}] + rows("d")
    with pytest.raises(importer.RowError) as info:
        importer.import_rows(conn, bad)
    assert info.value.index == 2
    assert all_ids(db) == []


def test_duplicate_id_keeps_nothing_and_names_row(tmp_path):
    db = str(tmp_path / "a.db")
    conn = importer.connect(db)
    with pytest.raises(importer.RowError) as info:
        importer.import_rows(conn, rows("a", "b", "a", "c"))
    assert info.value.index == 2
    assert all_ids(db) == []


def test_existing_rows_untouched_by_failed_import(tmp_path):
    db = str(tmp_path / "a.db")
    conn = importer.connect(db)
    importer.import_rows(conn, rows("x"))
    with pytest.raises(importer.RowError) as info:
        importer.import_rows(conn, rows("y", "z") + [{"id": "w", "owner": "o", "balance_cents": True}])
    assert info.value.index == 2
    assert all_ids(db) == ["x"]
    assert importer.import_rows(conn, rows("y")) == 1
    assert all_ids(db) == ["x", "y"]
