"""Issue 26 (memory): the CLI's door lets go of the golden set before it writes the run.

A scored run holds its questions' ids, expected documents and document ids in arrays
(:func:`compact_strings`, :class:`ExpectedDocuments`), not the set's own objects, and
:func:`goldeneval.retrieval.pipeline.run` drops the set from the loaded-set cache once it is
evaluated: at 1,000,000 questions the set is most of the process, and one string of it kept
alive would keep a block of its memory from the system.  Nothing a reader of the run sees
changes."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldeneval.history import door
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.encoding import compact_strings
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, load_golden_set
from goldeneval.retrieval.scored import ExpectedDocuments
from goldeneval.retrieval.spec import RunSpec


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_cli_door_holds_nothing_of_the_set_while_it_writes_and_the_run_reads_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[weakref.ref[Any]] = []
    resolve = pipeline.resolve_golden_set  # type: ignore[attr-defined]  # what the door calls

    def remembered(*args: Any, **kwargs: Any) -> GoldenQuestionSet:
        golden_set = resolve(*args, **kwargs)
        loaded.extend(weakref.ref(q) for q in (golden_set, *golden_set.questions))
        return golden_set

    alive_at_write: list[int] = []
    record = door.record_and_judge

    def recorded(*args: Any, **kwargs: Any) -> Any:
        gc.collect()
        alive_at_write.append(sum(ref() is not None for ref in loaded))
        return record(*args, **kwargs)

    monkeypatch.setattr(pipeline, "resolve_golden_set", remembered)
    monkeypatch.setattr(door, "record_and_judge", recorded)
    spec = RunSpec(
        set_ref="transit-sample", retriever_id="goldeneval.lexical", series="lexical", cache_dir=tmp_path / "cache"
    )
    outcome = pipeline.run(spec, tmp_path / "results.duckdb")

    assert len(loaded) > 50 and alive_at_write == [0]  # the set and every question of it were freed
    golden_set = pipeline.load_golden_set(spec)  # read again: validated again, not from the cache
    results = outcome.run.results
    assert [r.question_id for r in results] == [q.id for q in golden_set.questions]
    assert [r.expected for r in results] == [q.expected for q in golden_set.questions]
    assert [r.form for r in results] == [q.form.value for q in golden_set.questions]
    assert [r.hard_class for r in results] == [q.hard_class for q in golden_set.questions]
    assert outcome.stored.question_count == len(golden_set.questions)


def test_a_set_loaded_twice_is_the_same_object_until_a_door_forgets_it(tmp_path: Path) -> None:
    from goldeneval.retrieval.golden import forget_loaded

    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "q1", "text": "a question", "form": "GAP", "expected": ["d1"]}\n', encoding="utf-8")
    first = load_golden_set(path)
    assert load_golden_set(path) is first
    forget_loaded(first)
    again = load_golden_set(path)
    assert again is not first and again == first


def test_expected_documents_read_as_the_frozensets_they_were_coded_from() -> None:
    documents = compact_strings(["d0", "d1", "d2", "d3"])
    expected = ExpectedDocuments(np.array([0, 2, 2, 3]), np.array([1, 3, 0]), documents)
    as_sets = [frozenset({"d1", "d3"}), frozenset(), frozenset({"d0"})]
    assert len(expected) == 3 and list(expected) == as_sets
    assert [expected[i] for i in range(3)] == as_sets and expected[-1] == as_sets[-1]
    assert expected[1:] == as_sets[1:]
    assert expected.judged.tolist() == [True, False, True]
    with pytest.raises(IndexError):
        expected[3]
    with pytest.raises(IndexError):
        expected[-4]
    with pytest.raises(TypeError):
        expected[1.0]  # type: ignore[call-overload]
    assert expected[np.int64(2)] == as_sets[2]  # type: ignore[call-overload]  # numpy integers index too


def test_compact_strings_read_back_as_str_and_keep_what_utf8_cannot_hold() -> None:
    values = ["q1", "é" * 40, "a\x00b", ""]
    compact = compact_strings(values)
    assert compact.dtype != np.dtype(object) and compact.tolist() == values
    assert all(type(v) is str for v in compact.tolist())
    surrogate = ["ok", "bad\ud800"]
    kept = compact_strings(surrogate)
    assert kept.dtype == np.dtype(object) and kept.tolist() == surrogate


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_lone_surrogate_from_a_retriever_errors_its_question_and_the_run_can_be_stored(tmp_path: Path) -> None:
    # No store, table or JSON output can hold a lone surrogate (UTF-8 cannot): an id with one
    # errors its question, as a non-string id does, and one in an error message is escaped.
    # Before, the run scored it and then failed to be written (an internal error).
    from goldeneval.core.privacy import PrivacyMode
    from goldeneval.retrieval.details import RetrievalDetails
    from goldeneval.retrieval.evaluation import evaluate_retrieval
    from goldeneval.store import ResultStore

    class Odd:
        def retrieve(self, question: str, limit: int) -> list[str]:
            if question.endswith("raise"):
                raise ValueError("bad \ud800 thing")
            return ["d1", "d\ud800"] if question.endswith("odd") else ["d1"]

    questions = [
        GoldenQuestion(id=f"q{i}", text=f"a question {word}", form="GAP", expected=["d1"])
        for i, word in enumerate(["odd", "raise", "fine"])
    ]
    run = evaluate_retrieval(GoldenQuestionSet(id="s", questions=questions), Odd(), "odd", timeout_s=None)
    odd, raised, fine = run.results
    assert odd.error == (
        "ValueError: retrieve() returned an id that is not Unicode text (a lone surrogate, which no store, "
        "table or JSON output can hold): 'd\\ud800'"
    )
    assert raised.error == "ValueError: bad \\ud800 thing"
    assert fine.error is None and fine.top1_hit
    store = ResultStore(tmp_path / "r.duckdb")
    stored = store.get_run(store.save_run(run.to_record(PrivacyMode.FULL)).id)  # read back from the file
    assert stored is not None and isinstance(stored.details, RetrievalDetails)
    assert [q.error for q in stored.details.question_rows()] == [odd.error, raised.error, None]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_nothing_allocated_while_loading_a_set_outlives_it(tmp_path: Path) -> None:
    """pydantic-core's JSON parser keeps up to 16,384 of the strings it read (its string cache):
    each left alive holds a block of the set's memory from the system once the set is freed.
    A question is validated caching its keys only."""
    import json
    import tracemalloc

    import goldeneval.retrieval.golden as golden
    from goldeneval.retrieval.golden import forget_loaded

    path = tmp_path / "s.jsonl"
    lines = [
        json.dumps({"id": f"q{i:05d}-question", "text": f"question {i}", "form": "GAP", "expected": [f"doc-{i}"]})
        for i in range(3000)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tracemalloc.start()
    try:
        golden_set = load_golden_set(path)
        assert len(golden_set.questions) == 3000
        forget_loaded(golden_set)
        del golden_set
        gc.collect()
        kept = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, golden.__file__)])
        left = sum(stat.count for stat in kept.statistics("filename"))
    finally:
        tracemalloc.stop()
    assert left < 100, f"{left} blocks allocated while loading the set are still alive"
