"""Deterministic assertions (ADR-060, decision 2): no model call, no tokens.

``exact`` and ``contains`` compare whitespace-normalised text (case-insensitively unless
``case_sensitive``); ``regex`` searches with Python's ``re`` (``DOTALL``, and ``IGNORECASE``
unless ``case_sensitive``); ``json_schema`` is a deliberately structural check — the answer
(a Markdown code fence around it is allowed) is a JSON object, every ``required`` key is
present and every key listed in ``properties`` that is present has its JSON type — not a full
JSON Schema draft validator (ADR-060 explains why).  ``negate`` inverts the outcome.

:func:`token_f1` scores an answer against a reference text: the F1 of their content terms
(lower-cased, stop words removed, Snowball-stemmed: the lexical retriever's analyser).
"""

from __future__ import annotations

import json
import re
from typing import Any

from goldeneval.answers.details import AssertionOutcome
from goldeneval.answers.golden import Assertion, AssertionType, JsonType
from goldeneval.core.errors import one_line
from goldeneval.core.text import content_terms

__all__ = ["check_assertion", "parse_json_answer", "token_f1"]

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_JSON_TYPES: dict[JsonType, tuple[type, ...]] = {
    JsonType.STRING: (str,),
    JsonType.NUMBER: (int, float),
    JsonType.INTEGER: (int,),
    JsonType.BOOLEAN: (bool,),
    JsonType.ARRAY: (list,),
    JsonType.OBJECT: (dict,),
    JsonType.NULL: (type(None),),
}


def _normalise(text: str, case_sensitive: bool) -> str:
    text = " ".join(text.split())
    return text if case_sensitive else text.casefold()


def parse_json_answer(answer: str) -> Any:
    """The JSON value of an answer (inside a Markdown code fence, or the whole answer).

    Raises ``ValueError`` naming what is wrong."""
    fenced = _FENCE.match(answer)
    text = fenced.group(1) if fenced else answer.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def _is_type(value: Any, expected: JsonType) -> bool:
    if isinstance(value, bool) and expected in (JsonType.NUMBER, JsonType.INTEGER):
        return False  # JSON true is not a number
    return isinstance(value, _JSON_TYPES[expected])


def _json_structure(assertion: Assertion, answer: str) -> tuple[bool, str]:
    try:
        value = parse_json_answer(answer)
    except ValueError as exc:
        return False, f"the answer is {exc}"
    if not isinstance(value, dict):
        return False, f"the answer is a JSON {type(value).__name__}, not an object"
    missing = [key for key in assertion.required if key not in value]
    if missing:
        return False, f"missing keys: {', '.join(missing)}"
    wrong = [
        f"{key} is not {kind.value}"
        for key, kind in assertion.properties.items()
        if key in value and not _is_type(value[key], kind)
    ]
    if wrong:
        return False, "; ".join(wrong)
    return True, "a JSON object with the required keys and types"


def _check(assertion: Assertion, answer: str) -> tuple[bool, str]:
    value = assertion.value or ""
    sensitive = assertion.case_sensitive
    if assertion.type is AssertionType.EXACT:
        found = _normalise(answer, sensitive) == _normalise(value, sensitive)
        return found, ("equal" if found else f"got {one_line(answer, 80)!r}")
    if assertion.type is AssertionType.CONTAINS:
        found = _normalise(value, sensitive) in _normalise(answer, sensitive)
        return found, ("found" if found else "not found")
    if assertion.type is AssertionType.REGEX:
        flags = re.DOTALL | (0 if sensitive else re.IGNORECASE)
        match = re.search(value, answer, flags)
        return match is not None, (f"matched {one_line(match.group(0), 60)!r}" if match else "no match")
    return _json_structure(assertion, answer)


def check_assertion(assertion: Assertion, answer: str) -> AssertionOutcome:
    """Evaluate one assertion; the message says what was expected and what was found."""
    held, found = _check(assertion, answer)
    passed = held != assertion.negate
    return AssertionOutcome(
        type=assertion.type.value,
        passed=passed,
        weight=assertion.weight,
        negate=assertion.negate,
        message=f"{assertion.describe()}: {found}",
    )


def token_f1(answer: str, reference: str) -> float:
    """F1 of the content terms of ``answer`` against ``reference`` (0 when either has none)."""
    predicted, expected = content_terms(answer), content_terms(reference)
    common = len(predicted & expected)
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)
