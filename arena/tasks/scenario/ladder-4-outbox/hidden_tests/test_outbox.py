"""Hidden tests for ladder-4-outbox (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import outbox  # noqa: E402


def event(order_id, item, qty):
    return {"type": "order_placed", "order_id": order_id, "item": item, "qty": qty}


def test_place_order_writes_order_and_event():
    store = outbox.Store()
    store.place_order("o1", "widget", 3)
    assert store.orders() == ["o1"]
    assert [e for _, e in store.pending_events()] == [event("o1", "widget", 3)]


def test_refused_order_writes_no_event(tmp_path):
    store = outbox.Store(str(tmp_path / "s.db"))
    store.place_order("o1", "widget", 3)
    with pytest.raises(ValueError):
        store.place_order("o1", "gadget", 1)
    with pytest.raises(ValueError):
        store.place_order("o2", "gadget", 0)
    assert store.orders() == ["o1"]
    assert [e["order_id"] for _, e in store.pending_events()] == ["o1"]


def test_relay_publishes_in_order_and_marks_sent():
    store = outbox.Store()
    for i in range(3):
        store.place_order(f"o{i}", "w", i + 1)
    seen = []
    relay = outbox.Relay(store, seen.append)
    assert relay.run_once() == 3
    assert [e["order_id"] for e in seen] == ["o0", "o1", "o2"]
    assert store.pending_events() == []
    assert relay.run_once() == 0


def test_publish_failure_keeps_event_pending():
    store = outbox.Store()
    for i in range(3):
        store.place_order(f"o{i}", "w", 1)
    seen = []
    broker_down = {"o1"}

    def publish(e):
        if e["order_id"] in broker_down:
            raise ConnectionError("broker unavailable")
        seen.append(e["order_id"])

    relay = outbox.Relay(store, publish)
    assert relay.run_once() == 1
    assert [e["order_id"] for _, e in store.pending_events()] == ["o1", "o2"]
    broker_down.clear()
    assert relay.run_once() == 2
    assert seen == ["o0", "o1", "o2"]
    assert store.pending_events() == []
