"""An SQLite-backed work queue with at-least-once delivery."""

import sqlite3
import time

SCHEMA = """CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    payload TEXT NOT NULL,
    claimed_at REAL,
    acked INTEGER NOT NULL DEFAULT 0
)"""


class DurableQueue:
    def __init__(self, path, visibility_timeout=30.0, clock=time.time):
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute(SCHEMA)
        self.visibility_timeout = visibility_timeout
        self.clock = clock

    def close(self):
        self.conn.close()

    def enqueue(self, payload):
        if not isinstance(payload, str):
            raise TypeError("payload must be a string")
        return self.conn.execute("INSERT INTO messages (payload) VALUES (?)", (payload,)).lastrowid

    def claim(self):
        now = self.clock()
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            row = self.conn.execute(
                "SELECT id, payload FROM messages WHERE acked = 0 "
                "AND claimed_at IS NULL ORDER BY id LIMIT 1",
            ).fetchone()
            if row is not None:
                self.conn.execute("UPDATE messages SET claimed_at = ? WHERE id = ?", (now, row[0]))
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return None if row is None else (row[0], row[1])

    def ack(self, message_id):
        cur = self.conn.execute(
            "UPDATE messages SET acked = 1 WHERE id = ? AND acked = 0", (message_id,)
        )
        if cur.rowcount != 1:
            raise KeyError(message_id)

    def pending(self):
        return self.conn.execute("SELECT COUNT(*) FROM messages WHERE acked = 0").fetchone()[0]
