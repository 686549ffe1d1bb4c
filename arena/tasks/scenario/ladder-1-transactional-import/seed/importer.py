"""Import account rows into SQLite."""

import sqlite3

SCHEMA = """CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    balance_cents INTEGER NOT NULL
)"""


class RowError(ValueError):
    def __init__(self, index, message):
        super().__init__(f"row {index}: {message}")
        self.index = index


def connect(path=":memory:"):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(SCHEMA)
    return conn


def validate(index, row):
    for key in ("id", "owner"):
        value = row.get(key)
        if not isinstance(value, str) or not value:
            raise RowError(index, f"{key} must be a non-empty string")
    cents = row.get("balance_cents")
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise RowError(index, "balance_cents must be an integer")


def _insert(conn, index, row):
    conn.execute(
        "INSERT INTO accounts (id, owner, balance_cents) VALUES (?, ?, ?)",
        (row["id"], row["owner"], row["balance_cents"]),
    )


def import_rows(conn, rows):
    """Insert the rows; return the count."""
    rows = list(rows)
    for index, row in enumerate(rows):
        validate(index, row)
        _insert(conn, index, row)
    return len(rows)
