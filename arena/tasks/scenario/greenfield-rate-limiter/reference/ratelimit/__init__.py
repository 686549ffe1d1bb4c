"""ratelimit: a token-bucket rate limiter with an injectable clock."""

import time

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, rate, capacity, clock=time.monotonic):
        if rate <= 0 or capacity <= 0:
            raise ValueError("rate and capacity must be positive")
        self.rate = float(rate)
        self.capacity = float(capacity)
        self._clock = clock
        self._tokens = self.capacity
        self._stamp = clock()

    def _refill(self):
        now = self._clock()
        elapsed = max(0.0, now - self._stamp)
        self._stamp = now
        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)

    def _check(self, cost):
        if cost <= 0 or cost > self.capacity:
            raise ValueError(f"cost must be in (0, {self.capacity}]")

    @property
    def tokens(self):
        self._refill()
        return self._tokens

    def allow(self, cost=1):
        self._check(cost)
        self._refill()
        if self._tokens >= cost:
            self._tokens -= cost
            return True
        return False

    def retry_after(self, cost=1):
        self._check(cost)
        self._refill()
        missing = cost - self._tokens
        return 0.0 if missing <= 0 else missing / self.rate
