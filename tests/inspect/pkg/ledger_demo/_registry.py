from .spell import spell  # noqa: F401
