"""unitkit: a small slice of a units library (composition and generic string format)."""

from .core import Unit, UnitParseError, dimensionless

__all__ = ["Unit", "UnitParseError", "dimensionless"]
