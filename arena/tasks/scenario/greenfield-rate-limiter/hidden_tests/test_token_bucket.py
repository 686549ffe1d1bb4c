"""Hidden tests for greenfield-rate-limiter (run with TARGET=<working copy>)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.environ.get("TARGET", os.path.join(HERE, "..", "seed"))))

import pytest  # noqa: E402

import ratelimit  # noqa: E402


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def bucket(rate=2, capacity=5):
    clock = FakeClock()
    return ratelimit.TokenBucket(rate, capacity, clock=clock), clock


def test_starts_full_and_drains():
    b, _ = bucket()
    assert [b.allow() for _ in range(6)] == [True] * 5 + [False]


def test_refills_at_rate():
    b, clock = bucket(rate=2, capacity=5)
    for _ in range(5):
        assert b.allow()
    clock.advance(1.0)
    assert b.allow(2)
    assert not b.allow()


def test_refill_capped_at_capacity():
    b, clock = bucket(rate=2, capacity=5)
    clock.advance(3600)
    assert [b.allow() for _ in range(6)] == [True] * 5 + [False]


def test_denied_request_takes_nothing():
    b, clock = bucket(rate=1, capacity=4)
    assert b.allow(3)
    assert not b.allow(2)
    assert b.allow(1)
    clock.advance(2)
    assert b.allow(2)


def test_retry_after():
    b, clock = bucket(rate=2, capacity=5)
    assert b.retry_after() == 0.0
    assert b.allow(5)
    assert b.retry_after(3) == pytest.approx(1.5)
    clock.advance(1.5)
    assert b.allow(3)


def test_validation():
    with pytest.raises(ValueError):
        ratelimit.TokenBucket(0, 5)
    with pytest.raises(ValueError):
        ratelimit.TokenBucket(1, -1)
    b, _ = bucket(capacity=5)
    with pytest.raises(ValueError):
        b.allow(6)
