"""The columnar scoring core against its references, question by question.

* trec_eval (pytrec-eval-terrier 0.5.11) for every metric at cutoffs 1, 3, 10, 100 and 1000, on a
  generated graded collection (grades 0-3 with ties, chunk duplicates, empty rankings, questions
  without relevant documents) and in a hypothesis property test.  trec_eval sorts by score, then
  document id, and keeps one entry per document, so it is handed each *collapsed* ranking with
  strictly decreasing scores; MRR@k is its ``recip_rank`` on the ranking cut at k.
* ``goldeneval.retrieval.scoring.score_question`` (and through it ``goldeneval.retrieval.metrics``) for the protocol's
  top-1/top-3 hits, the empty-expected rule and the binary metrics it reports, to 1e-12.

Every comparison runs on each scan path: the pairwise one for short prefixes, the sorting one,
and both with blocks of a few ids so that block and round boundaries fall everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldeneval.retrieval import columnar
from goldeneval.retrieval.columnar import Judgements, Rankings, collapse, encode, score
from goldeneval.retrieval.columnar import scan as columnar_scan
from goldeneval.retrieval.golden import GoldenQuestion
from goldeneval.retrieval.metrics import METRIC_KINDS, parse_metric
from goldeneval.retrieval.protocol import raw_limit
from goldeneval.retrieval.results import aggregate, error_result
from goldeneval.retrieval.scoring import score_question

CUTOFFS = (1, 3, 10, 100, 1000)
CUT_KINDS = [kind for kind, family in METRIC_KINDS.items() if family.takes_cutoff]
"""The families with a cutoff; R-precision has none, and bpref and infAP are not this core's."""
ALL_METRICS = (*(f"{kind}@{k}" for kind in CUT_KINDS for k in CUTOFFS), "rprec")
ENGINES: dict[str, dict[str, int]] = {
    "narrow-and-sorted": {"_NARROW_WIDTH": columnar_scan._NARROW_WIDTH},
    "sorted-only": {"_NARROW_WIDTH": 0},
    "tiny-blocks": {"_CHUNK_ELEMENTS": 7},
    "tiny-blocks-sorted-only": {"_CHUNK_ELEMENTS": 7, "_NARROW_WIDTH": 0},
}


@contextmanager
def engine(name: str) -> Iterator[None]:
    """Run the core with one of the scan configurations of ``ENGINES``."""
    settings: dict[str, Any] = dict(ENGINES[name])
    with mock.patch.multiple(columnar_scan, **settings):
        yield


def distinct(ranking: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranking))


def trec_eval_values(
    rankings: Sequence[Sequence[str]], qrels: dict[str, dict[str, int]], metrics: Sequence[str], rel_level: int
) -> dict[str, dict[str, float]]:
    """``metric name -> question id -> value`` from trec_eval, on the collapsed rankings."""

    def run(depth: int | None) -> dict[str, dict[str, float]]:
        return {
            f"q{i}": {doc: float(10_000 - rank) for rank, doc in enumerate(distinct(ranking)[:depth])}
            for i, ranking in enumerate(rankings)
        }

    parsed = [parse_metric(name) for name in metrics]
    measures = {
        {"hit": "success", "recall": "recall", "precision": "P", "ndcg": "ndcg_cut", "map": "map_cut"}[m.kind.key]
        + f".{m.k}"
        for m in parsed
        if m.kind.key not in ("mrr", "rprec")
    } | {"Rprec"}
    full = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=rel_level).evaluate(run(None))
    values: dict[str, dict[str, float]] = {}
    for metric in parsed:
        if metric.kind.key == "mrr":
            cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=rel_level).evaluate(
                run(metric.k)
            )
            values[metric.name] = {q: v["recip_rank"] for q, v in cut.items()}
        else:
            values[metric.name] = {q: v[metric.trec_eval] for q, v in full.items()}
    return values


def graded_collection(seed: int, n: int) -> tuple[list[list[str]], list[dict[str, int]]]:
    """Rankings of chunk-grained ids already mapped to documents (so with repeats), some empty,
    some over 1,000 distinct documents deep; judgements graded 0-3 with ties; questions with no
    judgement and with only non-relevant ones."""
    rng = np.random.default_rng(seed)
    rankings: list[list[str]] = []
    judged: list[dict[str, int]] = []
    for i in range(n):
        corpus = int(rng.choice([3, 12, 60, 4000]))
        length = int(rng.choice([0, 1, 2, 4, 9, 15, 40, 150, 2600]))
        ranking = [f"d{x}" for x in rng.integers(0, corpus, length)]
        if rng.random() < 0.3:  # chunk duplicates: each document repeated in place
            ranking = [doc for doc in ranking for _ in range(int(rng.integers(1, 4)))]
        rankings.append(ranking)
        kind = i % 7
        if kind == 0:
            judged.append({})
        elif kind == 1:
            judged.append({f"d{x}": 0 for x in rng.integers(0, corpus, 3)})
        else:
            docs = {f"d{x}" for x in rng.integers(0, corpus + 5, int(rng.integers(1, 30)))}
            judged.append({doc: int(rng.integers(0, 4)) for doc in sorted(docs)})
    return rankings, judged


def encode_collection(rankings: list[list[str]], judged: list[dict[str, int]]) -> columnar.Encoded:
    return encode(rankings, [list(j) for j in judged], [list(j.values()) for j in judged])


COLLECTION = graded_collection(seed=7, n=210)


GradedRun = tuple[int, dict[str, dict[str, float]], columnar.Encoded]


@pytest.fixture(scope="module", params=[1, 2], ids=["rel_level=1", "rel_level=2"])
def graded_run(request: pytest.FixtureRequest) -> GradedRun:
    rankings, judged = COLLECTION
    qrels = {f"q{i}": j for i, j in enumerate(judged) if j}
    return request.param, trec_eval_values(rankings, qrels, ALL_METRICS, request.param), encode_collection(*COLLECTION)


@pytest.mark.parametrize("defined", ["relevant", "judged"])
@pytest.mark.parametrize("engine_name", sorted(ENGINES))
def test_every_metric_equals_trec_eval_per_question_on_a_graded_collection(
    engine_name: str, defined: Literal["relevant", "judged"], graded_run: GradedRun
) -> None:
    rel_level, expected, encoded = graded_run
    with engine(engine_name):
        scores = score(encoded.rankings, encoded.judgements, ALL_METRICS, rel_level=rel_level, defined=defined)
    differences = {}
    compared = 0
    for name in ALL_METRICS:
        for i, value in enumerate(scores.metrics[name]):
            if math.isnan(value):
                continue
            compared += 1
            reference = expected[name][f"q{i}"]
            if not abs(value - reference) <= 1e-9:
                differences[(name, i)] = (float(value), reference)
    assert differences == {}
    judged = sum(1 for i in range(len(COLLECTION[1])) if f"q{i}" in expected["hit@1"])
    covered = int((scores.relevant > 0).sum()) if defined == "relevant" else judged
    assert compared == covered * len(ALL_METRICS)  # every question trec_eval scores, unless undefined


def test_the_generated_collection_reaches_every_cutoff() -> None:
    rankings, judged = COLLECTION
    depths = [len(distinct(r)) for r in rankings]
    assert max(depths) > 1000 and 0 in depths
    assert any(len(set(j.values()) - {0}) > 1 for j in judged)  # graded, not binary
    assert any(len(r) > len(distinct(r)) for r in rankings)  # duplicates to collapse


@pytest.mark.parametrize("rel_level", [1, 2])
def test_every_metric_is_nan_exactly_where_no_document_is_relevant(rel_level: int) -> None:
    rankings, judged = COLLECTION
    encoded = encode_collection(rankings, judged)
    scores = score(encoded.rankings, encoded.judgements, ALL_METRICS, rel_level=rel_level, defined="relevant")
    no_relevant = np.array([not any(g >= rel_level for g in j.values()) for j in judged])
    assert no_relevant.any()
    for name in ALL_METRICS:
        assert np.array_equal(np.isnan(scores.metrics[name]), no_relevant), name


def test_ndcg_uses_grades_below_rel_level_as_gain() -> None:
    # trec_eval's ndcg_cut ignores -l: a grade-1 document still adds gain at rel_level 2.
    encoded = encode([["a", "b"]], [["a", "b"]], [[1, 2]])
    scores = score(encoded.rankings, encoded.judgements, ["ndcg@2", "hit@1"], rel_level=2)
    ideal = 2 + 1 / math.log2(3)
    assert scores.metrics["ndcg@2"][0] == pytest.approx((1 + 2 / math.log2(3)) / ideal, abs=1e-12)
    assert scores.metrics["hit@1"][0] == 0.0


def test_the_protocol_counts_every_graded_target_whatever_the_relevance_level() -> None:
    encoded = encode([["a", "b"], ["c"]], [["a"], ["c", "d"]], [[1], [0, 2]])
    scores = score(encoded.rankings, encoded.judgements, ["hit@1"], rel_level=2, defined="relevant")
    assert scores.top1.tolist() == [True, False]  # "a" is expected (grade 1); "c" is judged non-relevant
    assert scores.metrics["hit@1"][1] == 0.0 and math.isnan(scores.metrics["hit@1"][0])


def test_the_protocol_looks_only_at_the_head_of_the_raw_ranking() -> None:
    # "b" is the second distinct document, but first occurs at raw position 4: past a head of 4.
    encoded = encode([["a", "a", "a", "a", "b"]], [["b"]])
    head = score(encoded.rankings, encoded.judgements, ["hit@3"], protocol_head=4)
    whole = score(encoded.rankings, encoded.judgements, ["hit@3"])
    assert (bool(head.top3[0]), bool(whole.top3[0]), head.metrics["hit@3"][0]) == (False, True, 1.0)


def test_depth_counts_distinct_documents_and_caps_at_the_depth_limit() -> None:
    rankings, judged = COLLECTION
    encoded = encode_collection(rankings, judged)
    full = score(encoded.rankings, encoded.judgements, ["hit@1"])
    capped = score(encoded.rankings, encoded.judgements, ["hit@1"], depth_limit=10)
    depths = np.array([len(distinct(r)) for r in rankings])
    assert np.array_equal(full.depth, depths)
    assert np.array_equal(capped.depth, np.minimum(depths, 10))
    assert np.array_equal(capped.shorter_than(10), depths < 10)


def uniform_collection(seed: int, n: int, length: int) -> tuple[list[list[str]], list[dict[str, int]]]:
    """Rankings all ``length`` long (what a retriever asked for a fixed depth returns), with
    repeats inside the first ten ids, graded judgements: the scan reads its first blocks as
    one reshaped slice of the codes, not row by row."""
    rng = np.random.default_rng(seed)
    rankings = [[f"d{x}" for x in rng.integers(0, 40, length)] for _ in range(n)]
    judged = [
        {f"d{x}": int(rng.integers(0, 4)) for x in rng.integers(0, 45, int(rng.integers(1, 6)))} for _ in range(n)
    ]
    return rankings, judged


@contextmanager
def blocks_read() -> Iterator[list[int]]:
    """The ``start`` of every block the scan reads (>= 0: a contiguous, reshaped slice)."""
    starts: list[int] = []
    narrow, block = columnar_scan._scan_narrow, columnar_scan._scan_block

    def spy_narrow(scan: Any, start: int, rows: Any, width: int) -> Any:
        starts.append(start)
        return narrow(scan, start, rows, width)

    def spy_block(scan: Any, start: int, rows: Any, width: int) -> Any:
        starts.append(start)
        return block(scan, start, rows, width)

    with mock.patch.multiple(columnar_scan, _scan_narrow=spy_narrow, _scan_block=spy_block):
        yield starts


@pytest.mark.parametrize("engine_name", sorted(ENGINES))
@pytest.mark.parametrize("depth_limit", [3, 10, None])
def test_rankings_of_one_length_read_as_one_slice_equal_trec_eval(engine_name: str, depth_limit: int | None) -> None:
    """Every ranking the same length: the scan's first round reads contiguous blocks.  Until
    this test, it never did (``lengths.min(initial=0) > 0`` is always false), so that path had
    never run."""
    rankings, judged = uniform_collection(seed=3, n=150, length=30)
    names = [f"{kind}@{k}" for kind, family in METRIC_KINDS.items() if family.takes_cutoff for k in (1, 3, 10)] + [
        "rprec"
    ]
    encoded = encode_collection(rankings, judged)
    with engine(engine_name), blocks_read() as starts:
        scores = score(encoded.rankings, encoded.judgements, names, depth_limit=depth_limit, defined="relevant")
    assert starts and starts[0] == 0
    qrels = {f"q{i}": j for i, j in enumerate(judged)}
    expected = trec_eval_values(rankings, qrels, names, 1)
    for i, ranking in enumerate(rankings):
        distinct_count = len(distinct(ranking))
        assert scores.depth[i] == (distinct_count if depth_limit is None else min(distinct_count, depth_limit))
        for name in names:
            value = scores.metrics[name][i]
            if scores.relevant[i] == 0:
                assert math.isnan(value), name
            else:
                assert abs(value - expected[name][f"q{i}"]) <= 1e-9, (name, i)


@pytest.mark.parametrize("engine_name", sorted(ENGINES))
@pytest.mark.parametrize("limit", [None, 1, 5, 30])
def test_collapse_of_rankings_of_one_length_reads_one_slice(engine_name: str, limit: int | None) -> None:
    rankings, judged = uniform_collection(seed=4, n=120, length=20)
    encoded = encode_collection(rankings, judged)
    with engine(engine_name), blocks_read() as starts:
        collapsed = collapse(encoded.rankings, limit)
    assert starts and starts[0] == 0
    vocabulary = encoded.vocabulary.to_pylist()
    assert [[vocabulary[c] for c in collapsed.row(i)] for i in range(len(collapsed))] == [
        distinct(r)[:limit] for r in rankings
    ]


@pytest.mark.parametrize("engine_name", sorted(ENGINES))
@pytest.mark.parametrize("limit", [None, 0, 1, 3, 50])
def test_collapse_keeps_first_occurrences_in_rank_order(engine_name: str, limit: int | None) -> None:
    rankings, judged = COLLECTION
    encoded = encode_collection(rankings, judged)
    with engine(engine_name):
        collapsed = collapse(encoded.rankings, limit)
    vocabulary = encoded.vocabulary.to_pylist()
    assert [[vocabulary[c] for c in collapsed.row(i)] for i in range(len(collapsed))] == [
        distinct(r)[:limit] for r in rankings
    ]


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rankings=st.lists(st.lists(st.integers(0, 9), max_size=12), min_size=1, max_size=40),
    limit=st.one_of(st.none(), st.integers(0, 14)),
    engine_name=st.sampled_from(sorted(ENGINES)),
)
def test_collapse_of_random_rankings_is_their_distinct_prefixes(
    rankings: list[list[int]], limit: int | None, engine_name: str
) -> None:
    # Tiny blocks put whole rankings and rankings that lose a raw id in different blocks, in
    # any order: the mask is made at the first block that loses one (or never).
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rankings])]).astype(np.int64)
    given_rankings = Rankings(offsets, np.array([c for r in rankings for c in r], dtype=np.int32))
    with engine(engine_name):
        collapsed = collapse(given_rankings, limit)
    expected = [list(dict.fromkeys(r))[:limit] for r in rankings]
    assert [collapsed.row(i).tolist() for i in range(len(collapsed))] == expected
    assert (collapsed is given_rankings) == (expected == rankings)


@st.composite
def small_runs(draw: st.DrawFn) -> tuple[list[list[str]], list[dict[str, int]]]:
    n = draw(st.integers(1, 6))
    documents = st.sampled_from([f"d{i}" for i in range(12)])
    rankings = [draw(st.lists(documents, max_size=25)) for _ in range(n)]
    judged = [draw(st.dictionaries(documents, st.integers(0, 3), max_size=6)) for _ in range(n)]
    return rankings, judged


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    run=small_runs(),
    k=st.integers(1, 30),
    rel_level=st.integers(1, 3),
    engine_name=st.sampled_from(sorted(ENGINES)),
)
@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_random_runs_with_duplicates_equal_trec_eval(
    run: tuple[list[list[str]], list[dict[str, int]]], k: int, rel_level: int, engine_name: str
) -> None:
    rankings, judged = run
    names = [f"{kind}@{k}" for kind in CUT_KINDS] + ["rprec"]
    encoded = encode_collection(rankings, judged)
    with engine(engine_name):
        scores = score(
            encoded.rankings, encoded.judgements, names, rel_level=rel_level, depth_limit=k, defined="relevant"
        )
    qrels = {f"q{i}": j for i, j in enumerate(judged) if j}
    expected = trec_eval_values(rankings, qrels, names, rel_level) if qrels else {}
    for i in range(len(rankings)):
        assert scores.depth[i] == min(len(distinct(rankings[i])), k)
        relevant = sum(g >= rel_level for g in judged[i].values())
        assert scores.relevant[i] == relevant
        for name in names:
            value = scores.metrics[name][i]
            if relevant == 0:
                assert math.isnan(value), name
            else:
                assert abs(value - expected[name][f"q{i}"]) <= 1e-9, (name, i)


def golden(i: int, expected: Sequence[str]) -> GoldenQuestion:
    return GoldenQuestion(id=f"q{i}", text=f"question {i}", form="MATCH", expected=frozenset(expected))


def chunk_run(seed: int, n: int) -> tuple[list[GoldenQuestion], list[list[str]]]:
    """Questions with binary expected sets (some empty) and rankings of ``doc#chunk`` ids."""
    rng = np.random.default_rng(seed)
    questions, rankings = [], []
    for i in range(n):
        expected = [f"d{x}" for x in sorted(set(rng.integers(0, 15, int(rng.integers(0, 4)))))]
        length = int(rng.choice([0, 0, 1, 3, 12, 30, 45]))
        rankings.append([f"d{x}#{rng.integers(0, 3)}" for x in rng.integers(0, 15, length)])
        questions.append(golden(i, expected))
    return questions, rankings


def to_document(returned_id: str) -> str:
    return returned_id.split("#")[0]


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize("engine_name", sorted(ENGINES))
def test_protocol_hits_and_binary_metrics_equal_score_question(engine_name: str) -> None:
    questions, rankings = chunk_run(seed=3, n=300)
    results = [score_question(q, r, 0.0, to_document) for q, r in zip(questions, rankings, strict=True)]
    names = sorted({name for r in results for name in r.metrics})
    assert names  # metrics.py reports binary rank metrics to compare with
    encoded = encode([[to_document(x) for x in r] for r in rankings], [sorted(q.expected) for q in questions])
    with engine(engine_name):
        scores = score(encoded.rankings, encoded.judgements, names, protocol_head=raw_limit(), defined="judged")
    assert scores.top1.tolist() == [r.top1_hit for r in results]
    assert scores.top3.tolist() == [r.top3_hit for r in results]
    for name in names:
        ours = [None if math.isnan(v) else float(v) for v in scores.metrics[name]]
        theirs = [r.metrics.get(name) for r in results]
        assert [a is None for a in ours] == [b is None for b in theirs], name
        assert all(a is None or b is None or abs(a - b) <= 1e-12 for a, b in zip(ours, theirs, strict=True)), name


@pytest.mark.parametrize(
    ("ranking", "hit"),
    [([], True), (["d1"], False), (["d1#0", "d1#1"], False)],
    ids=["nothing-returned-is-a-hit", "a-document-returned-is-a-miss", "chunks-of-one-document-miss"],
)
def test_a_question_without_expected_documents_is_a_hit_only_when_nothing_is_returned(
    ranking: list[str], hit: bool
) -> None:
    result = score_question(golden(0, []), ranking, 0.0, to_document)
    encoded = encode([[to_document(x) for x in ranking]], [[]])
    scores = score(encoded.rankings, encoded.judgements)
    assert (bool(scores.top1[0]), bool(scores.top3[0])) == (hit, hit) == (result.top1_hit, result.top3_hit)
    assert all(math.isnan(v[0]) for v in scores.metrics.values())


def test_errored_questions_are_left_out_of_every_rate_and_mean() -> None:
    questions, rankings = chunk_run(seed=5, n=60)
    failed = {i for i in range(60) if i % 4 == 0}
    results = [
        error_result(q, "boom", 0.0) if i in failed else score_question(q, r, 0.0, to_document)
        for i, (q, r) in enumerate(zip(questions, rankings, strict=True))
    ]
    documents = [[] if i in failed else [to_document(x) for x in r] for i, r in enumerate(rankings)]
    encoded = encode(documents, [sorted(q.expected) for q in questions])
    ok = np.array([i not in failed for i in range(60)])
    names = sorted({name for r in results for name in r.metrics})
    scores = score(encoded.rankings, encoded.judgements, names, ok=ok, protocol_head=raw_limit(), defined="judged")
    assert not scores.top1[~ok].any() and not scores.top3[~ok].any()
    assert all(np.isnan(scores.metrics[name][~ok]).all() for name in names)
    reference = aggregate(results)
    means = scores.means()
    assert means["top1"] == pytest.approx(reference.overall.top1_rate, abs=1e-12)
    assert means["top3"] == pytest.approx(reference.overall.top3_rate, abs=1e-12)
    assert {name: means[name] for name in reference.metrics} == pytest.approx(dict(reference.metrics), abs=1e-12)


def test_arrow_lists_and_python_lists_encode_alike() -> None:
    rankings = [["b", "a", "b"], [], ["c"]]
    judged = [["a"], ["c", "d"], []]
    grades = [[2], [1, 0], []]
    from_python = encode(rankings, judged, grades)
    from_arrow = encode(
        pa.array(rankings, pa.list_(pa.string())),
        pa.chunked_array([pa.array(judged, pa.list_(pa.string()))]),
        pa.array(grades, pa.list_(pa.int8())),
    )
    for encoded in (from_python, from_arrow):
        vocabulary = encoded.vocabulary.to_pylist()
        assert [[vocabulary[c] for c in encoded.rankings.row(i)] for i in range(3)] == rankings
        assert encoded.judgements.offsets.tolist() == [0, 1, 3, 3]
        assert [vocabulary[c] for c in encoded.judgements.codes] == ["a", "c", "d"]
        assert encoded.judgements.grades.tolist() == [2, 1, 0]
        assert encoded.rankings.codes.dtype == np.int32


def test_encode_refuses_a_document_judged_twice_for_one_question() -> None:
    with pytest.raises(ValueError) as error:
        encode([["a"], ["a"]], [["a"], ["b", "a", "b"]])
    assert str(error.value) == "judged: question #1 lists document 'b' twice; judge each document once"


def test_encode_refuses_a_null_id() -> None:
    with pytest.raises(ValueError) as error:
        encode(pa.array([["a", None]], pa.list_(pa.string())), [["a"]])
    assert str(error.value) == "rankings holds 1 null value(s); every entry must be set"


def test_encode_needs_the_same_questions_on_both_sides() -> None:
    with pytest.raises(ValueError) as error:
        encode([["a"], ["b"]], [["a"]])
    assert str(error.value) == "rankings and judged must cover the same questions (found 2 and 1)"


@pytest.mark.parametrize(
    ("offsets", "message"),
    [
        ([1, 2], "rankings.offsets must start at 0 (found 1)"),
        ([0, 2, 1], "rankings.offsets must not decrease (question #1: 2 -> 1)"),
        ([0, 3], "rankings.codes holds 2 values but offsets end at 3"),
    ],
    ids=["not-from-zero", "decreasing", "too-few-codes"],
)
def test_malformed_rankings_are_refused_with_the_reason(offsets: list[int], message: str) -> None:
    with pytest.raises(ValueError) as error:
        Rankings(np.array(offsets), np.array([4, 5]))
    assert str(error.value) == message


def test_score_refuses_a_mask_of_the_wrong_length() -> None:
    rankings = Rankings(np.array([0, 1]), np.array([1], dtype=np.int32))
    judgements = Judgements.binary(np.array([0, 1]), np.array([1], dtype=np.int32))
    with pytest.raises(ValueError) as error:
        score(rankings, judgements, ok=np.array([True, False]))
    assert str(error.value) == "ok must hold one flag per question (1), found shape (2,)"


def test_int64_codes_far_apart_score_like_compact_ones() -> None:
    rankings, judged = COLLECTION
    encoded = encode_collection(rankings, judged)
    spread = 1_000_003 * encoded.rankings.codes.astype(np.int64) - 2**40
    spread_judged = 1_000_003 * encoded.judgements.codes.astype(np.int64) - 2**40
    wide = score(
        Rankings(encoded.rankings.offsets, spread),
        Judgements(encoded.judgements.offsets, spread_judged, encoded.judgements.grades),
        ALL_METRICS,
    )
    compact = score(encoded.rankings, encoded.judgements, ALL_METRICS)
    for name in ALL_METRICS:
        assert np.array_equal(wide.metrics[name], compact.metrics[name], equal_nan=True), name
