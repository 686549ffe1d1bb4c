"""ratelimit: a token-bucket rate limiter (to be written; see the brief)."""
