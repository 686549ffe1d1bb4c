"""matderiv: a small slice of a symbolic matrix library (polynomial entries)."""

from .core import Matrix, Poly, symbols

__all__ = ["Matrix", "Poly", "symbols"]
