"""Hidden tests for ladder-3-durable-queue (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import durablequeue  # noqa: E402


class Clock:
    def __init__(self):
        self.now = 5000.0

    def __call__(self):
        return self.now


def open_queue(tmp_path, clock):
    return durablequeue.DurableQueue(str(tmp_path / "q.db"), visibility_timeout=10, clock=clock)


def test_fifo_and_ack(tmp_path):
    q = open_queue(tmp_path, Clock())
    ids = [q.enqueue(p) for p in ("a", "b", "c")]
    got = [q.claim() for _ in range(3)]
    assert got == list(zip(ids, ["a", "b", "c"]))
    assert q.claim() is None
    for message_id, _ in got:
        q.ack(message_id)
    assert q.pending() == 0


def test_survives_reopen(tmp_path):
    clock = Clock()
    q = open_queue(tmp_path, clock)
    q.enqueue("job-1")
    q.close()
    q2 = open_queue(tmp_path, clock)
    assert q2.claim()[1] == "job-1"


def test_unacked_claim_redelivered_after_timeout(tmp_path):
    clock = Clock()
    q = open_queue(tmp_path, clock)
    first = q.enqueue("job")
    assert q.claim() == (first, "job")
    q.close()  # the worker crashed before ack
    clock.now += 5
    q2 = open_queue(tmp_path, clock)
    assert q2.claim() is None  # still claimed
    clock.now += 6
    assert q2.claim() == (first, "job")
    assert q2.pending() == 1


def test_acked_never_redelivered(tmp_path):
    clock = Clock()
    q = open_queue(tmp_path, clock)
    message_id = q.enqueue("once")
    q.claim()
    q.ack(message_id)
    clock.now += 1000
    assert q.claim() is None
    with pytest.raises(KeyError):
        q.ack(message_id)
    with pytest.raises(KeyError):
        q.ack(9999)
