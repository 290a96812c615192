"""Deterministic assertions (ADR-060, decision 2): no model call, no tokens.

``exact``, ``contains``, ``contains-any``, ``contains-all``, ``starts-with`` and ``levenshtein``
compare whitespace-normalised text (case-insensitively unless ``case_sensitive``);
``levenshtein`` counts single-character edits with rapidfuzz (``max_distance``) or their share
of the longer text (``min_ratio``: 1 - distance / length).  ``regex`` searches with the
``regex`` package under the run's time bound (``DOTALL``, and ``IGNORECASE`` unless
``case_sensitive``; :mod:`goldeneval.prompts.safe_regex` says why not ``re``): a pattern that
runs past it raises, and the prompt is a grading error rather than a hung run.
``json_schema`` is a deliberately structural check — the answer (a Markdown code fence
around it is allowed) is a JSON object, every ``required`` key is present and every key
listed in ``properties`` that is present has its JSON type — not a full JSON Schema draft
validator (ADR-060 explains why).  ``negate`` inverts the outcome.

:func:`token_f1` scores an answer against a reference text: SQuAD's F1 over the tokens
:func:`normalise_answer` leaves (the official SQuAD normalisation: lower-cased, ASCII
punctuation removed, the articles *a*, *an*, *the* removed, split on whitespace), counted
as a multiset.  Precision counts, so an answer that buries the reference in a page of text
scores low: repeating the prompt is not a way to pass.  Both the reference grader and the
abstention detector (:mod:`goldeneval.prompts.abstention`) tokenise with this one function.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from typing import Any

from rapidfuzz.distance import Levenshtein

from goldeneval.core.errors import one_line
from goldeneval.prompts import safe_regex
from goldeneval.prompts.code_assertions import run_check
from goldeneval.prompts.details import AssertionOutcome
from goldeneval.prompts.golden import Assertion, AssertionType, JsonType

__all__ = ["check_assertion", "normalise_answer", "parse_json_answer", "reference_contained", "token_f1"]

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
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


def _contained(assertion: Assertion, answer: str) -> tuple[bool, str]:
    text = _normalise(answer, assertion.case_sensitive)
    found = [value for value in assertion.values if _normalise(value, assertion.case_sensitive) in text]
    if assertion.type is AssertionType.CONTAINS_ANY:
        return bool(found), (f"found {one_line(found[0], 60)!r}" if found else "none found")
    missing = [value for value in assertion.values if value not in found]
    return not missing, ("all found" if not missing else f"missing {one_line(', '.join(map(repr, missing)), 80)}")


def _levenshtein(assertion: Assertion, answer: str) -> tuple[bool, str]:
    got = _normalise(answer, assertion.case_sensitive)
    expected = _normalise(assertion.value or "", assertion.case_sensitive)
    distance = Levenshtein.distance(got, expected)
    if assertion.max_distance is not None:
        return distance <= assertion.max_distance, f"distance {distance}"
    ratio = Levenshtein.normalized_similarity(got, expected)
    return ratio >= (assertion.min_ratio or 0.0), f"ratio {ratio:.3f} (distance {distance})"


def _check(assertion: Assertion, answer: str) -> tuple[bool, str]:
    value = assertion.value or ""
    sensitive = assertion.case_sensitive
    kind = assertion.type
    if kind is AssertionType.EXACT:
        found = _normalise(answer, sensitive) == _normalise(value, sensitive)
        return found, ("equal" if found else f"got {one_line(answer, 80)!r}")
    if kind is AssertionType.CONTAINS:
        found = _normalise(value, sensitive) in _normalise(answer, sensitive)
        return found, ("found" if found else "not found")
    if kind in (AssertionType.CONTAINS_ANY, AssertionType.CONTAINS_ALL):
        return _contained(assertion, answer)
    if kind is AssertionType.STARTS_WITH:
        found = _normalise(answer, sensitive).startswith(_normalise(value, sensitive))
        return found, ("starts so" if found else f"starts {one_line(answer, 40)!r}")
    if kind is AssertionType.LEVENSHTEIN:
        return _levenshtein(assertion, answer)
    if kind is AssertionType.REGEX:
        match = safe_regex.search(value, answer, case_sensitive=sensitive)
        return match is not None, (f"matched {one_line(match.group(0), 60)!r}" if match else "no match")
    if kind is AssertionType.CODE:
        return run_check(value, answer)  # a check that cannot run raises: the prompt's grading error
    return _json_structure(assertion, answer)


def check_assertion(assertion: Assertion, answer: str) -> AssertionOutcome:
    """Evaluate one assertion; the message says what was expected and what was found.

    Raises :class:`~goldeneval.prompts.safe_regex.RegexTimeout` when a regular expression runs
    past the time bound: an error of the grading, not a failed check."""
    held, found = _check(assertion, answer)
    passed = held != assertion.negate
    return AssertionOutcome(
        type=assertion.type.value,
        passed=passed,
        weight=assertion.weight,
        negate=assertion.negate,
        message=f"{assertion.describe()}: {found}",
    )


def normalise_answer(text: str) -> str:
    """The official SQuAD answer normalisation (``normalize_answer`` of the SQuAD v1.1/v2.0
    evaluation script): lower-case, drop ASCII punctuation, drop the articles, collapse
    whitespace.  Kept here only, so F1, ``contains`` as a signal and abstention phrases all
    see the same tokens."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(answer: str, reference: str) -> float:
    """SQuAD's token F1 of ``answer`` against ``reference`` on normalised tokens (a multiset).

    When either side has no token, 1.0 if both have none, else 0.0 (as the SQuAD script)."""
    predicted, expected = normalise_answer(answer).split(), normalise_answer(reference).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def reference_contained(answer: str, reference: str) -> bool:
    """Whether the normalised reference occurs in the normalised answer, on token boundaries:
    a signal shown beside the F1, never a score of its own."""
    wanted = normalise_answer(reference)
    return bool(wanted) and f" {wanted} " in f" {normalise_answer(answer)} "
