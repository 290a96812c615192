"""The words fact reading knows: number words, units, currencies, months, weekdays, yes and no.

Kept apart from the patterns that use them so that every reader (values, names, polarity)
shares one vocabulary: a word is a unit, a month or an opening "yes" in one place only
(docs/guide/answers.md, "Reference grading: the facts decide", rule 2).
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = [
    "COUNTS",
    "CURRENCIES",
    "CURRENCY_CODE",
    "CURRENCY_MARK",
    "CURRENCY_WORD",
    "DAY_GROUPS",
    "FAHRENHEIT",
    "GENERIC_NAME_WORDS",
    "ISO_CURRENCIES",
    "LARGE",
    "LEAD_FILLER",
    "MAGNITUDES",
    "MONTH",
    "MONTHS",
    "MULTIPLIERS",
    "NO",
    "NUMBER_RUN",
    "NUMBER_WORD",
    "NUMBER_WORDS",
    "ONE_WORDS",
    "ORDINALS",
    "POUND_KG",
    "RATE_ADVERBS",
    "UNIT",
    "UNITS",
    "WEEKDAYS",
    "WORKING",
    "YES",
]

NUMBER_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "thousand": 1000, "dozen": 12, "million": 1_000_000, "billion": 1_000_000_000,
}  # fmt: skip
"""Number words read as numbers ("one" is not: "the one", "one-way"), alone or in a run
("twenty-five", "four hundred and twenty", "a dozen", "half a dozen")."""
MULTIPLIERS = {"hundred": 100, "thousand": 1000, "dozen": 12, "million": 1_000_000, "billion": 1_000_000_000}
LARGE = frozenset({"thousand", "million", "billion"})
MAGNITUDES = {"thousand": 1000, "k": 1000, "million": 1_000_000, "mn": 1_000_000, "billion": 1_000_000_000,
              "bn": 1_000_000_000}  # fmt: skip
"""Magnitude words after a written number: "2.3 million" is 2,300,000, "5k" 5,000."""
ONE_WORDS = {"a": 1, "an": 1, "one": 1}
"""Read as 1 only before a unit ("a week", "one hour")."""
NUMBER_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))
NUMBER_RUN = (
    r"(?:(?:a|an)\s+(?=(?:hundred|thousand|million|billion|dozen)\b))?(?:" + NUMBER_WORD + r"|one)"
    r"(?:(?:[\s-]+and)?[\s-]+(?:" + NUMBER_WORD + r"|one)\b)*"
)
"""A run of number words: "twenty-five", "four hundred and twenty", "a dozen"."""

_ORDINAL_UNITS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
ORDINALS = {word: n for n, word in enumerate(_ORDINAL_UNITS, start=1)} | {
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
ORDINALS |= {f"{tens}-{word}": base + n for tens, base in (("twenty", 20), ("thirty", 30))
             for n, word in enumerate(_ORDINAL_UNITS, start=1) if base + n <= 31}  # fmt: skip
"""Ordinal words of the days of a month: "the first of each month" is the 1st (round 6)."""

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
    "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
WEEKDAYS = {
    "mon": "monday", "monday": "monday", "tue": "tuesday", "tues": "tuesday", "tuesday": "tuesday",
    "wed": "wednesday", "wednesday": "wednesday", "thu": "thursday", "thurs": "thursday",
    "thursday": "thursday", "fri": "friday", "friday": "friday", "sat": "saturday", "saturday": "saturday",
    "sun": "sunday", "sunday": "sunday",
}  # fmt: skip

DAY_GROUPS = {
    "weekday": ("monday", "tuesday", "wednesday", "thursday", "friday"),
    "weekend": ("saturday", "sunday"),
}
"""An answer's "weekdays" names Monday to Friday, its "weekends" Saturday and Sunday."""

POUND_KG = Fraction(45_359_237, 100_000_000)
"""A pound (lb) in kilograms; "23 pounds" is a weight beside a weight, a price otherwise."""
FAHRENHEIT = frozenset({"°f", "° f", "degrees fahrenheit", "degree fahrenheit", "fahrenheit"})
UNITS: dict[str, tuple[str, Fraction]] = {}
"""Unit spelling -> (dimension, scale to the dimension's base unit)."""
for _names, _dimension, _scale in (
    (("%", "percent", "per cent"), "percent", Fraction(1)),
    (("second", "seconds", "sec", "secs"), "duration", Fraction(1, 60)),
    (("minute", "minutes", "min", "mins"), "duration", Fraction(1)),
    (("hour", "hours", "hr", "hrs", "h"), "duration", Fraction(60)),
    (("day", "days"), "duration", Fraction(1440)),
    (("week", "weeks"), "duration", Fraction(10080)),
    (("fortnight", "fortnights"), "duration", Fraction(20160)),
    (("month", "months"), "month", Fraction(1)),
    (("quarter", "quarters"), "month", Fraction(3)),
    (("year", "years", "annum"), "month", Fraction(12)),
    (("mm", "millimetre", "millimetres", "millimeter", "millimeters"), "length", Fraction(1, 10)),
    (("cm", "centimetre", "centimetres", "centimeter", "centimeters"), "length", Fraction(1)),
    (("m", "metre", "metres", "meter", "meters"), "length", Fraction(100)),
    (("km", "kilometre", "kilometres", "kilometer", "kilometers"), "length", Fraction(100_000)),
    (("inch", "inches"), "length", Fraction(254, 100)),
    (("ft", "foot", "feet"), "length", Fraction(3048, 100)),
    (("yd", "yard", "yards"), "length", Fraction(9144, 100)),
    (("mi", "mile", "miles"), "length", Fraction(160_934_4, 10)),
    (("mg", "milligram", "milligrams"), "mass", Fraction(1, 1_000_000)),
    (("g", "gram", "grams", "gramme", "grammes"), "mass", Fraction(1, 1000)),
    (("kg", "kilo", "kilos", "kilogram", "kilograms"), "mass", Fraction(1)),
    (("tonne", "tonnes", "metric ton", "metric tons"), "mass", Fraction(1000)),
    (("lb", "lbs"), "mass", POUND_KG),
    (("oz", "ounce", "ounces"), "mass", POUND_KG / 16),
    (
        ("°c", "° c", "degrees celsius", "degree celsius", "degrees centigrade", "celsius", "centigrade"),
        "temperature",
        Fraction(1),
    ),
    (("°f", "° f", "degrees fahrenheit", "degree fahrenheit", "fahrenheit"), "temperature", Fraction(1)),
    (("kwh",), "energy", Fraction(1)),
    (("w", "watt", "watts"), "power", Fraction(1)),
    (("kw", "kilowatt", "kilowatts"), "power", Fraction(1000)),
    (("b", "byte", "bytes"), "data", Fraction(1)),
    (("kb", "kilobyte", "kilobytes"), "data", Fraction(1000)),
    (("mb", "megabyte", "megabytes"), "data", Fraction(1000**2)),
    (("gb", "gigabyte", "gigabytes"), "data", Fraction(1000**3)),
    (("tb", "terabyte", "terabytes"), "data", Fraction(1000**4)),
    (("p", "pence", "penny"), "pence", Fraction(1)),
    (("cent", "cents", "ct"), "cents", Fraction(1)),
    (("semester", "semesters"), "semester", Fraction(1)),
    (("term", "terms"), "term", Fraction(1)),
    (("mph",), "length/duration", Fraction(160_934_4, 10) / 60),
    (("kph", "kmh", "km/h"), "length/duration", Fraction(100_000, 60)),
):
    for _name in _names:
        UNITS[_name] = (_dimension, _scale)
ISO_CURRENCIES = ("EUR", "GBP", "USD", "CHF", "JPY", "CAD", "AUD", "NZD", "HKD", "SGD", "SEK", "NOK", "DKK", "PLN",
                  "CZK", "HUF", "INR", "CNY", "ZAR", "MXN", "BRL")  # fmt: skip
"""ISO 4217 codes read as currencies beside an amount ("CHF 200", "200 SEK", round 10)."""
CURRENCIES = {
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD",
    "¥": "JPY", "yen": "JPY", "₹": "INR", "rupee": "INR", "rupees": "INR", "yuan": "CNY", "renminbi": "CNY",
    "franc": "CHF", "francs": "CHF", "zloty": "PLN", "zlotys": "PLN", "rand": "ZAR",
} | {code.lower(): code for code in ISO_CURRENCIES}  # fmt: skip
"""Currency marks, codes and names -> ISO 4217 code; "franc" is the Swiss franc (the one major
franc).  A name qualified by its country ("Swiss francs", "Canadian dollars") is read as its
code first (:data:`goldeneval.prompts.facts.text.COUNTRY_CURRENCIES`)."""
UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
"""Any unit spelling, longest first (a regular-expression alternation)."""
CURRENCY_WORD = "|".join(re.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True) if c.isalpha())
CURRENCY_CODE = "|".join(ISO_CURRENCIES)
CURRENCY_MARK = "[" + "".join(c for c in CURRENCIES if len(c) == 1) + "]"
"""A currency symbol before or after an amount: €, £, $, ¥, ₹."""
RATE_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
                "yearly": "year", "annually": "year"}  # fmt: skip
WORKING = frozenset({"working", "business"})
"""Qualifiers that make days working days, a dimension of their own."""
COUNTS = {"once": 1, "twice": 2, "thrice": 3}

YES = frozenset({"yes", "yeah", "yep", "correct", "sure", "indeed", "certainly", "absolutely"})
NO = frozenset({"no", "nope", "not", "never"})
LEAD_FILLER = frozenset(
    {"well", "so", "sorry", "unfortunately", "sadly", "actually", "fortunately", "good", "news", "but", "and"}
)
"""Words an answer may put before its yes or no ("Unfortunately not", "..., but yes, ...")."""
GENERIC_NAME_WORDS = frozenset(
    {"airport", "terminal", "station", "stop", "street", "road", "avenue", "lane", "square", "park", "ride",
     "centre", "center", "office", "hall", "building", "house", "tower", "bridge", "pier", "port", "harbour",
     "harbor", "gate", "zone", "line", "bus", "tram", "ferry", "metro", "train", "campus", "university", "college",
     "school", "hospital", "clinic", "library", "museum", "council", "department", "ministry", "company", "group",
     "bank", "city", "town", "north", "south", "east", "west", "central", "international", "national", "team",
     "desk", "service", "ltd", "inc", "plc", "limited", "branch", "store", "shop", "market", "club", "hotel",
     "court", "front", "upper", "lower", "new", "old", "main", "great", "little", "director", "manager",
     "officer", "head", "lead", "chief", "coordinator", "administrator", "secretary", "assistant", "executive",
     "president", "chair", "supervisor", "senior", "junior", "deputy", "general"}
)  # fmt: skip
"""Words (as compared: lower case, singular) that name what kind of place, organisation or role a
name is, or which of several, not which one (round 9): "Heathrow Airport", "Westfield Park and
Ride", "North Zone", "Finance Director".  A name of several words is met by its distinctive
word, the last of its words that is none of these (:func:`~goldeneval.prompts.facts.entities.named_by_part`)."""
