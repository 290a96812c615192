"""Fact-aware reference grading (issue 42): the facts of the reference decide.

The rules, all here (docs/guide/answers.md, "Reference grading: the facts decide", says the
same in prose):

1. **Notes are not facts.** A parenthesised remark of the reference ("7.80 (the archived 2025
   page says 7.20)") is context for a reader, not something the answer must say.
2. **Facts** are read from the reference and from the answer:

   * *numbers* with their unit or currency: ``2.40``, ``€2.40``, ``2,40 EUR``, ``2.40 euros``,
     ``35%``, ``half of`` (50%), ``80 cm``, ``8 weeks``, ``eight weeks``, ``a week``, ``half an hour``; values are
     exact fractions, so ``2.4`` equals ``2.40``; units of one dimension convert (``24 hours``
     equals ``a day``, ``80 cm`` equals ``0.8 m``); a side without a unit or currency accepts
     any (``2.40`` equals ``€2.40``), two different ones never match (``€2.40`` is not
     ``$2.40``, ``8 weeks`` is not ``8 days``);
   * *times of day*: ``08:00``, ``8:00``, ``8 am``, ``8:00 a.m.``, ``8 o'clock``,
     ``nine in the morning``, ``noon``, ``midnight`` (``8 pm`` is ``20:00``);
   * *dates*: ``1 January 2026``, ``January 1, 2026``, ``1 Jan 2026``, ``2026-01-01``, ranges
     ``4-19 April 2026``; an answer without the year matches a reference with one;
   * *yes/no polarity*: a reference that starts with "Yes" or "No";
   * *named entities*: capitalised words that are not merely sentence-initial ("Eastgate",
     "Dr Helena Marsh", "zone C"), codes (``M2``, ``hmt_stats``, ``WCAG``), weekday names
     (an answer's "weekdays" names Monday to Friday, "weekends" Saturday and Sunday), e-mail
     addresses; ``P+R`` is read as "Park and Ride".

   A bare year ("reopened in 2019") is a fact: an answer naming another year fails, one naming
   no other year may leave it out; it is not counted as extra.  Round 4 also reads magnitudes
   (``2.3 million``, ``€5k``), months of a year (``March 2027``), mass (``kg``, ``g``, ``lb``,
   ``oz``, ``tonnes``; "pounds" beside a weight is lb), temperatures (``°C``, ``°F``,
   converted), hyphenated units (``24-month``), spoken times (``half past five``) and two-part
   prices (``2 euros 40``); a price never equals a measured quantity.  Citation markers
   (``[1]``, ``[2, 3]``) are no facts.
3. **Every fact of the reference must be in the answer, equal**: a wrong or missing number,
   time, date or entity fails the answer whatever its token overlap.  Polarity: an answer that
   opens with the opposite word ("No, ..." to a "Yes" reference) fails; an answer without an
   opening yes or no says no when it negates ("not", "never", "no", "n't", "cannot"), and
   answers a "No" reference also with a restriction ("only", "without", "except", "unless").
   Without an opening Yes or No in the reference, each reference clause that says no ("not",
   "no longer", "closed", "outside", "non-") must be matched by an answer clause on the same
   thing that says no too (:func:`_flipped_clause`).  Hedges fail: "or", "maybe", "perhaps"
   offering another value, a range around the value ("30-35%"), "A or B" of names
   (:func:`_ranged`, :func:`_entity_hedge`).  A value the question states need not be
   repeated unless the answer gives a rival one.  Extra words, full sentences and a few extra
   values do not hurt.
4. **Pasting never pays.** An answer of more than :data:`MAX_ANSWER_WORDS` words, or one that
   states more than ``max(3, the reference's number of values)`` values (numbers, times,
   dates) the reference does not have, is a paste of the context, not an answer: it fails with
   score 0.
5. **Without facts** (the reference has none of the above), SQuAD token F1 decides, measured
   against the answer's best-matching sentence rather than its whole text.

:func:`grade_reference` applies them: the score is the share of the reference's facts the
answer states (or the best sentence's F1), the verdict whether it passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Literal

from goldeneval.answers.assertions import normalise_answer, token_f1
from goldeneval.core.text import ENGLISH_STOPWORDS

__all__ = [
    "FACTS_VERSION",
    "MAX_ANSWER_WORDS",
    "Fact",
    "FactGrade",
    "best_sentence_f1",
    "extract_facts",
    "grade_reference",
    "unsupported_facts",
]

FACTS_VERSION = "facts/v5"
MAX_ANSWER_WORDS = 100
"""An answer longer than this is a paste of the context, not an answer."""
MAX_NUMBER_DIGITS = 30
"""A longer run of digits is no number (and would be slow to read as one)."""
MIN_EXTRA_VALUES = 3
"""An answer may state this many values the reference lacks (or as many as the reference has)."""

FactKind = Literal["number", "time", "date", "year", "frequency", "polarity", "entity"]

_PAREN = re.compile(r"\s*\([^()]*\)")
_PARK_AND_RIDE = re.compile(r"\bP\s*\+\s*R\b", re.IGNORECASE)
_CITATION = re.compile(r"\[\d{1,3}(?:\s*[,;-]\s*\d{1,3})*\]")
"""A RAG answer's citation marker: ``[1]``, ``[2, 3]`` (not a fact)."""
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
_URL = re.compile(r"\bhttps?://\S+")

_NUMBER_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "thousand": 1000, "dozen": 12, "million": 1_000_000, "billion": 1_000_000_000,
}  # fmt: skip
"""Number words read as numbers ("one" is not: "the one", "one-way"), alone or in a run
("twenty-five", "four hundred and twenty", "a dozen", "half a dozen")."""
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "dozen": 12, "million": 1_000_000, "billion": 1_000_000_000}
_LARGE = frozenset({"thousand", "million", "billion"})
_MAGNITUDES = {"thousand": 1000, "k": 1000, "million": 1_000_000, "mn": 1_000_000, "billion": 1_000_000_000,
               "bn": 1_000_000_000}  # fmt: skip
"""Magnitude words after a written number: "2.3 million" is 2,300,000, "5k" 5,000."""
_ONE_WORDS = {"a": 1, "an": 1, "one": 1}
"""Read as 1 only before a unit ("a week", "one hour")."""
_NUMBER_WORD = "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_NUMBER_RUN = (
    r"(?:(?:a|an)\s+(?=(?:hundred|thousand|million|billion|dozen)\b))?(?:" + _NUMBER_WORD + r"|one)"
    r"(?:(?:[\s-]+and)?[\s-]+(?:" + _NUMBER_WORD + r"|one)\b)*"
)
"""A run of number words: "twenty-five", "four hundred and twenty", "a dozen"."""

_MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
    "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAYS = {
    "mon": "monday", "monday": "monday", "tue": "tuesday", "tues": "tuesday", "tuesday": "tuesday",
    "wed": "wednesday", "wednesday": "wednesday", "thu": "thursday", "thurs": "thursday",
    "thursday": "thursday", "fri": "friday", "friday": "friday", "sat": "saturday", "saturday": "saturday",
    "sun": "sunday", "sunday": "sunday",
}  # fmt: skip

_DAY_GROUPS = {
    "weekday": ("monday", "tuesday", "wednesday", "thursday", "friday"),
    "weekend": ("saturday", "sunday"),
}
"""An answer's "weekdays" names Monday to Friday, its "weekends" Saturday and Sunday."""

POUND_KG = Fraction(45_359_237, 100_000_000)
"""A pound (lb) in kilograms; "23 pounds" is a weight beside a weight, a price otherwise."""
_FAHRENHEIT = frozenset({"°f", "° f", "degrees fahrenheit", "degree fahrenheit", "fahrenheit"})
# unit spelling -> (dimension, scale to the dimension's base unit)
_UNITS: dict[str, tuple[str, Fraction]] = {}
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
    (("mph",), "length/duration", Fraction(160_934_4, 10) / 60),
    (("kph", "kmh", "km/h"), "length/duration", Fraction(100_000, 60)),
):
    for _name in _names:
        _UNITS[_name] = (_dimension, _scale)
_CURRENCIES = {
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD",
}  # fmt: skip
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_CURRENCY_WORD = "|".join(re.escape(c) for c in sorted(_CURRENCIES, key=len, reverse=True) if c.isalpha())
_QUALIFIER = r"(?:(?P<qual>working|business|calendar|consecutive|full|whole|more|extra)\s+)?"
_AFTER = r"(?:\s*|-)(?:" + _QUALIFIER + r"(?P<unit>" + _UNIT + r")|(?P<cur2>" + _CURRENCY_WORD + r"|[€£$]))(?![a-z])"
_RATE_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter",
                 "yearly": "year", "annually": "year"}  # fmt: skip
_RATE = (
    r"(?:\s*(?:/|\b(?:per|a|an|each|every)\s+)(?P<rate>" + _UNIT + r")(?![a-z])"
    r"(?!\s+(?:ticket|pass|return|card|travelcard|rover)\b)"
    r"|\s+(?P<adverb>" + "|".join(_RATE_ADVERBS) + r")\b)?"
)
"""A rate after a value: "95.00 per year", "65.00 an hour", "0.39/kWh", "180.00 annually"
("a day ticket" is a ticket, not a rate)."""
_WORKING = frozenset({"working", "business"})
_COUNTS = {"once": 1, "twice": 2, "thrice": 3}
_FREQUENCY = re.compile(
    r"\b(?:(?P<once>once|twice|thrice)|(?P<n>\d{1,2}|" + _NUMBER_WORD + r")\s+times)"
    r"\s+(?:(?:a|an|per|each|every)\s+(?P<unit>day|week|month|year)|(?P<adverb>daily|weekly|monthly|yearly|annually))\b",
    re.IGNORECASE,
)
"""How often: "once a day" = "once daily", "twice a day" = "two times daily", "3 times a week"."""
_EVERY = {
    unit: re.compile(rf"\b(?:{adverb}|every\s+{unit}|each\s+{unit}|(?:a|per)\s+{unit})\b", re.IGNORECASE)
    for adverb, unit in (("daily", "day"), ("weekly", "week"), ("monthly", "month"), ("(?:yearly|annually)", "year"))
}
"""Once per unit said without a count: "daily", "every day", "a day" meet "once a day"."""

_NUMBER = re.compile(
    r"(?:(?P<cur1>[€£$])\s?|\b(?P<cur0>EUR|GBP|USD)\s?)?"
    r"(?<![\w.,/:])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d{1,3}(?:\.\d{3}){2,}|\d+(?:[.,]\d+)?)"
    r"(?![.,]\d)(?:/(?P<den>\d+))?"
    r"(?:\s*(?P<mag>thousand|million|billion|bn|mn)\b|(?P<magk>k)(?![\w]))?"
    r"(?:st|nd|rd|th)?\+?(?:" + _AFTER + r")?" + _RATE + r"(?![\w])",
    re.IGNORECASE,
)
_WORD_NUMBER = re.compile(
    r"\b(?P<half>half\s+(?:an?\s+)?)?(?P<word>" + _NUMBER_RUN + r"|a|an)\b(?:" + _AFTER + r")?" + _RATE,
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
        r"(?P<h>\d{1,2}|" + _NUMBER_WORD + r"|one)\b(?![:.]\d)(?:" + _AMPM + r"|" + _PART + r")",
        re.IGNORECASE,
    ),
    re.compile(r"(?<![\d.:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])(?:" + _AMPM + r"|" + _PART + r")", re.IGNORECASE),
    re.compile(r"(?<![\d.:,])(?P<h>\d{1,2})\.(?P<m>\d{2})" + _AMPM, re.IGNORECASE),
    re.compile(r"(?<![\d.:,])(?P<h>\d{1,2})" + _AMPM, re.IGNORECASE),
    re.compile(r"\b(?P<h>\d{1,2}|" + _NUMBER_WORD + r"|one)\s*o['\u2019]?\s?clock\b" + _PART, re.IGNORECASE),
    re.compile(
        r"\b(?P<h>\d{1,2}|" + _NUMBER_WORD + r"|one)\s+(?:in\s+the\s+|at\s+)"
        r"(?P<part>morning|afternoon|evening|night)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<named>noon|midday|midnight)\b", re.IGNORECASE),
)
_DAY = r"(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?:\s*(?:-|\u2013|to|and)\s*(?P<d2>\d{1,2})(?:st|nd|rd|th)?)?"
_DATES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d1>\d{2})\b"),
    re.compile(r"\b" + _DAY + r"\s+(?:of\s+)?(?P<month>" + _MONTH + r")(?:,?\s+(?P<y>\d{4}))?(?![\w])", re.IGNORECASE),
    re.compile(
        r"\b(?P<month>" + _MONTH + r")\s+" + _DAY.replace("|to|and", "") + r"(?!\s*:)(?:,?\s+(?P<y>\d{4}))?(?![\w])",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<month>" + _MONTH + r")\s+(?P<y>(?:19|20)\d\d)\b", re.IGNORECASE),
)
"""Dates: ISO, "1 January 2026", "January 1, 2026", and a month of a year ("March 2027")."""
_SPLIT_PRICE = re.compile(
    r"\b(?P<whole>\d{1,6})\s+(?P<cur>euros?|dollars?|pounds?)\s+(?:and\s+)?"
    r"(?:(?P<cents>\d{2})(?!\w|[.,:]\d)(?:\s*(?:cents?|pence)\b)?|(?P<few>\d{1,2})\s*(?:cents?|pence)\b)",
    re.IGNORECASE,
)
"""A price spoken in two parts: "2 euros 40", "3 dollars and 5 cents"."""
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'\u2019]*")
_SENTENCE_END = re.compile(r"[.;:!?]\s*$")
_CONNECTORS = frozenset({"and", "of", "&"})
_TITLES = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st"})
_NOT_NAMES = frozenset({"i", "yes", "no", "the", "a", "an", "eur", "gbp", "usd", "am", "pm", "ok"})
_YES = frozenset({"yes", "yeah", "yep", "correct", "sure", "indeed", "certainly", "absolutely"})
_NO = frozenset({"no", "nope", "not", "never"})
_LEAD_FILLER = frozenset({"well", "so", "sorry", "unfortunately", "sadly", "actually", "fortunately", "good", "news"})
_OPENING_WORDS = frozenset(
    {*_YES, *_NO, *_LEAD_FILLER, "according", "based", "please", "note", "also", "however", "overall", "thanks",
     "hope", "hi", "hello", "alternatively", "additionally", "furthermore", "moreover", "otherwise", "instead",
     "besides", "therefore", "thus", "hence", "still", "maybe", "perhaps", "probably", "every", "either", "none",
     "nothing", "everyone", "everything", "someone", "something", "anyone", "anything", "one", "another", "many",
     "much", "several", "whether", "although", "though", "since", "unless", "yet", "per", "via", "within",
     "without", "upon", "across", "around", "along", "among", "beyond", "towards", "till", "like", "plus", "next",
     "last", "first", "then", "today", "tomorrow", "tonight", "early", "daily", "weekly", "yearly", "hourly",
     "let", "it's", "there's", "that's", "here's", "you'll", "you're", "i'm", "i'd", "we're"}
)  # fmt: skip
"""Words that open a sentence capitalised without being names, beyond the stop-word list."""
_IMPERATIVES = frozenset(
    {"add", "apply", "ask", "avoid", "book", "bring", "buy", "call", "cancel", "change", "check", "choose", "click",
     "close", "collect", "complete", "confirm", "contact", "continue", "discard", "dispose", "do", "download",
     "drink", "drop", "eat", "email", "enter", "fill", "find", "follow", "get", "give", "go", "help", "hold",
     "include", "inform", "install", "keep", "leave", "log", "make", "merge", "move", "note", "notify", "open",
     "order", "pay", "phone", "pick", "place", "post", "press", "print", "put", "read", "register", "remember",
     "remove", "renew", "report", "request", "reset", "return", "ring", "run", "save", "see", "select", "send",
     "set", "shake", "show", "sign", "start", "stop", "store", "submit", "swallow", "switch", "take", "tap",
     "tell", "text", "throw", "turn", "type", "update", "upload", "use", "visit", "wait", "wash", "wear", "write"}
)  # fmt: skip
"""Verbs that open an instruction ("Store it in a fridge", "Call your line manager"): a
documented list (no verb lexicon ships with the project's packages; nltk is installed without
its data).  Sentence-initial, they are no names."""
_NEGATION = re.compile(r"\b(?:no|not|never|none|nor|neither|cannot|nothing)\b|n['\u2019]t\b", re.IGNORECASE)
"""Words that negate a statement: an answer without an opening yes or no says no when the
clause about the question has one (:func:`_answer_polarity`)."""
_PROHIBITION = re.compile(
    r"(?<!\ba )(?<!\ban )(?<!\bthe )"
    r"\b(?:banned|prohibited|forbidden|barred|disallowed|illegal|outlawed|closed|shut|suspended|cancelled|canceled"
    r"|discontinued|unavailable|invalid|expired|refused|rejected|excluded|impossible|withdrawn)\b",
    re.IGNORECASE,
)
"""Words that say no by themselves ("E-scooters are banned", "The office is closed on
Sundays"), unless the question asks about them ("Is the office closed on Sundays?") or they
describe a thing ("a closed carrier"); negated ("not banned") they say yes."""
_NEUTRAL_NEGATION = re.compile(
    r"\b(?:no|not)\s+(?:later|earlier|more|less|fewer|sooner)\s+than\b|\bnot\s+(?:only|just)\b"
    r"|\bno\s+(?:problem|matter|doubt)\b|\b(?:or|if)\s+not\b|\bwhether\s+or\s+not\b",
    re.IGNORECASE,
)
"""Negation words that negate nothing asked: "no later than 31 May", "folded or not"."""
_FREE = re.compile(
    r"\bfree(?:\s+of\s+charge)?\b|\bno\s+(?:extra\s+|additional\s+)?(?:charge|fee|cost|fare|payment)s?\b"
    r"|\b(?:at|without)\s+(?:no\s+)?(?:extra\s+|additional\s+)?(?:charge|cost)\b|\bcosts?\s+nothing\b"
    r"|\bnothing\s+to\s+pay\b|\b(?:does|do|did)\s*(?:not|n['\u2019]t)\s+(?:cost\s+anything|(?:have\s+|need\s+)?(?:to\s+)?pay)\b"
    r"|\bnot\s+charged\b",
    re.IGNORECASE,
)
"""Saying that something costs nothing: "no charge", "free of charge", "at no extra cost"."""
_PAY_QUESTION = re.compile(r"\b(?:pay|paid|charged?|charges|costs?|fees?|fares?|tickets?|price|supplement|buy)\b", re.I)
_FREE_QUESTION = re.compile(r"\bfree\b", re.IGNORECASE)
_CHARGED = re.compile(r"\b(?:pay|pays|paid|charged?|charges|costs?|fees?|fares?|price|supplement)\b", re.I)
_CLAUSES = re.compile(r"[.;:!?]\s+|\n+|,\s*|\s+\b(?:but|however|although|though|whereas)\b", re.IGNORECASE)
_RESTRICTION = re.compile(r"\b(?:only|without|except|unless)\b", re.IGNORECASE)
"""Words that also answer a no ("Only from 09:00 on weekdays"), but do not turn a yes into a no."""
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")


@dataclass(frozen=True)
class Fact:
    """One fact: its kind, its text as written, and the key it compares on."""

    kind: FactKind
    text: str
    key: tuple[object, ...]
    initial: bool = False
    """An entity read from one capitalised word at the start of a sentence ("Paris is ..."):
    perhaps a name, perhaps an ordinary word ("Tickets are ...")."""

    def describe(self) -> str:
        return f"{self.kind} {self.text!r}"


def _number_fact(
    text: str, values: tuple[Fraction, ...], groups: dict[str, str | None], currency: str | None, raw: str
) -> Fact:
    """A number fact; its key is ``(readings, dimension, currency, unit)``: the values it may
    mean in the dimension's base unit ("1.200" may be 1.2 or 1200), the dimension (with a
    rate: ``"percent/month"``; working days are their own), the currency and the unit as
    written (a value converted from another unit compares within :data:`CONVERSION_TOLERANCE`)."""
    unit = (groups.get("unit") or "").lower() or None
    dimension, scale = _UNITS[unit] if unit else (None, Fraction(1))
    if unit in ("day", "days") and (groups.get("qual") or "").lower() in _WORKING:
        dimension, scale, unit = "working-day", Fraction(1), "working day"
    if unit in _FAHRENHEIT:  # compared in degrees Celsius
        values = tuple((v - 32) * Fraction(5, 9) for v in values)
    rate = (groups.get("rate") or "").lower() or _RATE_ADVERBS.get((groups.get("adverb") or "").lower())
    if rate:
        per_dimension, per_scale = _UNITS[rate]
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


def _parse_number(raw: str) -> Fraction:
    return _readings(raw)[0]


def _word_run_value(run: str) -> Fraction | None:
    """The value of a run of number words ("four hundred and twenty": 420), or None."""
    total, current = 0, 0
    for word in re.split(r"[\s-]+", run.lower()):
        if word in ("and", ""):
            continue
        if word in ("a", "an", "one"):
            current += 1
        elif word in _MULTIPLIERS:
            if word in _LARGE:
                total, current = total + max(current, 1) * _MULTIPLIERS[word], 0
            else:
                current = max(current, 1) * _MULTIPLIERS[word]
        elif word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        else:
            return None
    return Fraction(total + current)


def _hour(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return _NUMBER_WORDS.get(text.lower(), 1 if text.lower() == "one" else None)


def _time(match: re.Match[str]) -> int | None:
    """Minutes after midnight, or None when the match is no time."""
    groups = match.groupdict()
    named = groups.get("named")
    if named:
        return 0 if named.lower() == "midnight" else 12 * 60
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


def _value_facts(text: str, claims: _Claims) -> list[Fact]:
    found: list[tuple[int, Fact]] = []
    for pattern in _DATES:
        for match in pattern.finditer(text):
            if not claims.free(*match.span()):
                continue
            groups = match.groupdict()
            month = int(groups["mo"]) if groups.get("mo") else _MONTHS[groups["month"].lower().rstrip(".")]
            year = int(groups["y"]) if groups.get("y") else None
            days: list[int | None] = [int(groups["d1"])] if groups.get("d1") else [None]
            days += [int(groups["d2"])] if groups.get("d2") else []
            if not 1 <= month <= 12 or not all(d is None or 1 <= d <= 31 for d in days):
                continue
            claims.take(*match.span())
            found += [(match.start(), Fact("date", match.group(0), (month, day, year))) for day in days]
    for match in _SPLIT_PRICE.finditer(text):
        if claims.free(*match.span()):
            claims.take(*match.span())
            cents = Fraction(int(match.group("cents") or match.group("few")), 100)
            price = Fraction(int(match.group("whole"))) + cents
            money = _CURRENCIES[match.group("cur").lower()]
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
        count = _COUNTS[word] if word else Fraction(int(n)) if n.isdigit() else _word_run_value(n.lower())
        if count is None:
            continue
        claims.take(*match.span())
        unit = match.group("unit") or _RATE_ADVERBS[match.group("adverb").lower()]
        found.append((match.start(), Fact("frequency", match.group(0), (count, unit.lower()))))
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
            values = tuple(v * _MAGNITUDES[magnitude] for v in values)
        if groups.get("den"):
            denominator = int(groups["den"])
            if denominator == 0:
                continue
            values = tuple(v / denominator for v in values)
        mark = groups.get("cur1") or groups.get("cur0") or groups.get("cur2")
        currency = _CURRENCIES[mark.lower()] if mark else None
        raw = groups["num"] if not magnitude else str(values[0])
        fact = _number_fact(match.group(0).strip(), values, groups, currency, raw)
        found.append((match.start(), fact))
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
    for match in _WORD_NUMBER.finditer(text):
        if not claims.free(*match.span()):
            continue
        groups = match.groupdict()
        word, unit = re.sub(r"[\s-]+", " ", groups["word"].lower()), groups.get("unit")
        if word in _ONE_WORDS:
            if not unit or _UNITS[unit.lower()][0] not in ("duration", "month"):
                continue
            if unit.lower() == "day" and re.match(r"\s+(?:ticket|pass|return|card)", text[match.end() :], re.I):
                continue  # "a day ticket" is a ticket
        value = _word_run_value(word)
        if value is None:
            continue
        if groups.get("half"):
            if not unit and not word.endswith("dozen"):
                continue
            value = value / 2
        if unit is None and groups.get("cur2") is None and word in ("hundred", *_LARGE):
            continue
        claims.take(*match.span())
        mark = groups.get("cur2")
        currency = _CURRENCIES[mark.lower()] if mark else None
        found.append((match.start(), _number_fact(match.group(0).strip(), (value,), groups, currency, str(value))))
    return [fact for _, fact in sorted(found, key=lambda pair: pair[0])]


def _stem(token: str) -> str:
    token = token.lower().replace("\u2019", "'")
    if token.endswith("'s"):
        token = token[:-2]
    token = token.rstrip("'")
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token


def _is_name_like(token: str) -> bool:
    return token[0].isupper() or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)) or "_" in token


def _entity_facts(text: str) -> list[Fact]:
    """Named entities: runs of capitalised tokens and codes, weekday names, e-mail addresses."""
    facts = [Fact("entity", m.group(0), (m.group(0).lower(),)) for m in _EMAIL.finditer(text)]
    facts += [Fact("entity", m.group(0), (m.group(0).lower(),)) for m in _URL.finditer(text)]
    text = _URL.sub(" ", _EMAIL.sub(" ", text))
    tokens = list(_TOKEN.finditer(text))
    run: list[str] = []

    def close() -> None:
        while run and run[-1].lower() in _CONNECTORS:
            run.pop()
        keys = tuple(key for key in (_entity_key(t) for t in run if t.lower() not in _CONNECTORS) if key is not None)
        if keys:
            facts.append(Fact("entity", " ".join(run), keys))
        run.clear()

    previous_end = 0
    for position, match in enumerate(tokens):
        token = match.group(0)
        separator = text[previous_end : match.start()]
        if run and not re.fullmatch(r"[\s\-\u2013]*", separator):
            close()  # a name does not run over punctuation: "Council, Department"
        previous_end = match.end()
        initial = position == 0 or _SENTENCE_END.search(separator) is not None
        lower = token.lower()
        if separator.endswith("\u00b0") or separator.endswith("\u00b0 "):
            close()  # "28 °C": a unit of temperature, not a name
            continue
        if run and lower in _CONNECTORS:
            run.append(token)  # "Department of Mobility", "Park and Ride"
            continue
        weekday = lower in _WEEKDAYS
        month = lower.rstrip(".") in _MONTHS and token[0].isupper()
        letter = token == "A" and not initial  # "zones A and B"; a sentence-initial "A" is the article
        common = lower in _NOT_NAMES and not letter
        magnitude = re.fullmatch(r"\d+k", lower) is not None  # "5k" is 5,000, not a code
        if month or common or magnitude or lower in _UNITS or token.isdigit() or not _is_name_like(token):
            close()
            continue
        if initial and not weekday and not _is_code(token) and _opening_word(lower):
            close()  # "On Saturdays", "From Monday": the stop word is no part of the name
            continue
        if initial and not weekday and not _is_code(token):
            following = tokens[position + 1].group(0) if position + 1 < len(tokens) else ""
            joined = text[match.end() : tokens[position + 1].start()] if following else ""
            if not following or not re.fullmatch(r"\s+", joined) or not _is_name_like(following):
                close()
                key = _entity_key(token)
                if not _opening_word(lower) and key is not None:
                    facts.append(Fact("entity", token, (key,), initial=True))
                continue
        run.append(token)
    close()
    return facts


def _opening_word(lower: str) -> bool:
    """An ordinary word that opens a sentence capitalised: a stop word
    (:data:`goldeneval.core.text.ENGLISH_STOPWORDS`), an opening word that list lacks, or an
    adverb in ``-ly`` ("Unfortunately", "Currently"), or an imperative verb
    (:data:`_IMPERATIVES`: "Store", "Call")."""
    return (
        lower in ENGLISH_STOPWORDS
        or lower in _OPENING_WORDS
        or lower in _IMPERATIVES
        or (len(lower) >= 7 and lower.endswith("ly"))
        or lower.replace("\u2019", "'").split("'")[0] in ENGLISH_STOPWORDS
    )


def _is_code(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return (
        "_" in token
        or (any(c.isdigit() for c in token) and bool(letters))
        or (len(letters) >= 2 and all(c.isupper() for c in letters))
    )


def _entity_key(token: str) -> str | None:
    lower = token.lower()
    if lower in _TITLES or lower.isdigit():
        return None if lower in _TITLES else lower
    if lower in _WEEKDAYS:
        return _WEEKDAYS[lower]
    if len(token) == 1:
        return token  # a single letter ("zone C") compares case-sensitively: "a" is an article
    return _stem(token)


def _answer_entity_keys(answer: str) -> set[str]:
    keys = {m.group(0).lower() for m in _EMAIL.finditer(answer)} | {m.group(0).lower() for m in _URL.finditer(answer)}
    for match in _TOKEN.finditer(_URL.sub(" ", _EMAIL.sub(" ", answer))):
        token = match.group(0)
        lower = token.lower()
        if len(token) == 1:
            keys.add(token)
            continue
        keys.add(_WEEKDAYS.get(lower, _stem(token)))
        keys.update(_DAY_GROUPS.get(_stem(token), ()))
    return keys


def _polarity(reference: str) -> Fact | None:
    """A reference that opens with Yes or No; "No later than 31 May", "No more than 2 bags" state
    a limit, not a No (:data:`_NEUTRAL_NEGATION`)."""
    words = normalise_answer(_NEUTRAL_NEGATION.sub(" ", reference)).split()
    if words and words[0] in ("yes", "no"):
        return Fact("polarity", words[0], (words[0],))
    return None


def _opening_polarity(answer: str) -> str | None:
    """The yes or no an answer opens with ("Yes, ...", "Unfortunately not: ..."), or None."""
    for word in normalise_answer(answer).split()[:4]:
        if word in _LEAD_FILLER:
            continue
        if word in _YES:
            return "yes"
        if word in _NO:
            return "no"
        return None
    return None


def _content(text: str) -> set[str]:
    return {_stem(t) for t in normalise_answer(text).split() if t not in ENGLISH_STOPWORDS and len(t) > 1}


def _clause_says_no(clause: str, question: str) -> bool:
    """Whether a clause says no to the question: a negation word, a prohibition ("banned"),
    and, on a question about paying, a statement that it is free; a negated prohibition ("not
    banned") says yes; on a question whether something is free, a charge says no."""
    clause = _NEUTRAL_NEGATION.sub(" ", clause)
    free = _FREE.search(clause) is not None
    rest = _FREE.sub(" ", clause)
    asked = {word.lower() for word in _PROHIBITION.findall(question)}
    prohibits = any(word.lower() not in asked for word in _PROHIBITION.findall(rest))
    says_no = (len(_NEGATION.findall(rest)) % 2 == 1) != prohibits
    about_free = _FREE_QUESTION.search(question) is not None
    about_paying = not about_free and _PAY_QUESTION.search(question) is not None
    if about_paying and free:
        return not says_no  # "There is no charge" to "Do I need a ticket?": no
    if about_free and not free and _CHARGED.search(rest):
        return not says_no  # "It is charged a child fare" to "Is it free?": no
    return says_no


def _answer_polarity(answer: str, question: str, reference_says: str) -> str:
    """What the answer says to a yes/no question: its opening yes or no; else no when a clause
    about the question (:func:`_about_question`) says no (:func:`_clause_says_no`), or, to a
    "No" reference, when the answer restricts ("only", "without", "except", "unless")."""
    clauses = [c for c in _CLAUSES.split(answer) if c.strip()] or [answer]
    for text in (answer, *clauses):  # "Yes, ..." or "Based on the context, the answer is: Yes, ..."
        opening = _opening_polarity(_NEUTRAL_NEGATION.sub(" ", text))
        if opening is not None:
            return opening
    about = [c for c in clauses if _about_question(c, question)] or clauses
    if any(_clause_says_no(c, question) for c in about):
        return "no"
    if reference_says == "no" and _RESTRICTION.search(answer):
        return "no"
    return "yes"


def _about_question(clause: str, question: str) -> bool:
    """A clause is about the question when it shares a content word with it and names nothing
    the question does not ("The ferry doesn't run on Sundays" is not about a question on
    Saturdays)."""
    if not question or not _content(clause) & _content(question):
        return False
    asked = _answer_entity_keys(_prepared(question))
    return all(all(k in asked for k in f.key) for f in _entity_facts(_prepared(clause)) if not f.initial)


_PER_DAY = re.compile(
    r"\b(?:in|every|per|each|over)\s+(?:any\s+)?24[\s-]*(?:hours?|hrs?|h)(?:\s+period)?\b|\bin\s+(?:a|one)\s+day\b",
    re.IGNORECASE,
)
_DOSE_BEFORE = re.compile(
    r"\d\s*(?:mg|g|grams?|milligrams?|mcg|micrograms?|ml|millilitres?|l|litres?|tablets?|capsules?|doses?|units?"
    r"|puffs?|drinks?|cups?)\b[^.;!?]{0,40}$",
    re.IGNORECASE,
)
"""A daily amount written over 24 hours or "in a day": "4 g of paracetamol in 24 hours" reads "4 g
of paracetamol per day"; only right after an amount ("delivery in 24 hours" stays a duration)."""


def _per_day(text: str) -> str:
    return _PER_DAY.sub(
        lambda m: "per day" if _DOSE_BEFORE.search(text[max(0, m.start() - 60) : m.start()]) else m.group(0), text
    )


def _prepared(text: str) -> str:
    """``P+R`` read as "Park and Ride"; citation markers (``[1]``, ``[2, 3]``) dropped; an amount
    "in 24 hours" read as "per day" (:data:`_PER_DAY`)."""
    return _per_day(_PARK_AND_RIDE.sub("Park and Ride", _CITATION.sub(" ", text)))


def extract_facts(text: str, *, notes: bool = False) -> list[Fact]:
    """The facts of ``text``: values (numbers, times, dates, bare years), then polarity, then
    entities.  ``notes=False`` (a reference) drops parenthesised remarks first."""
    text = _prepared(text if notes else _PAREN.sub("", text))
    facts = _value_facts(text, _Claims(text))
    polarity = _polarity(text)
    if polarity is not None:
        facts.append(polarity)
    return facts + _entity_facts(text)


def _same_value(wanted: Fact, got: Fact) -> bool:
    if wanted.kind != got.kind:
        return False
    if wanted.kind == "date":
        month, day, year = wanted.key
        other_month, other_day, other_year = got.key
        same_day = day is None or day == other_day  # "March 2027" is met by "15 March 2027"
        return month == other_month and same_day and (year is None or other_year is None or year == other_year)
    if wanted.kind == "number":
        wanted, got = _as_weight(wanted, got), _as_weight(got, wanted)
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
            and str(other_unit).split("/")[0] in _UNITS
        ):  # "4 g of paracetamol per day" is met by "4,000 mg per day": the rate is the reference's too
            other_unit = str(other_unit).split("/")[0]
            other_dimension, scale = _UNITS[other_unit]
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


_POUNDS = re.compile(r"\bpounds?$", re.IGNORECASE)


def _as_weight(fact: Fact, beside: Fact) -> Fact:
    """ "23 pounds" beside a weight is a weight in pounds (lb), not a price in GBP."""
    if fact.key[2] == "GBP" and fact.key[1] is None and beside.key[1] == "mass" and _POUNDS.search(fact.text):
        raw = _fractions(fact.key[4])
        return Fact("number", fact.text, (tuple(v * POUND_KG for v in raw), "mass", None, "lb", fact.key[4]))
    return fact


def _fractions(item: object) -> frozenset[Fraction]:
    return frozenset(v for v in item if isinstance(v, Fraction)) if isinstance(item, tuple) else frozenset()


CONVERSION_TOLERANCE = Fraction(1, 100)
"""A value converted from another unit of its dimension ("12 km" as "7.46 miles") is equal
within this share of the reference's value; in the same unit, values are equal exactly."""


def _close(wanted: Fraction, got: Fraction) -> bool:
    return abs(wanted - got) <= abs(wanted) * CONVERSION_TOLERANCE


def _values(facts: Iterable[Fact]) -> list[Fact]:
    return [f for f in facts if f.kind in ("number", "time", "date")]


@dataclass(frozen=True)
class FactGrade:
    """How an answer fares against a reference: the verdict, a score in [0, 1] and why."""

    passed: bool
    score: float
    reason: str
    missing: tuple[str, ...] = ()


_ALTERNATIVE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly)\b", re.IGNORECASE)
_RANGE_GAP = re.compile(r"\s*(?:-|\u2013|\u2014|to|and)\s*", re.IGNORECASE)
_BOUND = re.compile(
    r"\b(?:under|up\s+to|at\s+(?:most|least)|over|(?:more|less|fewer)\s+than|below|above|max(?:imum)?|min(?:imum)?"
    r"|until|between|from)\b",
    re.IGNORECASE,
)
"""A reference that bounds its value ("Children under 6") is met by a range ("aged 0 to 6")."""
_BETWEEN = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_ENTITY_OR = re.compile(
    r"\b(?P<a>[A-Z][\w'\u2019-]*)\s*,?\s+or\s+(?:the\s+|on\s+|at\s+|in\s+|a\s+|an\s+)?(?P<b>[A-Z][\w'\u2019-]*)"
)
_POLARITY_WORDS = frozenset(
    {"not", "no", "longer", "never", "closed", "open", "opened", "outside", "during", "inside", "within", "non",
     "only", "also", "too", "still", "anymore", "shut"}
)  # fmt: skip
_OUTSIDE = re.compile(r"\boutside\b|\bnon-(?=[a-z])", re.IGNORECASE)
"""Beyond :data:`_NEGATION` and :data:`_PROHIBITION`, words that say a clause holds in the
negative: "outside peak hours", "non-refundable"."""


def _rival(fact: Fact, got: list[Fact], wanted: list[Fact]) -> bool:
    """Whether the answer states a value of the fact's kind (and, for a number, dimension) that
    no reference fact has: "109 hours" where the reference says "72 hours"."""
    return any(
        g.kind == fact.kind
        and (g.kind != "number" or g.key[1] == fact.key[1])
        and not any(_same_value(w, g) for w in wanted)
        for g in got
    )


def _years(facts: Iterable[Fact]) -> set[object]:
    """The years that facts state: bare years and the years of dates."""
    return {f.key[0] for f in facts if f.kind == "year"} | {
        f.key[2] for f in facts if f.kind == "date" and f.key[2] is not None
    }


def _ranged(answer: str, wanted: list[Fact]) -> Fact | None:
    """A number the answer gives as the other end of a range around the reference's number
    ("between 300 and 320 metres", "30-35%") when the reference states no such range."""
    values = [f for f in _value_facts(answer, _Claims(answer)) if f.kind == "number"]
    cursor, spans = 0, []
    for fact in values:
        start = answer.find(fact.text, cursor)
        if start < 0:
            return None
        spans.append((start, start + len(fact.text), fact))
        cursor = start + len(fact.text)
    for (_, end, first), (start, _, second) in pairwise(spans):
        gap = answer[end:start]
        if not _RANGE_GAP.fullmatch(gap):
            continue
        if gap.strip().lower() == "and" and not _BETWEEN.search(answer[: end - len(first.text)]):
            continue  # "€5 and 10 minutes": two values, not a range
        hits = [any(_same_value(w, f) for w in wanted) for f in (first, second)]
        if hits == [True, False]:
            return second
        if hits == [False, True]:
            return first
    return None


def _entity_hedge(answer: str, reference: str) -> Fact | None:
    """A name the answer offers as an alternative to a name of the reference ("the CFO or the
    CEO", "Saturday or Sunday") that the reference does not name."""
    known = _answer_entity_keys(_prepared(reference))
    for match in _ENTITY_OR.finditer(_prepared(answer)):
        first, second = (_entity_key(match.group(g)) for g in ("a", "b"))
        if first is None or second is None or _opening_word(match.group("a").lower()):
            continue
        if (first in known) != (second in known):
            other = match.group("b") if first in known else match.group("a")
            return Fact("entity", other, (second if first in known else first,))
    return None


def _says_no(clause: str, question: str) -> bool:
    return _clause_says_no(_OUTSIDE.sub(" not ", clause), question)


def _flipped_clause(reference: str, answer: str, question: str) -> str | None:
    """A clause of the reference that says no ("Shipping costs are not refunded", "It is closed
    on Sundays", "outside peak hours") to which the answer's clause on the same thing (sharing
    at least half of its content words, and one at the least) says yes, or one that says yes
    ("Visitors can use the gym") to which every such clause of the answer says no ("Visitors
    cannot use the gym", "non-refundable"); None when there is none."""
    answer_clauses = [c for c in _CLAUSES.split(_prepared(answer)) if c.strip()]
    for clause in (c for c in _CLAUSES.split(_prepared(_PAREN.sub("", reference))) if c.strip()):
        no = _says_no(clause, question)
        topic = {w for w in _content(clause) if w not in _POLARITY_WORDS}
        if not topic:
            continue
        need = max(1, (len(topic) + 1) // 2)
        scored = [(len(_content(_OUTSIDE.sub(" not ", c)) & topic), c) for c in answer_clauses]
        best = max((n for n, _ in scored), default=0)
        if best < need:
            continue
        answered = [_says_no(c, question) for n, c in scored if n == best]
        if (no and not any(answered)) or (not no and all(answered)):
            return clause.strip()
    return None


_OR_CURRENCY = re.compile(r"(?P<cur>[€£$])(?P<a>\d[\d.,]*)\s+or\s+(?P<b>\d[\d.,]*)(?![\d:])")
_OR_UNIT = re.compile(
    r"(?<![\d.,:€£$])(?P<a>\d[\d.,]*)\s+or\s+(?P<b>\d[\d.,]*)(?P<unit>\s*(?:working\s+|business\s+)?(?:"
    + _UNIT
    + r"))(?![a-z])",
    re.IGNORECASE,
)


def _shared_unit(sentence: str) -> str:
    """Two values joined by "or" share the unit or currency written once: "3 or 5 working days"
    reads "3 working days or 5 working days", "£10 or 12" reads "£10 or £12"."""
    sentence = _OR_CURRENCY.sub(lambda m: f"{m['cur']}{m['a']} or {m['cur']}{m['b']}", sentence)
    return _OR_UNIT.sub(lambda m: f"{m['a']}{m['unit']} or {m['b']}{m['unit']}", sentence)


def _hedged(answer: str, wanted: list[Fact]) -> Fact | None:
    """A value the answer offers as an alternative to a value of the reference: in a sentence
    that says "or" (or "either"), another value of the same kind and, for a number, the same
    unit and currency, beside the one the reference has ("7.80 or 7.20", "08:00 or 08:30";
    not "2.40 euros, or 24.00 for a ten-trip card"); None when the answer commits to its values."""
    for sentence in _SENTENCES.split(answer):
        if not _ALTERNATIVE.search(sentence):
            continue
        prepared = _shared_unit(_prepared(sentence))
        values = _values(_value_facts(prepared, _Claims(prepared)))
        for fact in wanted:
            matched = next((got for got in values if _same_value(fact, got)), None)
            if matched is None:
                continue
            for got in values:
                alike = got.kind == matched.kind and (got.kind != "number" or got.key[1:3] == matched.key[1:3])
                if alike and not any(_same_value(w, got) for w in wanted):
                    return got
    return None


def best_sentence_f1(answer: str, reference: str) -> float:
    """SQuAD token F1 against the reference of the answer's best-matching run of sentences, of
    at most as many sentences as the reference has: one sentence for a one-sentence reference
    (pasting the context never pays), and an answer that restates a several-sentence
    reference whole is measured whole."""
    sentences = [s for s in _SENTENCES.split(answer) if s.strip()] or [answer]
    width = min(len(sentences), max(1, len([s for s in _SENTENCES.split(reference) if s.strip()])))
    runs = (" ".join(sentences[i : i + w]) for w in range(1, width + 1) for i in range(len(sentences) - w + 1))
    return max(token_f1(run, reference) for run in runs)


def grade_reference(answer: str, reference: str, pass_threshold: float, question: str = "") -> FactGrade:
    """Grade ``answer`` to ``question`` against ``reference`` by the rules of this module."""
    words = len(answer.split())
    if words > MAX_ANSWER_WORDS:
        return FactGrade(False, 0.0, f"not an answer: {words} words (over {MAX_ANSWER_WORDS}), a paste of the context")
    question_text = _prepared(question) if question else ""
    asked_values = _value_facts(question_text, _Claims(question_text)) if question else []
    asked_years = _years(asked_values)
    wanted = [f for f in extract_facts(reference) if f.kind != "year" or f.key[0] not in asked_years]
    if not wanted:
        score = best_sentence_f1(answer, reference)
        flipped = _flipped_clause(reference, answer, question)
        if flipped is not None:
            return FactGrade(False, 0.0, f"it says the opposite of the reference: negation {flipped!r}")
        return FactGrade(
            score >= pass_threshold,
            score,
            f"no facts in the reference: token F1 {score:.3f} of the best-matching sentences",
        )
    prepared = _prepared(answer)
    got = _value_facts(prepared, _Claims(prepared))
    entity_keys = _answer_entity_keys(prepared)
    asked = _answer_entity_keys(_prepared(question)) if question else set()
    missing: list[str] = []
    reference_years = _years(extract_facts(reference))
    answer_years = _years(got)
    for fact in wanted:
        if fact.kind == "year":  # a wrong year fails; an answer that names no other year may leave it out
            ok = fact.key[0] in answer_years or not answer_years - reference_years - asked_years
        elif fact.kind == "frequency":  # "once a day" is met by "daily" unless another count is given
            ok = any(_same_value(fact, other) for other in got) or (
                fact.key[0] == 1
                and _EVERY[str(fact.key[1])].search(prepared) is not None
                and not any(other.kind == "frequency" and other.key[1] == fact.key[1] for other in got)
            )
        elif fact.kind == "polarity":
            ok = _answer_polarity(answer, question, str(fact.key[0])) == fact.key[0]
        elif fact.kind == "entity":
            ok = all(key in entity_keys for key in fact.key) or all(key in asked for key in fact.key)
            if not ok and fact.initial:
                ok = not _foreign_names(prepared, _answer_entity_keys(_prepared(reference)) | asked)
        else:  # a value the question states need not be repeated, unless the answer gives another
            ok = any(_same_value(fact, other) for other in got) or (
                any(_same_value(fact, q) for q in asked_values) and not _rival(fact, got, wanted)
            )
        if not ok:
            missing.append(fact.describe())
    if not missing and not any(f.kind == "polarity" for f in wanted):
        flipped = _flipped_clause(reference, answer, question)
        if flipped is not None:
            missing.append(f"negation {flipped!r}")
    score = (len(wanted) - len(missing)) / len(wanted)
    wanted_values = _values(wanted)
    extra = [f for f in _values(got) if not any(_same_value(w, f) for w in wanted_values)]
    allowed = max(MIN_EXTRA_VALUES, len(wanted_values))
    if len(extra) > allowed:
        return FactGrade(
            False,
            0.0,
            f"not an answer: it states {len(extra)} values the reference does not (over {allowed}), "
            "a paste of the context",
            tuple(missing),
        )
    ranged = None if _BOUND.search(reference) else _ranged(prepared, wanted_values)
    hedged = _hedged(answer, wanted_values) or ranged or _entity_hedge(answer, reference)
    if hedged and not missing:
        return FactGrade(
            False,
            0.5,
            f"it offers {hedged.text!r} as well as the reference's value: an answer that hedges between values "
            "does not state the fact",
            (hedged.describe(),),
        )
    if missing:
        return FactGrade(
            False,
            score,
            f"{len(missing)} of {len(wanted)} reference facts missing or wrong: {'; '.join(missing)}",
            tuple(missing),
        )
    return FactGrade(True, 1.0, f"all {len(wanted)} reference facts stated ({', '.join(f.text for f in wanted)})")


def _foreign_names(answer: str, known: set[str]) -> list[Fact]:
    """The answer's names that neither the reference nor the question has."""
    return [f for f in _entity_facts(answer) if not all(key in known for key in f.key)]


def unsupported_facts(answer: str, sources: Iterable[str]) -> tuple[list[Fact], list[Fact]]:
    """The answer's values and entities, split into those some source states and those none
    does (faithfulness without a judge): ``(supported, unsupported)``."""
    texts = [_prepared(s) for s in sources]
    source_values = [f for text in texts for f in _value_facts(text, _Claims(text))]
    source_keys: set[str] = set().union(*(_answer_entity_keys(t) for t in texts)) if texts else set()
    supported: list[Fact] = []
    unsupported: list[Fact] = []
    for fact in extract_facts(answer, notes=True):
        if fact.kind == "polarity":
            continue
        if fact.kind == "entity":
            ok = all(key in source_keys for key in fact.key)
        elif fact.kind == "year":
            ok = any(f.kind == "year" and f.key == fact.key for f in source_values) or any(
                f.kind == "date" and f.key[2] == fact.key[0] for f in source_values
            )
        else:
            ok = any(_same_value(fact, other) for other in source_values)
        (supported if ok else unsupported).append(fact)
    return supported, unsupported
