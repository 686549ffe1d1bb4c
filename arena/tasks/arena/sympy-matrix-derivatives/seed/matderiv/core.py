"""Sparse multivariate polynomials and matrices of them.

A monomial is a sorted tuple of ``(variable, exponent)`` pairs; a polynomial
maps monomials to nonzero ``Fraction`` coefficients.
"""

from fractions import Fraction


def _mono_mul(a, b):
    powers = dict(a)
    for var, exp in b:
        powers[var] = powers.get(var, 0) + exp
    return tuple(sorted(powers.items()))


class Poly:
    __slots__ = ("terms",)

    def __init__(self, terms=None):
        self.terms = {m: Fraction(c) for m, c in (terms or {}).items() if c != 0}

    @classmethod
    def const(cls, value):
        return cls({(): Fraction(value)})

    @classmethod
    def var(cls, name):
        return cls({((name, 1),): Fraction(1)})

    @staticmethod
    def coerce(value):
        if isinstance(value, Poly):
            return value
        if isinstance(value, (int, Fraction)):
            return Poly.const(value)
        raise TypeError(f"cannot use {type(value).__name__} as a polynomial")

    def is_zero(self):
        return not self.terms

    def __add__(self, other):
        other = Poly.coerce(other)
        terms = dict(self.terms)
        for mono, coeff in other.terms.items():
            terms[mono] = terms.get(mono, 0) + coeff
        return Poly(terms)

    __radd__ = __add__

    def __neg__(self):
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other):
        return self + (-Poly.coerce(other))

    def __rsub__(self, other):
        return Poly.coerce(other) - self

    def __mul__(self, other):
        other = Poly.coerce(other)
        terms = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                mono = _mono_mul(m1, m2)
                terms[mono] = terms.get(mono, 0) + c1 * c2
        return Poly(terms)

    __rmul__ = __mul__

    def __pow__(self, n):
        if not isinstance(n, int) or n < 0:
            raise ValueError("only nonnegative integer powers")
        result = Poly.const(1)
        for _ in range(n):
            result = result * self
        return result

    def __eq__(self, other):
        try:
            other = Poly.coerce(other)
        except TypeError:
            return NotImplemented
        return self.terms == other.terms

    def __hash__(self):
        return hash(frozenset(self.terms.items()))

    def diff(self, name):
        terms = {}
        for mono, coeff in self.terms.items():
            powers = dict(mono)
            exp = powers.get(name, 0)
            if exp == 0:
                continue
            if exp == 1:
                del powers[name]
            else:
                powers[name] = exp - 1
            key = tuple(sorted(powers.items()))
            terms[key] = terms.get(key, 0) + coeff * exp
        return Poly(terms)

    def __repr__(self):
        if not self.terms:
            return "0"
        parts = []
        for mono, coeff in sorted(self.terms.items()):
            factors = [v if e == 1 else f"{v}**{e}" for v, e in mono]
            if not factors:
                parts.append(str(coeff))
            elif coeff == 1:
                parts.append("*".join(factors))
            else:
                parts.append("*".join([str(coeff)] + factors))
        return " + ".join(parts)


def symbols(names):
    return tuple(Poly.var(n) for n in names.split())


class Matrix:
    def __init__(self, rows):
        rows = [[Poly.coerce(x) for x in row] for row in rows]
        if any(len(row) != len(rows[0]) for row in rows):
            raise ValueError("ragged rows")
        self.rows = rows

    @property
    def shape(self):
        return (len(self.rows), len(self.rows[0]) if self.rows else 0)

    def __getitem__(self, index):
        i, j = index
        return self.rows[i][j]

    def __eq__(self, other):
        return isinstance(other, Matrix) and self.rows == other.rows

    def __repr__(self):
        return f"Matrix({self.rows!r})"

    def _as_vector(self):
        rows, cols = self.shape
        if rows == 1:
            return list(self.rows[0])
        if cols == 1:
            return [row[0] for row in self.rows]
        raise ValueError("jacobian needs a row or column vector")

    def diff(self, var):
        """Differentiate every entry with respect to ``var``; the shape is kept."""
        return Matrix([[entry.diff(var) for entry in row if not entry.diff(var).is_zero()] for row in self.rows])

    def jacobian(self, variables):
        """J[i, j] = d f_i / d x_j for the vector f = self and variable names x."""
        funcs = self._as_vector()
        return Matrix([[f.diff(x) for f in funcs] for x in variables])
