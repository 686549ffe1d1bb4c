"""A double-entry ledger on SQLite: every posting sums to zero, and is written atomically."""

import sqlite3

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS postings (id INTEGER PRIMARY KEY AUTOINCREMENT, memo TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS entries (
        posting_id INTEGER NOT NULL REFERENCES postings(id),
        account TEXT NOT NULL,
        amount_cents INTEGER NOT NULL
    )""",
]


class UnbalancedPosting(ValueError):
    """The entries of a posting do not sum to zero."""


def _check_entry(account, amount):
    if not isinstance(account, str) or not account:
        raise ValueError("account must be a non-empty string")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount == 0:
        raise ValueError(f"amount for {account!r} must be a nonzero integer")


class Ledger:
    def __init__(self, path=":memory:"):
        self.conn = sqlite3.connect(path, isolation_level=None)
        for statement in SCHEMA:
            self.conn.execute(statement)

    def post(self, memo, entries):
        entries = list(entries)
        if len(entries) < 2:
            raise ValueError("a posting needs at least two entries")
        for account, amount in entries:
            _check_entry(account, amount)
        total = sum(amount for _, amount in entries)
        if total != 0:
            raise UnbalancedPosting(f"entries sum to {total}, not 0")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            cur = self.conn.execute("INSERT INTO postings (memo) VALUES (?)", (memo,))
            posting_id = cur.lastrowid
            self.conn.executemany(
                "INSERT INTO entries (posting_id, account, amount_cents) VALUES (?, ?, ?)",
                [(posting_id, account, amount) for account, amount in entries],
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return posting_id

    def balance(self, account):
        row = self.conn.execute(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM entries WHERE account = ?", (account,)
        ).fetchone()
        return row[0]

    def trial_balance(self):
        rows = self.conn.execute(
            "SELECT account, SUM(amount_cents) FROM entries GROUP BY account ORDER BY account"
        )
        return dict(rows)

    def posting_count(self):
        return self.conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0]
