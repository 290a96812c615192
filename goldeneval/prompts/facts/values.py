"""Values read from a text: numbers with units and currencies, times of day, dates, years, frequencies.

A wrong value is the commonest wrong answer a RAG system gives, and token overlap cannot see it
("7.80" and "7.20" share every token).  So each value is read with what it means: an exact
fraction, its unit's dimension and scale, its currency, minutes after midnight, a (month,
day, year) (docs/guide/answers.md, "Reference grading: the facts decide", rule 2, and rounds 4
and 5).  Each piece of text is read once: a date is not also read as a number.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.text import IDENTIFIER, stem
from goldeneval.prompts.facts.vocabulary import (
    COUNTS,
    CURRENCIES,
    CURRENCY_CODE,
    CURRENCY_MARK,
    CURRENCY_WORD,
    FAHRENHEIT,
    LARGE,
    MAGNITUDES,
    MONTH,
    MONTHS,
    MULTIPLIERS,
    NUMBER_RUN,
    NUMBER_WORD,
    NUMBER_WORDS,
    ONE_WORDS,
    ORDINALS,
    RATE_ADVERBS,
    UNIT,
    UNITS,
    WORKING,
)

__all__ = ["EVERY", "MAX_NUMBER_DIGITS", "value_facts"]

MAX_NUMBER_DIGITS = 30
"""A longer run of digits is no number (and would be slow to read as one)."""

_QUALIFIER = r"(?:(?P<qual>working|business|calendar|consecutive|full|whole|more|extra)\s+)?"
_AFTER = (
    r"(?:\s*|-)(?:"
    + _QUALIFIER
    + r"(?P<unit>"
    + UNIT
    + r")|(?P<cur2>"
    + CURRENCY_WORD
    + r"|"
    + CURRENCY_MARK
    + r"))(?![a-z])"
)
_RATE = (
    r"(?:(?:\s+of\s+(?:[a-z]+\s+){0,2}?[a-z]+)?\s*(?:/|\b(?:for\s+(?=each|every))?(?:per|a|an|each|every)\s+)(?P<rate>"
    + UNIT
    + r")(?![a-z])"
    r"(?!\s+(?:ticket|pass|return|card|travelcard|rover)\b)"
    r"|\s+(?P<adverb>" + "|".join(RATE_ADVERBS) + r")\b)?"
)
"""A rate after a value: "95.00 per year", "65.00 an hour", "0.39/kWh", "180.00 annually",
"20 hours of training per year" (round 7: the thing counted may come between), "5% of the
unpaid tax for each month" (round 10)
("a day ticket" is a ticket, not a rate)."""
_FREQUENCY = re.compile(
    r"\b(?:(?P<once>once|twice|thrice)|(?P<n>\d{1,2}|" + NUMBER_WORD + r")\s+times)"
    r"\s+(?:(?:a|an|per|each|every)\s+(?P<unit>day|week|month|year)|(?P<adverb>daily|weekly|monthly|yearly|annually))\b",
    re.IGNORECASE,
)
"""How often: "once a day" = "once daily", "twice a day" = "two times daily", "3 times a week"."""
EVERY = {
    unit: re.compile(rf"\b(?:{adverb}|every\s+{unit}|each\s+{unit}|(?:a|per)\s+{unit})\b", re.IGNORECASE)
    for adverb, unit in (("daily", "day"), ("weekly", "week"), ("monthly", "month"), ("(?:yearly|annually)", "year"))
}
"""Once per unit said without a count: "daily", "every day", "a day" meet "once a day"."""

_NUMBER = re.compile(
    r"(?:(?P<cur1>" + CURRENCY_MARK + r")\s?|\b(?P<cur0>" + CURRENCY_CODE + r")\s?)?"
    r"(?<![\w.,/:])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d{1,3}(?:\.\d{3}){2,}|\d+(?:[.,]\d+)?)"
    r"(?![.,]\d)(?:/(?P<den>\d+))?"
    r"(?:\s*(?P<mag>thousand|million|billion|bn|mn)\b|(?P<magk>k)(?![\w]))?"
    r"(?:st|nd|rd|th)?\+?(?:" + _AFTER + r")?" + _RATE + r"(?:(?:(?<=-\d)|(?<=-\d\d))s)?(?![\w])",
    re.IGNORECASE,
)
_WORD_NUMBER = re.compile(
    r"\b(?P<half>half\s+(?:an?\s+)?)?(?P<word>" + NUMBER_RUN + r"|a|an)\b(?:" + _AFTER + r")?" + _RATE,
    re.IGNORECASE,
)
_HALF_HOUR = re.compile(r"\b(?:a\s+)?half[\s-]+(?:an\s+)?hour(?:ly)?\b", re.IGNORECASE)
_HALF = re.compile(
    r"\b(?:one\s+)?half\s+(?:of\b|(?:the|your)\s+(?:[a-z-]+\s+)?(?:price|fare|cost)\b|price|fare)", re.IGNORECASE
)
""""half of", "half the price": 50 percent."""
_AMPM = r"\s*(?P<ap>[ap])\.?\s?m\b\.?"
_PART = r"(?:\s+(?:in\s+the\s+|at\s+)(?P<part>morning|afternoon|evening|night)\b)?"
"""A part of the day after a clock time ("8:00 in the evening", "8 o'clock at night"): 20:00."""
_SPOKEN_MINUTES = r"half|quarter|twenty[\s-]five|twenty|ten|five|\d{1,2}"
_TIMES = (
    re.compile(
        r"\b(?P<mm>" + _SPOKEN_MINUTES + r")\s+(?:minutes\s+)?(?P<rel>past|to|after|before)\s+"
        r"(?P<h>\d{1,2}|" + NUMBER_WORD + r"|one|noon|midday|midnight)\b(?![:.]\d)(?:" + _AMPM + r"|" + _PART + r")",
        re.IGNORECASE,
    ),
    re.compile(r"(?<![\d.:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])(?:" + _AMPM + r"|" + _PART + r")", re.IGNORECASE),
    re.compile(r"(?<![\d.:,])(?P<h>\d{1,2})\.(?P<m>\d{2})" + _AMPM, re.IGNORECASE),
    re.compile(r"(?<![\d.:,])(?P<h>\d{1,2})" + _AMPM, re.IGNORECASE),
    re.compile(r"\b(?P<h>\d{1,2}|" + NUMBER_WORD + r"|one)\s*o['\u2019]?\s?clock\b" + _PART, re.IGNORECASE),
    re.compile(
        r"\b(?P<h>\d{1,2}|" + NUMBER_WORD + r"|one)\s+(?:in\s+the\s+|at\s+)"
        r"(?P<part>morning|afternoon|evening|night)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<named>noon|midday|midnight)\b", re.IGNORECASE),
)
_DAY = r"(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:\s*(?:-|\u2013|to|and)\s*(?P<d2>\d{1,2})(?:st|nd|rd|th)?)?"
_DATES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d1>\d{2})\b"),
    re.compile(r"(?<![\d.,/])(?P<d1>\d{1,2})(?P<sep>[/.])(?P<mo>\d{1,2})(?P=sep)(?P<y>\d{4})(?![\d.,/]\d)"),
    re.compile(r"(?<![\d.,/])(?P<mo>\d{1,2})(?P<sep>[/.])(?P<d1>\d{1,2})(?P=sep)(?P<y>\d{4})(?![\d.,/]\d)"),
    re.compile(r"\b" + _DAY + r"\s+(?:of\s+)?(?P<month>" + MONTH + r")(?:,?\s+(?P<y>\d{4}))?(?![\w])", re.IGNORECASE),
    re.compile(
        r"\b(?P<month>" + MONTH + r")\s+" + _DAY.replace("|to|and", "") + r"(?!\s*:)(?:,?\s+(?P<y>\d{4}))?(?![\w])",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<month>" + MONTH + r")\s+(?P<y>(?:19|20)\d\d)\b", re.IGNORECASE),
)
"""Dates: ISO, "1 January 2026", "January 1, 2026", and a month of a year ("March 2027"); written
in figures with slashes or dots day first ("31/03/2026"), month first only where the day-first
reading is no date ("03/31/2026", round 6)."""
_HALF_MORE = re.compile(
    r"\b(?P<n>\d{1,3}|a|an|"
    + NUMBER_RUN
    + r")\s+(?P<unit>hours?|days?|weeks?|months?|years?|minutes?)\s+and\s+a\s+half\b"
    r"|\b(?P<n2>\d{1,3}|" + NUMBER_RUN + r")\s+and\s+a\s+half\s+(?P<unit2>hours|days|weeks|months|years|minutes)\b",
    re.IGNORECASE,
)
"""A duration and a half: "an hour and a half" (90 minutes), "two and a half days" (round 6)."""
_ORDINAL_DAY = re.compile(
    r"\bthe\s+(?P<word>"
    + "|".join(sorted(ORDINALS, key=len, reverse=True))
    + r")\s+(?:day\s+)?of\s+(?:(?:each|every|the|a|this|next)\s+)?month\b",
    re.IGNORECASE,
)
"""A day of the month in words: "the first of each month", "the fifteenth day of the month"
(round 6; "the first day of absence" is no date)."""
_QUARTER_HOUR = re.compile(r"\b(?:(?P<q>a|one|three)\s+)?quarters?\s+of\s+an\s+hour\b", re.IGNORECASE)
"""Quarters of an hour: "a quarter of an hour" (15 minutes), "three quarters of an hour" (45)."""
_COUNTED_RATE = re.compile(
    r"(?<![\w.,/:])(?P<num>\d+(?:[.,]\d+)?)\s+(?P<noun>[a-z]{3,}s)\s+(?:per|a|an|each|every)\s+(?P<rate>"
    + UNIT
    + r")(?![a-z])(?!\s+(?:ticket|pass|return|card|travelcard|rover)\b)",
    re.IGNORECASE,
)
"""A count of things per unit, the thing named between: "100 requests per minute" is a rate, not
100 of anything (round 6)."""
_SPLIT_PRICE = re.compile(
    r"\b(?P<whole>\d{1,6})\s+(?P<cur>euros?|dollars?|pounds?)\s+(?:and\s+)?"
    r"(?:(?P<cents>\d{2})(?!\w|[.,:]\d)(?:\s*(?:cents?|pence)\b)?|(?P<few>\d{1,2})\s*(?:cents?|pence)\b)",
    re.IGNORECASE,
)
"""A price spoken in two parts: "2 euros 40", "3 dollars and 5 cents"."""


_THE_ORDINAL = re.compile(
    r"\bthe\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b(?![ \t]+(?!(?:and|or|of|at|to|until|till|through|from|in|on)\b)[a-z])"
)
"""A day of the month by its ordinal alone ("on the 8th and the 22nd"; not "the 2nd floor")."""
_MONTH_NAME = re.compile(r"\b(?:" + "|".join(m.capitalize() for m in MONTHS if len(m) > 3 and m != "sept") + r")\b")
_SENTENCE_BOUND = re.compile(r"[.!?;\n]")


def _sentence_month(text: str, at: int) -> int | None:
    """The month a sentence names, when it names one and only one (round 10: "In March there are
    observing nights on the 8th and the 22nd" states March 8 and March 22), else None."""
    start = max((m.end() for m in _SENTENCE_BOUND.finditer(text, 0, at)), default=0)
    end = next((m.start() for m in _SENTENCE_BOUND.finditer(text, at)), len(text))
    named = {MONTHS[m.group(0).lower()] for m in _MONTH_NAME.finditer(text, start, end)}
    return named.pop() if len(named) == 1 else None


_NEXT_WORD = re.compile(r"[ \t]+(?P<word>[a-z]{3,})\b", re.IGNORECASE)


_NOT_ONE_BEFORE = re.compile(
    r"\b(?:the|this|that|which|each|every|any|no|only|another|someone|no-one|anyone|everyone|last|first|next|same"
    r"|little|other)\s+$",
    re.IGNORECASE,
)
_ONE_NEXT = re.compile(r"[ \t]+(?:\d+(?:[.,]\d+)?[ \t]*[a-z]{1,5}[ \t]+)?(?P<word>[a-z]{3,})\b", re.IGNORECASE)
"""The thing a "one" counts, perhaps after an amount ("one 500 mg capsule")."""
_NOT_COUNTED = frozenset({"way", "another", "else", "thing", "point", "time", "side", "hand"})


_SINGLE = re.compile(
    r"\b(?:a|one)\s+single\b(?=[ \t]+(?!(?:ticket|fare|journey|trip|room|bed|ride|pass|use|entry|parent|occupancy"
    r"|market|sign|file|click|point|person)s?\b)[a-z]{3,})",
    re.IGNORECASE,
)
""""a single cabin bag" is one bag (round 10); "a single ticket", "a single room" are kinds."""


def _one_counts(text: str, start: int, end: int) -> bool:
    """Whether a bare "one" is the number 1 (round 10): before a counted thing ("one tablet per
    10 kg", "one 500 mg capsule") but not as a pronoun or an idiom ("the one", "one of them", "one way or another",
    "at one point", "on the one hand"); with a unit or a currency it always is."""
    following = _ONE_NEXT.match(text, end)
    if following is None or following["word"].lower() in ENGLISH_STOPWORDS:
        return False
    if following["word"].lower() in _NOT_COUNTED:
        return False
    return _NOT_ONE_BEFORE.search(text[max(0, start - 20) : start]) is None


def _counted(fact: Fact, text: str, end: int) -> Fact:
    """A number without unit or currency with the word after it, the thing it counts ("8
    passengers"; none for "6 to 12"): two equal numbers counting different things are two facts."""
    if fact.kind != "number" or fact.key[1] is not None or fact.key[2] is not None:
        return fact
    following = _NEXT_WORD.match(text, end)
    if following is None or following["word"].lower() in ENGLISH_STOPWORDS:
        return fact
    return replace(fact, counted=stem(following["word"]))


def _number_fact(
    text: str, values: tuple[Fraction, ...], groups: dict[str, str | None], currency: str | None, raw: str
) -> Fact:
    """A number fact; its key is ``(readings, dimension, currency, unit)``: the values it may
    mean in the dimension's base unit ("1.200" may be 1.2 or 1200), the dimension (with a
    rate: ``"percent/month"``; working days are their own), the currency and the unit as
    written (a value converted from another unit compares within
    :data:`~goldeneval.prompts.facts.equality.CONVERSION_TOLERANCE`)."""
    unit = (groups.get("unit") or "").lower() or None
    dimension, scale = UNITS[unit] if unit else (None, Fraction(1))
    if unit in ("day", "days") and (groups.get("qual") or "").lower() in WORKING:
        dimension, scale, unit = "working-day", Fraction(1), "working day"
    if unit in FAHRENHEIT:  # compared in degrees Celsius
        values = tuple((v - 32) * Fraction(5, 9) for v in values)
    rate = (groups.get("rate") or "").lower() or RATE_ADVERBS.get((groups.get("adverb") or "").lower())
    if rate:
        per_dimension, per_scale = UNITS[rate]
        dimension, scale, unit = f"{dimension or 'count'}/{per_dimension}", scale / per_scale, f"{unit or ''}/{rate}"
    is_year = dimension is None and currency is None and re.fullmatch(r"(?:19|20)\d\d", raw) is not None
    if is_year:
        return Fact("year", text, (int(raw),))
    return Fact("number", text, (tuple(v * scale for v in values), dimension, currency, unit, values))


def _readings(raw: str) -> tuple[Fraction, ...]:
    """What a written number may mean: ``1,200`` is 1200 and ``7,80`` 7.8; ``1.200,50`` and
    ``1.234.567`` are European (1200.5, 1234567); ``1.200`` is either 1.2 or 1200."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        return (Fraction(raw.replace(",", "")),)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+|\d{1,3}(?:\.\d{3}){2,}", raw):
        return (Fraction(raw.replace(".", "").replace(",", ".")),)
    value = Fraction(raw.replace(",", "."))
    if re.fullmatch(r"[1-9]\d{0,2}\.\d{3}", raw):
        return (value, Fraction(raw.replace(".", "")))
    return (value,)


def _word_run_value(run: str) -> Fraction | None:
    """The value of a run of number words ("four hundred and twenty": 420), or None."""
    total, current = 0, 0
    for word in re.split(r"[\s-]+", run.lower()):
        if word in ("and", ""):
            continue
        if word in ("a", "an", "one"):
            current += 1
        elif word in MULTIPLIERS:
            if word in LARGE:
                total, current = total + max(current, 1) * MULTIPLIERS[word], 0
            else:
                current = max(current, 1) * MULTIPLIERS[word]
        elif word in NUMBER_WORDS:
            current += NUMBER_WORDS[word]
        else:
            return None
    return Fraction(total + current)


def _hour(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return NUMBER_WORDS.get(text.lower(), 1 if text.lower() == "one" else None)


def _time(match: re.Match[str]) -> int | None:
    """Minutes after midnight, or None when the match is no time."""
    groups = match.groupdict()
    named = groups.get("named")
    if named:
        return 0 if named.lower() == "midnight" else 12 * 60
    if groups["h"].lower() in ("noon", "midday", "midnight") and groups.get("rel"):  # "half past midnight"
        spoken = (groups.get("mm") or "").lower()
        offset = {"half": 30, "quarter": 15}.get(spoken) or _word_run_value(spoken) or 0
        if groups.get("ap") or groups.get("part") or not 0 < offset < 60:
            return None
        start = 0 if groups["h"].lower() == "midnight" else 12 * 60
        return (start + (-1 if groups["rel"].lower() in ("to", "before") else 1) * int(offset)) % (24 * 60)
    hour = _hour(groups["h"])
    minute = int(groups.get("m") or 0)
    if hour is None or minute > 59:
        return None
    if groups.get("rel"):  # "half past five", "quarter to six in the evening"
        spoken = (groups.get("mm") or "").lower()
        offset = {"half": 30, "quarter": 15}.get(spoken) or _word_run_value(spoken) or 0
        if not 1 <= hour <= 12 or not 0 < offset < 60:
            return None
        sign = -1 if groups["rel"].lower() in ("to", "before") else 1
        base = _time_of_hour(hour, groups)
        return None if base is None else (base + sign * int(offset)) % (24 * 60)
    base = _time_of_hour(hour, groups)
    return None if base is None else base + minute


def _time_of_hour(hour: int, groups: dict[str, str | None]) -> int | None:
    """Minutes after midnight of ``hour`` o'clock read with its "am", "pm" or part of the day."""
    ap, part = (groups.get("ap") or "").lower(), (groups.get("part") or "").lower()
    if ap or part:
        if part and ap == "" and 13 <= hour <= 23:  # "20:00 in the evening": the clock says it already
            return hour * 60
        if not 1 <= hour <= 12:
            return None
        if ap == "a" or part == "morning":
            hour = 0 if hour == 12 else hour
        elif part == "night" and hour == 12:
            hour = 0
        elif ap == "p" or part in ("afternoon", "evening", "night"):
            hour = hour if hour == 12 else hour + 12
    return hour * 60 if hour <= 24 else None


class _Claims:
    """Characters of the text already read as a fact."""

    def __init__(self, text: str) -> None:
        self.taken = bytearray(len(text))

    def free(self, start: int, end: int) -> bool:
        return not any(self.taken[start:end])

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)


def value_facts(text: str) -> list[Fact]:
    """The values of ``text`` in the order they are written (identifiers, :data:`~.text.IDENTIFIER`,
    hold none): dates first claim their text, then
    two-part prices, times, frequencies, numbers, "half an hour", "half of", number words."""
    claims = _Claims(text)
    for code in IDENTIFIER.finditer(text):  # "eu-north-1" is a name, not the number 1
        claims.take(*code.span())
    found: list[tuple[int, Fact]] = []
    for pattern in _DATES:
        for match in pattern.finditer(text):
            if not claims.free(*match.span()):
                continue
            groups = match.groupdict()
            month = int(groups["mo"]) if groups.get("mo") else MONTHS[groups["month"].lower().rstrip(".")]
            year = int(groups["y"]) if groups.get("y") else None
            days: list[int | None] = [int(groups["d1"])] if groups.get("d1") else [None]
            days += [int(groups["d2"])] if groups.get("d2") else []
            if not 1 <= month <= 12 or not all(d is None or 1 <= d <= 31 for d in days):
                continue
            claims.take(*match.span())
            found += [(match.start(), Fact("date", match.group(0), (month, day, year))) for day in days]
    for match in _THE_ORDINAL.finditer(text):
        named_month = _sentence_month(text, match.start())
        ordinal_day = int(match.group("d"))
        if named_month is not None and 1 <= ordinal_day <= 31 and claims.free(*match.span()):
            claims.take(*match.span())
            found.append((match.start(), Fact("date", match.group(0), (named_month, ordinal_day, None))))
    for match in _SPLIT_PRICE.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            cents = Fraction(int(match.group("cents") or match.group("few")), 100)
            price = Fraction(int(match.group("whole"))) + cents
            money = CURRENCIES[match.group("cur").lower()]
            found.append((match.start(), _number_fact(match.group(0), (price,), {}, money, str(price))))
    for pattern in _TIMES:
        for match in pattern.finditer(text):
            minutes = _time(match)
            if minutes is None or not claims.free(*match.span()):
                continue
            claims.take(*match.span())
            found.append((match.start(), Fact("time", match.group(0).strip(), (minutes,))))
    for match in _FREQUENCY.finditer(text):
        if not claims.free(*match.span()):
            continue
        word = (match.group("once") or "").lower()
        n = match.group("n") or ""
        count = COUNTS[word] if word else Fraction(int(n)) if n.isdigit() else _word_run_value(n.lower())
        if count is None:
            continue
        claims.take(*match.span())
        unit = match.group("unit") or RATE_ADVERBS[match.group("adverb").lower()]
        found.append((match.start(), Fact("frequency", match.group(0), (count, unit.lower()))))
    for match in _HALF_MORE.finditer(text):
        if not claims.free(*match.span()):
            continue
        word = (match.group("n") or match.group("n2")).lower()
        whole = Fraction(int(word)) if word.isdigit() else _word_run_value(word)
        unit = (match.group("unit") or match.group("unit2")).lower()
        if whole is None:
            continue
        claims.take(*match.span())
        found.append((match.start(), _number_fact(match.group(0), (whole + Fraction(1, 2),), {"unit": unit}, None, "")))
    for match in _ORDINAL_DAY.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            day = Fraction(ORDINALS[match.group("word").lower()])
            found.append((match.start(), _number_fact(match.group(0), (day,), {}, None, str(day))))
    for match in _QUARTER_HOUR.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            quarters = Fraction(45 if (match.group("q") or "").lower() == "three" else 15)
            found.append((match.start(), _number_fact(match.group(0), (quarters,), {"unit": "minutes"}, None, "")))
    for match in _COUNTED_RATE.finditer(text):
        if not claims.free(*match.span()) or match.group("noun").lower() in (*UNITS, *CURRENCIES):
            continue
        claims.take(*match.span())
        counted = _readings(match.group("num"))
        found.append((match.start(), _number_fact(match.group(0), counted, {"rate": match.group("rate")}, None, "")))
    for match in _NUMBER.finditer(text):
        if not claims.free(*match.span()):
            continue
        claims.take(*match.span())
        groups = match.groupdict()
        if len(groups["num"]) > MAX_NUMBER_DIGITS or len(groups.get("den") or "") > MAX_NUMBER_DIGITS:
            continue  # a run of digits that long is an identifier, not a number
        values = _readings(groups["num"])
        magnitude = (groups.get("mag") or groups.get("magk") or "").lower()
        if magnitude:
            values = tuple(v * MAGNITUDES[magnitude] for v in values)
        if groups.get("den"):
            denominator = int(groups["den"])
            if denominator == 0:
                continue
            values = tuple(v / denominator for v in values)
        mark = groups.get("cur1") or groups.get("cur0") or groups.get("cur2")
        currency = CURRENCIES[mark.lower()] if mark else None
        raw = groups["num"] if not magnitude else str(values[0])
        fact = _number_fact(match.group(0).strip(), values, groups, currency, raw)
        found.append((match.start(), _counted(fact, text, match.end())))
    for match in _HALF_HOUR.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            found.append(
                (
                    match.start(),
                    Fact("number", match.group(0), ((Fraction(30),), "duration", None, "minute", (Fraction(30),))),
                )
            )
    for match in _HALF.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            found.append(
                (
                    match.start(),
                    Fact("number", match.group(0), ((Fraction(50),), "percent", None, "%", (Fraction(50),))),
                )
            )
    for match in _SINGLE.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            fact = _number_fact(match.group(0), (Fraction(1),), {}, None, "1")
            found.append((match.start(), _counted(fact, text, match.end())))
    for match in _WORD_NUMBER.finditer(text):
        if not claims.free(*match.span()):
            continue
        groups = match.groupdict()
        word, unit = re.sub(r"[\s-]+", " ", groups["word"].lower()), groups.get("unit")
        if word in ONE_WORDS:
            if word == "one" and not unit:  # "one tablet", "one euro"; not "one of them"
                if not groups.get("cur2") and not _one_counts(text, match.start(), match.end()):
                    continue
            elif not unit or (word != "one" and UNITS[unit.lower()][0] not in ("duration", "month")):
                continue
            if (unit or "").lower() == "day" and re.match(r"\s+(?:ticket|pass|return|card)", text[match.end() :], re.I):
                continue  # "a day ticket" is a ticket
        value = _word_run_value(word)
        if value is None:
            continue
        if groups.get("half"):
            if not unit and not word.endswith("dozen"):
                continue
            value = value / 2
        if unit is None and groups.get("cur2") is None and word in ("hundred", *LARGE):
            continue
        claims.take(*match.span())
        mark = groups.get("cur2")
        currency = CURRENCIES[mark.lower()] if mark else None
        fact = _number_fact(match.group(0).strip(), (value,), groups, currency, str(value))
        found.append((match.start(), _counted(fact, text, match.end())))
    return [fact for _, fact in sorted(found, key=lambda pair: pair[0])]
