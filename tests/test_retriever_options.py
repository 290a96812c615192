"""Every built-in retriever checks its ``--option KEY=VALUE`` pairs before it builds anything:
an unknown key, a number that is not finite, or one out of range is one clear error that
names the retriever and the option, raised before an index is written or a model loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import InputError, RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever, bm25_parameters
from goldeneval.retrieval.retrievers.options import float_option, int_option

CORPUS = Corpus(
    (
        Document("fares/day", "Day ticket", "A day ticket costs 7.80 and is valid until 4 am."),
        Document("rights/delay", "Delay compensation", "Delays of over 30 minutes are refunded."),
    )
)

KNOWN_OPTIONS = {
    "goldeneval.lexical": "b, k1",
    "goldeneval.dense": "batch_size, chunk_overlap, chunk_size, chunking, model",
    "goldeneval.hybrid": (
        "b, batch_size, chunk_overlap, chunk_size, chunking, dense_weight, depth, k1, lexical_weight, model, rrf_k"
    ),
    "goldeneval.reranked": "b, batch_size, candidates, chunk_overlap, chunk_size, chunking, cross_encoder, k1, model",
    "goldeneval.trec_run": "order, run",
}

BAD_VALUES = [
    pytest.param("goldeneval.lexical", "k1", "nan", "must be a finite number >= 0, got nan", id="lexical-k1-nan"),
    pytest.param("goldeneval.lexical", "k1", "inf", "must be a finite number >= 0, got inf", id="lexical-k1-inf"),
    pytest.param("goldeneval.lexical", "k1", "-inf", "must be a finite number >= 0, got -inf", id="lexical-k1-neg-inf"),
    pytest.param("goldeneval.lexical", "k1", "-5", "must be a finite number >= 0, got -5", id="lexical-k1-negative"),
    pytest.param(
        "goldeneval.lexical", "k1", "1e999", "must be a finite number >= 0, got 1e999", id="lexical-k1-overflow"
    ),
    pytest.param(
        "goldeneval.lexical", "b", "1.5", "must be a finite number in [0, 1], got 1.5", id="lexical-b-above-1"
    ),
    pytest.param(
        "goldeneval.lexical", "b", "-0.1", "must be a finite number in [0, 1], got -0.1", id="lexical-b-below-0"
    ),
    pytest.param("goldeneval.lexical", "b", "inf", "must be a finite number in [0, 1], got inf", id="lexical-b-inf"),
    pytest.param("goldeneval.lexical", "b", "NaN", "must be a finite number in [0, 1], got NaN", id="lexical-b-nan"),
    pytest.param("goldeneval.hybrid", "k1", "nan", "must be a finite number >= 0, got nan", id="hybrid-k1-nan"),
    pytest.param("goldeneval.hybrid", "b", "1.5", "must be a finite number in [0, 1], got 1.5", id="hybrid-b-above-1"),
    pytest.param("goldeneval.hybrid", "rrf_k", "nan", "must be a finite number >= 0, got nan", id="hybrid-rrf_k-nan"),
    pytest.param(
        "goldeneval.hybrid", "rrf_k", "-1", "must be a finite number >= 0, got -1", id="hybrid-rrf_k-negative"
    ),
    pytest.param(
        "goldeneval.hybrid", "lexical_weight", "inf", "must be a finite number >= 0, got inf", id="hybrid-weight-inf"
    ),
    pytest.param(
        "goldeneval.hybrid", "dense_weight", "-nan", "must be a finite number >= 0, got -nan", id="hybrid-weight-nan"
    ),
    pytest.param("goldeneval.hybrid", "depth", "0", "must be at least 1, got 0", id="hybrid-depth-zero"),
    pytest.param("goldeneval.hybrid", "depth", "2.5", "expected an integer, got '2.5'", id="hybrid-depth-not-integer"),
    pytest.param("goldeneval.reranked", "k1", "-5", "must be a finite number >= 0, got -5", id="reranked-k1-negative"),
    pytest.param("goldeneval.reranked", "b", "inf", "must be a finite number in [0, 1], got inf", id="reranked-b-inf"),
    pytest.param("goldeneval.reranked", "candidates", "0", "must be at least 1, got 0", id="reranked-candidates-zero"),
    pytest.param(
        "goldeneval.reranked",
        "candidates",
        "-99999999999999999999999",
        "must be at least 1, got -99999999999999999999999",
        id="reranked-candidates-huge-negative",
    ),
    pytest.param("goldeneval.dense", "batch_size", "0", "must be at least 1, got 0", id="dense-batch_size-zero"),
    pytest.param("goldeneval.dense", "chunk_size", "-3", "must be at least 1, got -3", id="dense-chunk_size-negative"),
    pytest.param("goldeneval.dense", "chunking", " ", "must not be empty", id="dense-chunking-empty"),
    pytest.param("goldeneval.trec_run", "run", "", "must not be empty", id="trec_run-run-empty"),
]


@pytest.fixture(autouse=True)
def _no_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a model here is the bug under test: every check must come before it."""

    def refuse(folder: Path) -> None:
        raise AssertionError(f"a model was loaded from {folder} before the options were checked")

    monkeypatch.setattr("goldeneval.retrieval.retrievers.dense.load_sentence_transformer", refuse)
    monkeypatch.setattr("goldeneval.retrieval.retrievers.reranked.load_cross_encoder", refuse)


def build(retriever_id: str, cache: Path, **options: str) -> object:
    return build_retriever(retriever_id, RetrieverContext(CORPUS, cache, options))


@pytest.mark.parametrize("retriever_id", sorted(KNOWN_OPTIONS), ids=lambda r: r.removeprefix("goldeneval."))
def test_an_unknown_option_is_an_error_listing_the_known_ones(tmp_path: Path, retriever_id: str) -> None:
    expected = f"retriever {retriever_id!r}: unknown option(s) kl (known: {KNOWN_OPTIONS[retriever_id]})"
    with pytest.raises(RetrieverError, match=f"^{re.escape(expected)}$"):
        build(retriever_id, tmp_path / "cache", kl="1.2")


@pytest.mark.parametrize("retriever_id", sorted(KNOWN_OPTIONS), ids=lambda r: r.removeprefix("goldeneval."))
def test_an_unknown_option_writes_no_cache(tmp_path: Path, retriever_id: str) -> None:
    with pytest.raises(RetrieverError):
        build(retriever_id, tmp_path / "cache", kl="1.2")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("retriever_id", "option", "value", "problem"), BAD_VALUES)
def test_a_bad_value_is_an_error_naming_retriever_and_option(
    tmp_path: Path, retriever_id: str, option: str, value: str, problem: str
) -> None:
    expected = f"retriever {retriever_id!r}: option {option!r}: {problem}"
    with pytest.raises(RetrieverError, match=f"^{re.escape(expected)}$"):
        build(retriever_id, tmp_path / "cache", **{option: value})


@pytest.mark.parametrize(("retriever_id", "option", "value", "problem"), BAD_VALUES)
def test_a_bad_value_writes_no_index_cache_folder(
    tmp_path: Path, retriever_id: str, option: str, value: str, problem: str
) -> None:
    with pytest.raises(RetrieverError):
        build(retriever_id, tmp_path / "cache", **{option: value})
    assert not (tmp_path / "cache").exists()


def test_the_fusion_weights_cannot_both_be_zero_before_anything_is_built(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="at least one of lexical_weight and dense_weight must be above 0"):
        build("goldeneval.hybrid", tmp_path / "cache", lexical_weight="0", dense_weight="0")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({}, (1.5, 0.75), id="defaults"),
        pytest.param({"k1": "0", "b": "0"}, (0.0, 0.0), id="lower-bounds"),
        pytest.param({"k1": "1e3", "b": "1"}, (1000.0, 1.0), id="upper-bound-of-b"),
        pytest.param({"k1": " 0.9 ", "b": "0.4"}, (0.9, 0.4), id="surrounding-spaces"),
    ],
)
def test_bm25_parameters_accepts_values_in_range(options: dict[str, str], expected: tuple[float, float]) -> None:
    assert bm25_parameters(RetrieverContext(CORPUS, Path("unused"), options)) == expected


def test_lexical_builds_with_boundary_values(tmp_path: Path) -> None:
    retriever = build("goldeneval.lexical", tmp_path, k1="0", b="1")
    assert isinstance(retriever, LexicalRetriever) and (retriever.k1, retriever.b) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("k1", "b", "message"),
    [
        pytest.param(float("nan"), 0.75, "k1 must be a finite number >= 0, got nan", id="k1-nan"),
        pytest.param(1.5, float("inf"), "b must be a finite number in [0, 1], got inf", id="b-inf"),
    ],
)
def test_the_lexical_retriever_itself_rejects_bad_parameters(tmp_path: Path, k1: float, b: float, message: str) -> None:
    with pytest.raises(RetrieverError, match=re.escape(message)):
        LexicalRetriever(CORPUS, tmp_path / "cache", k1=k1, b=b)
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "Infinity", "1e999"])
def test_float_option_rejects_every_non_finite_value(value: str) -> None:
    context = RetrieverContext(CORPUS, Path("unused"), {"weight": value})
    with pytest.raises(
        RetrieverError, match=re.escape(f"retriever option 'weight': must be a finite number >= 0, got {value}")
    ):
        float_option(context, "weight", 1.0)


def test_float_option_takes_a_maximum() -> None:
    context = RetrieverContext(CORPUS, Path("unused"), {"share": "1.5"})
    with pytest.raises(
        RetrieverError, match=re.escape("retriever option 'share': must be a finite number in [0, 1], got 1.5")
    ):
        float_option(context, "share", 0.5, maximum=1.0)


def test_the_context_float_option_rejects_nan_without_bounds() -> None:
    context = RetrieverContext(CORPUS, Path("unused"), {"shift": "nan"})
    with pytest.raises(RetrieverError, match=re.escape("retriever option 'shift': must be a finite number, got nan")):
        context.float_option("shift", 0.0)


def test_the_context_float_option_accepts_a_negative_number_without_bounds() -> None:
    assert RetrieverContext(CORPUS, Path("unused"), {"shift": "-2.5"}).float_option("shift", 0.0) == -2.5


def test_int_option_rejects_a_value_below_its_minimum_however_large() -> None:
    context = RetrieverContext(CORPUS, Path("unused"), {"depth": "-1" + "0" * 40})
    with pytest.raises(RetrieverError, match=r"retriever option 'depth': must be at least 1, got -10{40}$"):
        int_option(context, "depth", minimum=1)


def test_an_option_error_is_an_input_error() -> None:
    context = RetrieverContext(CORPUS, Path("unused"), {"k1": "nan"})
    with pytest.raises(InputError):
        bm25_parameters(context)


@pytest.fixture
def cli_with_a_typo(tmp_path: Path) -> Result:
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--option", "kl=1.2"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    return CliRunner().invoke(main, args)


def test_the_cli_exits_3_on_an_unknown_option(cli_with_a_typo: Result) -> None:
    assert cli_with_a_typo.exit_code == 3  # ExitCode.INVALID_INPUT


def test_the_cli_names_the_unknown_option_and_the_known_ones_on_one_stderr_line(cli_with_a_typo: Result) -> None:
    assert cli_with_a_typo.stderr == (
        "goldeneval: error: retriever 'goldeneval.lexical': unknown option(s) kl (known: b, k1)\n"
    )


def test_the_cli_creates_no_store_and_no_cache_on_an_unknown_option(tmp_path: Path, cli_with_a_typo: Result) -> None:
    assert sorted(path.name for path in tmp_path.iterdir()) == []
