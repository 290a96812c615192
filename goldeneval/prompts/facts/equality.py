"""When two values are equal: units converted, currencies and dimensions kept apart.

Reading a value is not enough; "80 cm" must equal "0.8 m", "2.40" must answer "€2.40", and
"€2.40" must never answer "$2.40", nor "23 kg" answer "£23" (docs/guide/answers.md, "Reference
grading: the facts decide", rule 2 and round 4).
"""

from __future__ import annotations

import re
from fractions import Fraction

from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.vocabulary import POUND_KG, UNITS

__all__ = ["CONVERSION_TOLERANCE", "same_value"]

CONVERSION_TOLERANCE = Fraction(1, 100)
"""A value converted from another unit of its dimension ("12 km" as "7.46 miles") is equal
within this share of the reference's value; in the same unit, values are equal exactly."""
_POUNDS = re.compile(r"\bpounds?$", re.IGNORECASE)


def same_value(wanted: Fact, got: Fact) -> bool:
    """Whether ``got`` states the value ``wanted`` (a number, time, date or frequency) states."""
    if wanted.kind != got.kind:
        return False
    if wanted.kind == "date":
        month, day, year = wanted.key
        other_month, other_day, other_year = got.key
        same_day = day is None or day == other_day  # "March 2027" is met by "15 March 2027"
        return month == other_month and same_day and (year is None or other_year is None or year == other_year)
    if wanted.kind == "number":
        wanted, got = _as_pounds(_as_weight(wanted, got)), _as_pounds(_as_weight(got, wanted))
        dimension, currency, unit = wanted.key[1:4]
        other_dimension, other_currency, other_unit = got.key[1:4]
        values, other_values = _fractions(wanted.key[0]), _fractions(got.key[0])
        raw, other_raw = _fractions(wanted.key[4]), _fractions(got.key[4])
        if currency is not None and other_currency is not None and currency != other_currency:
            return False
        if (currency is None and dimension is not None and other_currency is not None and other_dimension is None) or (
            other_currency is None and other_dimension is not None and currency is not None and dimension is None
        ):
            return False  # "23 kg" is no price, "£95" no length
        if (
            dimension is not None
            and "/" not in str(dimension)
            and str(other_dimension).startswith(f"{dimension}/")
            and str(other_unit).split("/")[0] in UNITS
        ):  # "4 g of paracetamol per day" is met by "4,000 mg per day": the rate is the reference's too
            other_unit = str(other_unit).split("/")[0]
            other_dimension, scale = UNITS[other_unit]
            other_values = frozenset(v * scale for v in other_raw)
        if dimension is not None and other_dimension is not None:
            if dimension != other_dimension:
                return False
            if unit == other_unit:
                return bool(values & other_values)
            return any(_close(a, b) for a in values for b in other_values)
        if dimension is None and other_dimension is None:
            return bool(values & other_values)
        # one side has a unit, the other a bare number: compare the numbers as written
        return bool(raw & other_raw)
    return wanted.key == got.key


def _as_weight(fact: Fact, beside: Fact) -> Fact:
    """ "23 pounds" beside a weight is a weight in pounds (lb), not a price in GBP."""
    if fact.key[2] == "GBP" and fact.key[1] is None and beside.key[1] == "mass" and _POUNDS.search(fact.text):
        raw = _fractions(fact.key[4])
        return Fact("number", fact.text, (tuple(v * POUND_KG for v in raw), "mass", None, "lb", fact.key[4]))
    return fact


_HUNDREDTHS = {"pence": "GBP", "cents": None}
"""Coins a hundredth of a currency: pence of the pound, cents of whichever currency is beside."""


def _as_pounds(fact: Fact) -> Fact:
    """Pence as pounds (round 8): "25p per day" is "£0.25 per day", a hundredth of a pound; cents
    likewise (round 10: "9 cents per gigabyte" is "$0.09 per GB", or €0.09)."""
    dimension, currency, unit = fact.key[1:4]
    coin = str(dimension).split("/")[0]
    if currency is not None or coin not in _HUNDREDTHS:
        return fact
    rate = str(dimension).partition("/")[2]
    values = tuple(v / 100 for v in _fractions(fact.key[0]))
    raw = tuple(v / 100 for v in _fractions(fact.key[4]))
    new_dimension = f"count/{rate}" if rate else None
    new_unit = "/" + str(unit).partition("/")[2] if rate else None
    return Fact("number", fact.text, (values, new_dimension, _HUNDREDTHS[coin], new_unit, raw))


def _fractions(item: object) -> frozenset[Fraction]:
    return frozenset(v for v in item if isinstance(v, Fraction)) if isinstance(item, tuple) else frozenset()


def _close(wanted: Fraction, got: Fraction) -> bool:
    return abs(wanted - got) <= abs(wanted) * CONVERSION_TOLERANCE
