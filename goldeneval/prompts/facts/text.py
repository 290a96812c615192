"""How a text is made ready before its facts are read: notes, citations, sentences.

Both the reference and the answer go through the same preparation, so that a citation marker
(``[1]``), ``P+R`` or a daily amount written "in 24 hours" never makes two equal answers differ
(docs/guide/answers.md, "Reference grading: the facts decide": rules 1 and 5, round 5).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["COUNTRY_CURRENCIES", "IDENTIFIER", "NOTE", "SENTENCES", "fold", "identifier_key", "prepare", "stem"]

NOTE = re.compile(r"\s*\([^()]*\)")
"""A parenthesised remark of the reference: context for a reader, not a fact (rule 1)."""
_PARK_AND_RIDE = re.compile(r"\bP\s*\+\s*R\b", re.IGNORECASE)
_CITATION = re.compile(r"\[\d{1,3}(?:\s*[,;-]\s*\d{1,3})*\]")
"""A RAG answer's citation marker: ``[1]``, ``[2, 3]`` (not a fact)."""
IDENTIFIER = re.compile(
    r"(?<![\w-])(?!(?:mid|pre|post|non|anti|over|under|self|ex)-)(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])"
    r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![\w-])",
    re.IGNORECASE,
)
"""An identifier or code (round 10): letters and digits joined by hyphens, opening with a letter
("eu-north-1", "SKU-4411", "W-9", "COVID-19"): one fact, compared whole and case-insensitive
without its hyphens, never a number ("24-hour" opens with a digit: a value; "mid-2025" a year)."""


def identifier_key(text: str) -> str:
    """What an identifier compares on: lower case, without hyphens ("T-12" and "t12")."""
    return text.lower().replace("-", "")


SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
"""Where a sentence ends: ``.``, ``!``, ``?``, ``;`` and line breaks."""

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


_ALWAYS = re.compile(r"(?<![\d/.,])24\s*/\s*7(?![\d/.,]\d)")
""""24/7": "24 hours a day, 7 days a week" (round 8), not the fraction 24 / 7."""
_HOUR_RANGE = re.compile(
    r"\b(?P<a>\d{1,2})(?P<am>:\d{2})?\s*(?P<gap>-|\u2013|\u2014|to|until|till)\s*(?P<b>\d{1,2})(?P<bm>:\d{2})?"
    r"\s*(?P<mer>[ap]\.?\s?m\b\.?)",
    re.IGNORECASE,
)
"""A range of hours with its am or pm written once: "7\u20139 am" reads "7 am \u2013 9 am" (round 8);
"11\u20131 pm" reads "11 am \u2013 1 pm" (a start after the end is before noon)."""


def _hour_range(match: re.Match[str]) -> str:
    a, b, mer = int(match["a"]), int(match["b"]), match["mer"]
    if not (1 <= a <= 12 and 1 <= b <= 12):
        return match.group(0)
    first = mer
    if mer.lower().startswith("p") and a > b and b != 12:
        first = "am"
    return f"{match['a']}{match['am'] or ''} {first} {match['gap']} {match['b']}{match['bm'] or ''} {mer}"


def _fold_char(ch: str) -> str:
    if ch.isascii():
        return ch
    decomposed = unicodedata.normalize("NFKD", ch)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return bare if bare and bare != decomposed else ch


def fold(text: str) -> str:
    """Letters with diacritics folded to their base letters (round 9): "López" reads "Lopez",
    "café" "cafe".  Each character's Unicode NFKD form without its combining marks, for the
    characters that have such marks only: "m²", "½" and "€" are left as written."""
    return text if text.isascii() else "".join(_fold_char(ch) for ch in text)


COUNTRY_CURRENCIES = {
    "swiss francs?": "CHF", "canadian dollars?": "CAD", "australian dollars?": "AUD", "new zealand dollars?": "NZD",
    "hong kong dollars?": "HKD", "singapore dollars?": "SGD", "u\\.?s\\.? dollars?": "USD", "american dollars?": "USD",
    "japanese yen": "JPY", "indian rupees?": "INR", "chinese yuan": "CNY", "swedish kron(?:a|or)": "SEK",
    "norwegian kron(?:e|er)": "NOK", "danish kron(?:e|er)": "DKK", "polish zloty?s?": "PLN",
    "czech korun(?:a|y)": "CZK", "hungarian forints?": "HUF", "south african rand": "ZAR",
    "mexican pesos?": "MXN", "brazilian reais|brazilian real": "BRL", "british pounds?|pounds? sterling": "GBP",
}  # fmt: skip
"""A currency's name with its country (a regular expression, matched whole and case-insensitive)
-> its ISO 4217 code: "200 Swiss francs" reads "200 CHF" (round 10)."""
_COUNTRY_CURRENCY = re.compile(
    r"\b(?:" + "|".join(f"(?P<c{i}>{name})" for i, name in enumerate(COUNTRY_CURRENCIES)) + r")\b", re.IGNORECASE
)
_CODES = tuple(COUNTRY_CURRENCIES.values())
_DOTTED = re.compile(r"\b(?P<letters>(?:[A-Z]\.){2,})(?P<next>\s+[A-Z])?")
"""An abbreviation written with dots ("U.S.", "U.K."): read without them ("US"), its last dot
kept where a capitalised word follows (it may end the sentence)."""


def _undotted(match: re.Match[str]) -> str:
    letters = match["letters"].replace(".", "")
    return f"{letters}.{match['next']}" if match["next"] else letters


def _code(match: re.Match[str]) -> str:
    return next(_CODES[int(k[1:])] for k, v in match.groupdict().items() if v is not None)


def prepare(text: str) -> str:
    """Diacritics folded (:func:`fold`); dotted abbreviations undotted ("U.S.": "US") and a
    currency named with its country read as its code ("Swiss francs": "CHF", round 10); ``P+R``
    read as "Park and Ride"; citation markers (``[1]``, ``[2, 3]``) dropped; an amount "in 24
    hours" read as "per day" (:data:`_PER_DAY`); "24/7" read as "24 hours a day, 7 days a week"
    and an hour range's shared am or pm given to both ends (:data:`_HOUR_RANGE`)."""
    text = _COUNTRY_CURRENCY.sub(_code, _DOTTED.sub(_undotted, fold(text)))
    text = _ALWAYS.sub("24 hours a day, 7 days a week", _CITATION.sub(" ", text))
    return _per_day(_HOUR_RANGE.sub(_hour_range, _PARK_AND_RIDE.sub("Park and Ride", text)))


def stem(token: str) -> str:
    """A word's comparison form: lower case, without a possessive or a plural ``s``."""
    token = token.lower().replace("\u2019", "'")
    if token.endswith("'s"):
        token = token[:-2]
    token = token.rstrip("'")
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token
