"""Orders, their announcements, and the relay that publishes them."""

import json
import sqlite3

SCHEMA = [
    "CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, item TEXT NOT NULL, qty INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS outbox (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        payload TEXT NOT NULL,
        sent INTEGER NOT NULL DEFAULT 0
    )""",
]


class Store:
    def __init__(self, path=":memory:"):
        self.conn = sqlite3.connect(path, isolation_level=None)
        for statement in SCHEMA:
            self.conn.execute(statement)

    def place_order(self, order_id, item, qty):
        if not isinstance(qty, int) or isinstance(qty, bool) or qty <= 0:
            raise ValueError("qty must be a positive integer")
        event = {"type": "order_placed", "order_id": order_id, "item": item, "qty": qty}
        self.conn.execute(
            "INSERT INTO outbox (payload) VALUES (?)", (json.dumps(event, sort_keys=True),)
        )
        try:
            self.conn.execute(
                "INSERT INTO orders (id, item, qty) VALUES (?, ?, ?)", (order_id, item, qty)
            )
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"order {order_id!r} already exists") from exc

    def orders(self):
        return [r[0] for r in self.conn.execute("SELECT id FROM orders ORDER BY id")]

    def pending_events(self):
        rows = self.conn.execute("SELECT seq, payload FROM outbox WHERE sent = 0 ORDER BY seq")
        return [(seq, json.loads(payload)) for seq, payload in rows]

    def mark_sent(self, seq):
        self.conn.execute("UPDATE outbox SET sent = 1 WHERE seq = ?", (seq,))


class Relay:
    def __init__(self, store, publish):
        self.store = store
        self.publish = publish

    def run_once(self):
        published = 0
        for seq, event in self.store.pending_events():
            self.store.mark_sent(seq)
            try:
                self.publish(event)
            except Exception:
                break
            published += 1
        return published
