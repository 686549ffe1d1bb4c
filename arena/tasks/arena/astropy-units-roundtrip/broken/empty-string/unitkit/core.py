"""Units as products of named bases raised to rational powers."""

import re
from fractions import Fraction

_TOKEN = re.compile(r"^([A-Za-z]+)(?:(-?\d+)|\((-?\d+)/(\d+)\))?$")


class UnitParseError(ValueError):
    """The text is not a unit in the generic format."""


class Unit:
    __slots__ = ("powers",)

    def __init__(self, powers=None):
        self.powers = {b: Fraction(p) for b, p in (powers or {}).items() if p != 0}

    @classmethod
    def parse(cls, text):
        text = text.strip()
        if not text:
            raise UnitParseError("empty unit string")
        numerator, denominator = _split_division(text)
        powers = {}
        for sign, part in ((1, numerator), (-1, denominator)):
            for token in part.split():
                base, power = _parse_token(token)
                powers[base] = powers.get(base, 0) + sign * power
        return cls(powers)

    def to_string(self):
        return " ".join(_format_power(b, self.powers[b]) for b in sorted(self.powers))

    def is_dimensionless(self):
        return not self.powers

    def __mul__(self, other):
        powers = dict(self.powers)
        for b, p in other.powers.items():
            powers[b] = powers.get(b, 0) + p
        return Unit(powers)

    def __truediv__(self, other):
        return self * other ** -1

    def __pow__(self, n):
        return Unit({b: p * Fraction(n) for b, p in self.powers.items()})

    def __eq__(self, other):
        return isinstance(other, Unit) and self.powers == other.powers

    def __hash__(self):
        return hash(frozenset(self.powers.items()))

    def __repr__(self):
        return f"Unit({self.to_string()!r})"


def _split_division(text):
    """Split at the one '/' outside parentheses (a fractional power's '/' is inside)."""
    depth, slashes = 0, []
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "/" and depth == 0:
            slashes.append(i)
    if len(slashes) > 1:
        raise UnitParseError(f"more than one '/' in {text!r}")
    if not slashes:
        return text, ""
    return text[: slashes[0]], text[slashes[0] + 1:]


def _parse_token(token):
    match = _TOKEN.match(token)
    if not match:
        raise UnitParseError(f"bad unit token {token!r}")
    base, integer, num, den = match.groups()
    if integer is not None:
        return base, Fraction(int(integer))
    if num is not None:
        if int(den) == 0:
            raise UnitParseError(f"zero denominator in {token!r}")
        return base, Fraction(int(num), int(den))
    return base, Fraction(1)


def _format_power(base, power):
    if power == 1:
        return base
    if power.denominator == 1:
        return f"{base}{power.numerator}"
    return f"{base}({power.numerator}/{power.denominator})"


dimensionless = Unit()
