"""Golden question sets (ADR-072, decision 1): the models, file loading and validation.

A golden question set is a list of labelled questions against one concrete corpus.  Each
question names ALL the documents that answer it (any of them is a hit) or none at all, in
which case it declares that no indexed document answers it.

Files are YAML, JSON or JSONL.  The models below are the single source of truth of the
format: the published JSON Schema (``goldeneval/retrieval/schema/``) is generated from them, and every
file is validated by them.  A bad file fails with one message that names the file, the
question (position and id) and the field.
"""

from __future__ import annotations

import hashlib
import json
import operator
import reprlib
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Mapping
from itertools import islice
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, ValidationInfo, field_validator
from pydantic_core import ErrorDetails

from goldeneval.core.errors import GoldenSetError, error_problem, one_line
from goldeneval.core.forms import QuestionForm
from goldeneval.core.jsonl import unique_keys
from goldeneval.core.set_files import clip, is_text, parse_document, parse_jsonl_set, read_text
from goldeneval.core.set_models import (
    NonBlankText,
    SetItem,
    SetModel,
    non_blank,
    published_schema,
    unique_ids,
    validate_items,
)

__all__ = [
    "KNOWN_HARD_CLASSES",
    "Draft",
    "GoldenQuestion",
    "GoldenQuestionSet",
    "QuestionForm",
    "forget_loaded",
    "golden_set_json_schema",
    "load_draft_set",
    "load_golden_set",
]

KNOWN_HARD_CLASSES = (
    "near-duplicate",
    "specific-vs-general",
    "prose-free",
    "boilerplate",
    "normal",
)
"""Hard classes the methodology names; any other non-empty string is accepted as well."""

SET_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
MAX_GRADE = 1_000_000
"""Highest relevance grade (graded qrels use 1 to 3 or 4): grades are gains the metrics sum
as 64-bit integers and floats, where a grade of 10**21 would not fit."""


class Draft(BaseModel):
    """Where a drafted question came from (``goldeneval draft``): its source document, the
    form the model claimed and the one measured, and what drafted it (model, prompt, rule)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: NonBlankText = Field(min_length=1, description="The document the question was drafted from.")
    claimed_form: QuestionForm = Field(description="The form the model said the question has.")
    overlap: float = Field(ge=0, le=1, description="The question's vocabulary overlap with its source.")
    rule: NonBlankText = Field(min_length=1, description="The rule that measured the form, with its version.")
    model: NonBlankText = Field(min_length=1, description="The model that drafted it.")
    prompt: NonBlankText = Field(min_length=1, description="The prompt it was asked with (name, version, digest).")


class GoldenQuestion(SetItem):
    """One labelled question.  ``answer_gist`` documents the label and is never scored."""

    # pydantic-core's JSON parser would keep up to 16,384 of the values it read (ids, texts,
    # document ids): each left alive after the set is freed holds a block of its memory from the
    # system.  Keys only: the field names, a handful of strings.
    model_config = ConfigDict(cache_strings="keys")

    text: NonBlankText = Field(min_length=1, description="The question as a user would ask it.")
    form: QuestionForm = Field(description="MATCH or GAP.")
    expected: frozenset[str] = Field(
        description=(
            "Every document id that answers the question; any of them counts as a hit. "
            "Empty: no indexed document answers it, and only an empty ranking is a hit."
        )
    )
    hard_class: str | None = Field(
        default=None,
        description="Known-difficult retrieval class, e.g. " + ", ".join(KNOWN_HARD_CLASSES) + ".",
    )
    grades: dict[str, StrictInt] = Field(
        default_factory=dict,
        description=(
            "Graded relevance of expected documents (an integer >= 1; a document not listed "
            "here has grade 1). Graded nDCG uses the grade as its gain; the binary metrics "
            "count a document relevant when its grade reaches the run's relevance level."
        ),
    )
    not_relevant: frozenset[str] = Field(
        default_factory=frozenset,
        description=(
            "Document ids judged not relevant (grade 0), e.g. by `goldeneval judgments to-set`. "
            "Never a hit and never in a rank metric; they make judged@k measurable: the share "
            "of the first k distinct documents that carry a judgment. Disjoint from expected."
        ),
    )
    answer_gist: str | None = Field(default=None, description="Label documentation for humans; never scored.")
    form_derived: bool = Field(
        default=False,
        description="True when the form was derived by a rule (BEIR import), not labelled.",
    )
    draft: Draft | None = Field(
        default=None,
        description=(
            "Set on a question a model drafted (goldeneval draft): no run scores it until a person "
            "accepts it (pool the set, judge its source, judgments to-set writes it without this)."
        ),
    )

    @field_validator("expected", "not_relevant", mode="before")
    @classmethod
    def _no_repeated_ids(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) > 1:  # one id cannot repeat: most questions
            ids = [v for v in value if isinstance(v, str)]
            if len(set(ids)) == len(ids):  # the common case: no Counter needed
                return value
            repeated = sorted(v for v, n in Counter(ids).items() if n > 1)
            raise ValueError(f"document ids listed twice: {', '.join(repeated)}")
        return value

    @field_validator("expected", "not_relevant")
    @classmethod
    def _require_ids(cls, value: frozenset[str]) -> frozenset[str]:
        for doc_id in value:
            if not doc_id.strip():
                raise ValueError("document ids must not be empty")
        return value

    @field_validator("not_relevant")
    @classmethod
    def _not_also_expected(cls, value: frozenset[str], info: ValidationInfo) -> frozenset[str]:
        """A document is judged once: relevant (``expected``) or not (here), never both."""
        both = sorted(value & info.data.get("expected", frozenset()))
        if both:
            raise ValueError(f"names documents that are also expected: {', '.join(both[:5])}")
        return value

    @field_validator("hard_class")
    @classmethod
    def _require_class(cls, value: str | None) -> str | None:
        return None if value is None else non_blank(value)

    @field_validator("grades")
    @classmethod
    def _grades_of_expected_documents(cls, value: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        expected = info.data.get("expected", frozenset())
        strays = sorted(set(value) - expected)
        if strays:
            raise ValueError(f"names documents that are not expected: {', '.join(strays[:5])}")
        for doc_id, grade in value.items():
            if grade < 1:
                raise ValueError(f"grade of {doc_id!r} must be at least 1 (expected means relevant), got {grade}")
            if grade > MAX_GRADE:
                raise ValueError(f"grade of {doc_id!r} must be at most {MAX_GRADE} (a relevance grade)")
        # Grade 1 is the default: dropping it keeps one form per meaning (and the label digest).
        return {doc_id: grade for doc_id, grade in sorted(value.items()) if grade != 1}

    def grade(self, doc_id: str) -> int:
        """The relevance grade of ``doc_id``: 0 when it is not expected."""
        return self.grades.get(doc_id, 1) if doc_id in self.expected else 0

    @property
    def judgements(self) -> dict[str, int]:
        """Every expected document with its grade (trec_eval's qrels of this question)."""
        return {doc_id: self.grades.get(doc_id, 1) for doc_id in sorted(self.expected)}

    @property
    def judged(self) -> frozenset[str]:
        """Every document that carries a judgment, relevant or not (what judged@k counts)."""
        return self.expected | self.not_relevant if self.not_relevant else self.expected


class GoldenQuestionSet(SetModel):
    """A named list of golden questions, labelled against one corpus."""

    id: NonBlankText = Field(min_length=1, max_length=200, description="Unique among all sets.")
    corpus: str | None = Field(
        default=None,
        description=(
            "Where the corpus the labels refer to lies, relative to the set file. "
            "Used when no corpus is given on the command line."
        ),
    )
    questions: Annotated[tuple[GoldenQuestion, ...], unique_ids("question")] = Field(min_length=1)
    unjudged: tuple[str, ...] = Field(
        default=(),
        description=(
            "Ids of source questions left out because they have no relevant judgement "
            "(a BEIR/TREC query judged only with grade 0); reported with every run, never scored."
        ),
    )

    @property
    def records_negatives(self) -> bool:
        """Whether any question records judged non-relevant documents: then every run of the
        set reports judged@k (without them a judged share would only count the expected)."""
        return any(question.not_relevant for question in self.questions)


def golden_set_json_schema() -> dict[str, Any]:
    """The JSON Schema of a YAML/JSON golden set file, generated from the models."""
    return published_schema(GoldenQuestionSet, "golden-question-set")


# --------------------------------------------------------------------------- loading


def load_golden_set(path: str | Path, *, drafts_ok: bool = False) -> GoldenQuestionSet:
    """Load and validate one golden set file (YAML, JSON or JSONL).

    JSONL holds one question object per line; an optional first line
    ``{"set": {"id": ..., "description": ..., "corpus": ...}}`` names the set, else the
    file name (without suffix) is its id.

    A question drafted by a model and not accepted yet (``draft``) is refused: no run scores
    it; ``drafts_ok`` reads it all the same (pooling and judging, :func:`load_draft_set`).

    A JSONL file is first tried on a fast path (:func:`_load_jsonl_fast`) that accepts only
    what the checked path accepts, to the same model; anything else takes the checked path,
    which names the file, line or question and field of the first problem.
    """
    path = Path(path)
    suffix = _suffix(path)
    text = read_text(path, GoldenSetError)
    key = (str(path.resolve()), hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    with _LOADED_LOCK:
        cached = _LOADED.get(key)
        if cached is not None:
            _LOADED.move_to_end(key)
    if cached is not None:
        if not drafts_ok:
            _refuse_drafts(path, cached)
        return cached
    loaded = _load_jsonl_fast(path, text) if suffix == ".jsonl" else None
    if loaded is None:
        loaded = _load_checked(path, suffix, text)
    loaded = loaded.with_corpus_beside(path)
    with _LOADED_LOCK:
        _LOADED[key] = loaded
        while len(_LOADED) > _LOADED_SETS:
            _LOADED.popitem(last=False)
    if not drafts_ok:
        _refuse_drafts(path, loaded)
    return loaded


def _refuse_drafts(path: Path, golden_set: GoldenQuestionSet) -> None:
    """A run scores no draft: the first one is invalid input naming the file, question and field."""
    for position, question in enumerate(golden_set.questions, start=1):
        if question.draft is not None:
            raise GoldenSetError(
                path,
                "a drafted question no person accepted yet; no run scores it: pool the set "
                "(goldeneval pool, which pools each draft's source), judge it (goldeneval judge) and write "
                "the accepted questions with goldeneval judgments to-set",
                position=position,
                item_id=question.id,
                field="draft",
            )


class _SharedParts:
    """Lets the questions of a loaded set share the parts most of them hold alike: one set of
    given field names per distinct combination (pydantic keeps one per model, 728 bytes for
    five names), one empty ``not_relevant`` and one string per hard class.  A question of a
    large set then takes about half the memory (100,000 questions: 152 -> 80 MiB), and nothing
    anyone can see changes: the models are frozen, equal to what they were, and pydantic
    copies the field-name set before it changes one (``model_copy``).  Called on each question
    as it is validated, so that its own parts are freed before the next one is built."""

    def __init__(self) -> None:
        self._field_sets: dict[frozenset[str], set[str]] = {}
        self._classes: dict[str, str] = {}

    def __call__(self, question: GoldenQuestion) -> GoldenQuestion:
        names = question.__pydantic_fields_set__
        shared_names = self._field_sets.setdefault(frozenset(names), names)
        if shared_names is not names:
            object.__setattr__(question, "__pydantic_fields_set__", shared_names)
        values = question.__dict__
        if not values["not_relevant"]:
            values["not_relevant"] = _NO_IDS
        hard_class = values["hard_class"]
        if hard_class is not None:
            values["hard_class"] = self._classes.setdefault(hard_class, hard_class)
        return question


_NO_IDS: frozenset[str] = frozenset()
"""The empty ``not_relevant`` every question without judged negatives shares once loaded."""

_LOADED_SETS = 8
_LOADED: OrderedDict[tuple[str, bytes], GoldenQuestionSet] = OrderedDict()
"""Sets already validated in this process, by file and content digest.  A Dagster run in one
process reads the same set in several assets (and the suite reads every set to learn its id):
validating 10,000 questions once instead of seven times.  The text is read and hashed every
time, so an edited file is validated again; the models are frozen, so sharing one is safe."""
_LOADED_LOCK = threading.Lock()


def forget_loaded(golden_set: GoldenQuestionSet) -> None:
    """Let go of ``golden_set`` where :func:`load_golden_set` keeps it for this process: for a
    door that evaluates a set once and has no more use for it (the CLI), so that the questions
    can be freed before the run is written and reported; at 1,000,000 questions they are
    most of what the process holds.  Loading the file again validates it again."""
    with _LOADED_LOCK:
        for key in [key for key, kept in _LOADED.items() if kept.questions is golden_set.questions]:
            del _LOADED[key]


def load_draft_set(path: str | Path) -> GoldenQuestionSet:
    """A set being labelled, to pool and judge: read and checked as :func:`load_golden_set`
    reads a set (its errors name the file, the question and the field alike), each question
    without ``expected`` yet taken as expecting nothing.  A run measures only a labelled set;
    a set whose every question has ``expected`` is the one :func:`load_golden_set` gives."""
    path = Path(path)
    suffix = _suffix(path)
    raw = _parsed(path, suffix, read_text(path, GoldenSetError))
    questions = raw.get("questions")
    if not isinstance(questions, list) or all(not isinstance(q, Mapping) or "expected" in q for q in questions):
        return load_golden_set(path, drafts_ok=True)
    drafted = [{**q, "expected": []} if isinstance(q, Mapping) and "expected" not in q else q for q in questions]
    return _build_set(path, {**raw, "questions": drafted}).with_corpus_beside(path)


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SET_FILE_SUFFIXES:
        raise GoldenSetError(path, f"unsupported file type {suffix!r}; use one of {', '.join(SET_FILE_SUFFIXES)}")
    return suffix


def _load_checked(path: Path, suffix: str, text: str) -> GoldenQuestionSet:
    """Parse and validate ``text`` step by step, so that the first problem is reported with
    the file, the line or question, and the field."""
    return _build_set(path, _parsed(path, suffix, text))


def _parsed(path: Path, suffix: str, text: str) -> Mapping[str, Any]:
    """The set file's document, checked to be a mapping (the set's fields and questions)."""
    raw = (
        parse_document(path, suffix, text, GoldenSetError)
        if suffix != ".jsonl"
        else parse_jsonl_set(path, text, "questions", GoldenSetError)
    )
    if not isinstance(raw, Mapping):
        found = "an empty document" if raw is None else type(raw).__name__
        raise GoldenSetError(path, f"expected a mapping with 'id' and 'questions', found {found}")
    return raw


_QUESTION_FROM_JSON = GoldenQuestion.__pydantic_validator__.validate_json
"""pydantic-core's validator of one question from its JSON text: parsing and validation in
one call, with no Python dict in between and without ``model_validate_json``'s Python wrapper."""


def _load_jsonl_fast(path: Path, text: str) -> GoldenQuestionSet | None:
    """The set that JSONL ``text`` holds when the file is valid, else None.

    The checked path is slow on a large set: a Python dict per question from ``json.loads``,
    ``model_validate`` per question, the whole set validated again, and the whole document
    serialised once more to find lone surrogates.  Here each question line is parsed and
    validated in one pydantic-core call, and the set's own fields are validated on a
    one-question shell that then takes all the questions: their one set-level rule, unique
    ids, is checked here (a new one must be added here too).

    It returns a set only where the checked path returns an equal one, and None for
    anything else, so that the checked path finds and words the problem.  pydantic-core's
    JSON parser refuses what ``json.loads`` refuses or the model rejects (lone surrogate
    escapes, control characters in strings, a line holding less or more than one value, ...)
    and decodes the rest alike; the checks the checked path adds (header lines, duplicate
    ids, repeated keys, the set's fields, integer length) are repeated.  tests/test_golden_fast_path.py
    compares the two paths.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    header: dict[str, Any] = {"id": path.stem}
    try:
        start = 0
        while start < len(lines):
            item = json.loads(lines[start], object_pairs_hook=unique_keys)
            if not (isinstance(item, dict) and set(item) == {"set"}):
                break
            if not isinstance(item["set"], dict):
                return None
            header = {**header, **item["set"]}
            start += 1
        shared = _SharedParts()
        questions = [shared(_QUESTION_FROM_JSON(line)) for line in islice(lines, start, None)]
        for line, question in zip(islice(lines, start, None), questions, strict=True):
            if not _keys_all_distinct(line, question):
                json.loads(line, object_pairs_hook=unique_keys)  # raises on a repeated key
    except Exception:  # every failure, whatever its kind, is the checked path's to report
        return None
    header.pop("questions", None)  # the checked path, too, takes the questions from the lines
    if not questions or not is_text(header) or not _unique_ids(questions) or not _grades_json_loads_reads(questions):
        return None
    try:
        shell = GoldenQuestionSet.model_validate({**header, "questions": questions[:1]})
    except ValidationError:
        return None
    return shell.model_copy(update={"questions": tuple(questions)})


def _keys_all_distinct(line: str, question: GoldenQuestion) -> bool:
    """True when the JSON ``line`` that validated to ``question`` cannot repeat a key, which
    pydantic-core's parser (last one wins) does not refuse.  Each key of the line is followed
    by one colon outside strings, and its only objects are the question and its grades; so a
    line with no more colons than the distinct keys it gave has no key twice.  Otherwise
    (a colon in a text or an id, grades of 1, which validation drops) it is parsed again."""
    return line.count(":") == len(question.model_fields_set) + len(question.grades)


def _unique_ids(questions: list[GoldenQuestion]) -> bool:
    return len(set(map(operator.attrgetter("id"), questions))) == len(questions)


def _grades_json_loads_reads(questions: list[GoldenQuestion]) -> bool:
    """False when a grade has more digits than ``json.loads`` converts
    (``sys.get_int_max_str_digits()``): the checked path fails on it, pydantic-core does not."""
    limit = sys.get_int_max_str_digits()
    graded = list(filter(None, map(operator.attrgetter("grades"), questions)))
    if not limit or not graded:
        return True
    bound = 10**limit
    return all(grade < bound for grades in graded for grade in grades.values())


MAX_QUOTED_FIELD = 60
"""Longest question id and field path an error quotes (a key of the file can be any length)."""
MAX_QUOTED_VALUE = 80
"""Longest excerpt of a bad value an error quotes (``got ...``)."""
MAX_QUOTED_PROBLEM = 160
"""Longest problem an error states.  With the file name, an error stays a few hundred characters."""


def _field_name(loc: tuple[int | str, ...]) -> str:
    return clip(".".join(str(part) for part in loc), MAX_QUOTED_FIELD) if loc else "(question)"


def _short_repr(value: Any) -> str:
    """A bounded ``repr``: at most a few items, levels and characters of ``value`` are read,
    so a huge or deeply shared value (a YAML alias) costs nothing to quote."""
    shortener = reprlib.Repr()
    shortener.maxlevel, shortener.maxlist, shortener.maxdict = 3, 4, 4
    shortener.maxtuple = shortener.maxset = shortener.maxfrozenset = 4
    shortener.maxstring = shortener.maxother = 60
    return clip(shortener.repr(value), MAX_QUOTED_VALUE)  # a repr is one line: newlines are escaped


_PLAIN_PROBLEMS = {
    "missing": "missing required field",
    "frozen_set_type": "must be a list of document ids",
}
"""pydantic messages that would confuse a set author, in the author's words."""


def _problem(error: ErrorDetails) -> str:
    return one_line(error_problem(error, _PLAIN_PROBLEMS), MAX_QUOTED_PROBLEM)


def _build_set(path: Path, raw: Mapping[str, Any]) -> GoldenQuestionSet:
    raw_questions = raw.get("questions")
    if raw_questions is None:
        raise GoldenSetError(path, "missing required field", field="questions")
    if not isinstance(raw_questions, list):
        raise GoldenSetError(path, f"must be a list, found {type(raw_questions).__name__}", field="questions")
    questions = list(
        map(
            _SharedParts(),
            validate_items(
                path, raw_questions, GoldenQuestion, GoldenSetError, describe=_question_problem, quote_id=_quoted_id
            ),
        )
    )
    if not questions:
        raise GoldenSetError(path, "must hold at least one question", field="questions")
    header = {key: value for key, value in raw.items() if key != "questions"}
    try:
        return GoldenQuestionSet.model_validate({**header, "questions": questions})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise GoldenSetError(path, _problem(error), field=_field_name(error["loc"])) from None


def _question_problem(exc: ValidationError) -> tuple[str, str]:
    error = exc.errors()[0]
    message = _problem(error)
    if "input" in error and error["type"] not in ("missing", "extra_forbidden"):
        message += f" (got {_short_repr(error['input'])})"
    return _field_name(error["loc"]), message


def _quoted_id(raw_id: str) -> str:
    return clip(raw_id, MAX_QUOTED_FIELD)
