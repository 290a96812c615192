"""Draft questions from a corpus with a model (``goldeneval draft``), forms measured, never trusted.

For each document of the corpus the model (built as ``--judge-model`` is, by
:func:`goldeneval.prompts.models.build_model`, and called through
:class:`~goldeneval.prompts.calls.ManagedModel`: its response cache, timeout, circuit breaker
and usage accounting; ``goldeneval.openai`` retries as it always does) is asked with the
prompt :data:`DRAFT_PROMPT` for ``per_document`` questions of each form, answered as JSON
``{"questions": [{"text": "...", "form": "MATCH" | "GAP"}, ...]}``.  Then:

* **The form is measured**: the question's vocabulary overlap with its source document by the
  rule of :mod:`goldeneval.retrieval.overlap` (``vocabulary-overlap/v1``) decides MATCH or GAP.
  A draft whose claimed form disagrees is relabelled to the measured form (``mismatch="relabel"``,
  the default) or dropped (``mismatch="drop"``); the claim and the overlap are kept.
* **Near-duplicates are removed**: a draft whose text is a duplicate or near-duplicate of an
  earlier draft (:mod:`goldeneval.retrieval.lint`'s rules: the same normalised text, or word
  sets with a Jaccard similarity of 0.8 or more) is dropped.
* Each kept draft carries its source document as its ``expected`` one and a ``draft`` object
  (source, claimed form, overlap, rule, model, prompt): the set file is read for pooling and
  judging, and no run scores a draft (:func:`goldeneval.retrieval.golden.load_golden_set` refuses
  it) until a person accepts it: ``goldeneval pool`` pools each draft's source beside the
  retrievers' documents, the person judges it on the page (relevant: accepted; not relevant:
  rejected), and ``goldeneval judgments to-set`` writes the accepted questions without it.

A document whose call fails, or whose answer is not the JSON asked for, drafts nothing and is
one warning; the command goes on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.forms import QuestionForm
from goldeneval.prompts.breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES
from goldeneval.prompts.calls import ManagedModel
from goldeneval.prompts.models import ChatMessage, ChatRequest, ModelContext, build_model
from goldeneval.prompts.pipeline import model_provenance
from goldeneval.retrieval.golden import GoldenQuestionSet, load_draft_set
from goldeneval.retrieval.lint import NEAR_DUPLICATE_QUESTION, question_words
from goldeneval.retrieval.overlap import OVERLAP_RULE, form_of_overlap, vocabulary_overlap

__all__ = ["DRAFT_PROMPT", "DRAFT_PROMPT_NAME", "DraftResult", "draft_questions", "drafting_model", "write_drafts"]

DRAFT_PROMPT_NAME = "draft-questions/v1"
DRAFT_PROMPT = """You write test questions for a search engine over a document collection.
Read the document below and write {n} questions of each of two forms that this document answers:
- MATCH: the question reuses the document's own words (its title, its terms).
- GAP: an everyday rewording a user would type, with as few of the document's words as possible.
Answer with JSON only, exactly: {{"questions": [{{"text": "...", "form": "MATCH"}}, {{"text": "...", "form": "GAP"}}]}}

Document title: {title}

Document text:
{text}"""
"""The prompt (``{n}``, ``{title}``, ``{text}`` filled in); part of every draft's provenance
as :data:`DRAFT_PROMPT_NAME` and its digest."""
MAX_DOCUMENT_CHARS = 6_000
"""Longest document text the prompt holds (the rest is cut)."""
_WORD = re.compile(r"\w+")
_END = re.compile(r"[\s\W]+$")


def prompt_identity() -> str:
    return f"{DRAFT_PROMPT_NAME}:sha256:{hashlib.sha256(DRAFT_PROMPT.encode('utf-8')).hexdigest()[:16]}"


@dataclass
class DraftResult:
    questions: list[dict[str, Any]] = field(default_factory=list)
    """The kept drafts, as set-file entries."""
    asked: int = 0
    relabelled: int = 0
    dropped_form: int = 0
    dropped_duplicates: int = 0
    warnings: list[str] = field(default_factory=list)
    usage: str = ""


def drafting_model(
    model_id: str, options: Mapping[str, str], *, cache_dir: Path, timeout_s: float | None
) -> ManagedModel:
    """The model, built and managed as the answer side builds one (cache, timeout, breaker, usage)."""
    inner = build_model(ModelContext(model_id=model_id, options=dict(options), cache_dir=cache_dir))
    return ManagedModel(
        inner,
        model_provenance(inner, model_id),
        model_id=model_id,
        cache_dir=cache_dir,
        max_consecutive_failures=DEFAULT_MAX_CONSECUTIVE_FAILURES,
        timeout_s=timeout_s,
    )


def _request(document: Document, per_document: int) -> ChatRequest:
    text = document.text if len(document.text) <= MAX_DOCUMENT_CHARS else document.text[:MAX_DOCUMENT_CHARS]
    prompt = DRAFT_PROMPT.format(n=per_document, title=document.title or document.id, text=text)
    return ChatRequest(messages=(ChatMessage("user", prompt),), question=prompt)


def _parse(answer: str) -> list[tuple[str, QuestionForm]]:
    """The drafts of an answer; ValueError when it is not the JSON asked for."""
    body = answer.strip()
    if body.startswith("```"):  # a fenced block: the JSON inside it
        body = body.strip("`").removeprefix("json").strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the answer")
    data = json.loads(body[start : end + 1])
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError("the JSON has no 'questions' list")
    drafts = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            raise ValueError("a question without a 'text'")
        form = item.get("form")
        if form not in (QuestionForm.MATCH.value, QuestionForm.GAP.value):
            raise ValueError(f"a question whose form is {form!r}, not MATCH or GAP")
        drafts.append((" ".join(item["text"].split()), QuestionForm(form)))
    return drafts


def _normalized(text: str) -> str:
    return _END.sub("", " ".join(text.casefold().split()))


def draft_questions(
    corpus: Corpus,
    complete: Callable[[ChatRequest], str],
    per_document: int,
    *,
    model_id: str,
    mismatch: Literal["relabel", "drop"] = "relabel",
    documents: Sequence[str] | None = None,
) -> DraftResult:
    """Draft, measure and de-duplicate questions for each document of ``corpus`` (or of
    ``documents``, ids of it), in corpus order."""
    result = DraftResult()
    identity = prompt_identity()
    kept_words: list[set[str]] = []
    kept_texts: set[str] = set()
    chosen = set(documents) if documents is not None else None
    for document in corpus:
        if chosen is not None and document.id not in chosen:
            continue
        result.asked += 1
        try:
            drafts = _parse(complete(_request(document, per_document)))
        except Exception as exc:  # a failed call or a malformed answer: this document drafts nothing
            result.warnings.append(f"document {document.id!r}: nothing drafted: {one_line(str(exc), 200)}")
            continue
        source_text = f"{document.title}\n{document.text}"
        for text, claimed in drafts:
            overlap = vocabulary_overlap(text, [source_text])
            measured = form_of_overlap(overlap)
            if measured is not claimed and mismatch == "drop":
                result.dropped_form += 1
                continue
            words = question_words(text)
            normalized = _normalized(text)
            if normalized in kept_texts or any(
                len(words & other) / len(words | other) >= NEAR_DUPLICATE_QUESTION for other in kept_words if words
            ):
                result.dropped_duplicates += 1
                continue
            result.relabelled += measured is not claimed  # counted among the drafts kept only
            kept_texts.add(normalized)
            kept_words.append(words)
            result.questions.append(
                {
                    "id": f"draft-{len(result.questions) + 1:05d}",
                    "text": text,
                    "form": measured.value,
                    "expected": [document.id],
                    "draft": {
                        "source": document.id,
                        "claimed_form": claimed.value,
                        "overlap": round(overlap, 4),
                        "rule": OVERLAP_RULE,
                        "model": model_id,
                        "prompt": identity,
                    },
                }
            )
    return result


def write_drafts(out: Path, result: DraftResult, *, set_id: str, corpus: str | None) -> GoldenQuestionSet:
    """Write the drafts as a set file (YAML) and read it back as a set being labelled."""
    if not result.questions:
        why = "; ".join(result.warnings[:3]) + (
            f"; and {len(result.warnings) - 3} more" if len(result.warnings) > 3 else ""
        )
        raise InputError(
            f"no question drafted from {result.asked} document(s); nothing written" + (f": {why}" if why else "")
        )
    document: dict[str, Any] = {
        "id": set_id,
        "description": f"Drafted by goldeneval draft ({prompt_identity()}; forms by {OVERLAP_RULE}); "
        "no run scores a draft until a person accepts it.",
    }
    if corpus is not None:
        document["corpus"] = corpus
    document["questions"] = result.questions
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{out}: cannot write: {exc.strerror}") from None
    return load_draft_set(out)
