"""Every built-in retriever declares its full provenance (ADR-215): corpus revision, model
revision, chunking identity, a pipeline identity covering fusion and rerank parameters, and
the execution revision."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.provenance import NOT_APPLICABLE, PROVENANCE_FIELDS, Provenance, variant_fingerprint
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever, known_retrievers
from goldeneval.retrieval.retrievers.dense import model_revision
from tests.tiny_models import tiny_cross_encoder, tiny_sentence_transformer

CORPUS = Corpus(
    (
        Document("fares/day", "day ticket", "the day ticket is for the bus and tram"),
        Document("rights/delay", "delay", "a delay of the train gives a refund"),
    )
)
LEXICAL_PIPELINE = "goldeneval.lexical/bm25s-lucene-v1(k1=1.5,b=0.75)"
ML_PACKAGES = (
    f"sentence-transformers {version('sentence-transformers')}; transformers {version('transformers')}; "
    f"torch {version('torch')}"
)
GOLDENEVAL = f"goldeneval {version('goldeneval')}"


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("encoder"), seed=0)


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"), seed=0)


def provenance_of(retriever_id: str, cache: Path, **options: str) -> Provenance:
    retriever = build_retriever(retriever_id, RetrieverContext(CORPUS, cache, options))
    declared = retriever.provenance()  # type: ignore[attr-defined]
    assert isinstance(declared, Provenance)
    return declared


def test_the_four_retrievers_and_trec_run_are_registered() -> None:
    assert {
        "goldeneval.lexical",
        "goldeneval.dense",
        "goldeneval.hybrid",
        "goldeneval.reranked",
        "goldeneval.trec_run",
    } <= set(known_retrievers())


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_dense_declares_corpus_model_chunking_pipeline_and_packages(tmp_path: Path, encoder: Path) -> None:
    declared = provenance_of("goldeneval.dense", tmp_path, model=str(encoder), chunking="tokens(size=64,overlap=16)")
    assert declared == Provenance(
        corpus_revision=CORPUS.revision,
        model_revision=model_revision(encoder),
        chunking_identity="tokens(size=64,overlap=16)",
        pipeline_identity="goldeneval.dense/exact-cosine-v1",
        execution_revision=f"{GOLDENEVAL}; {ML_PACKAGES}",
    )


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_hybrid_declares_its_fusion_parameters_and_both_stages(tmp_path: Path, encoder: Path) -> None:
    declared = provenance_of(
        "goldeneval.hybrid", tmp_path, model=str(encoder), rrf_k="30", dense_weight="0.5", depth="40"
    )
    assert declared == Provenance(
        corpus_revision=CORPUS.revision,
        model_revision=model_revision(encoder),
        chunking_identity="whole",
        pipeline_identity=(
            f"goldeneval.hybrid/rrf(k=30,weights=1:0.5,depth=40)[{LEXICAL_PIPELINE};goldeneval.dense/exact-cosine-v1]"
        ),
        execution_revision=f"{GOLDENEVAL}; bm25s {version('bm25s')}; {ML_PACKAGES}",
    )


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_dense_reranking_declares_the_bi_encoder_and_the_candidate_count(tmp_path: Path, encoder: Path) -> None:
    declared = provenance_of("goldeneval.reranked", tmp_path, model=str(encoder), candidates="20")
    assert declared.model_revision == model_revision(encoder)
    assert declared.chunking_identity == "whole"
    assert declared.pipeline_identity == (
        f"goldeneval.reranked/rerank(candidates=20,scorer=dense-cosine)[{LEXICAL_PIPELINE}]"
    )


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_cross_encoder_reranking_declares_the_cross_encoder_revision(tmp_path: Path, cross_encoder: Path) -> None:
    declared = provenance_of("goldeneval.reranked", tmp_path, cross_encoder=str(cross_encoder), chunking="sections")
    assert declared == Provenance(
        corpus_revision=CORPUS.revision,
        model_revision=model_revision(cross_encoder),
        chunking_identity="sections",
        pipeline_identity=f"goldeneval.reranked/rerank(candidates=100,scorer=cross-encoder)[{LEXICAL_PIPELINE}]",
        execution_revision=f"{GOLDENEVAL}; bm25s {version('bm25s')}; {ML_PACKAGES}",
    )


def test_trec_run_declares_the_run_file_digest_as_its_pipeline(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 fares/day 1 1 other-system\n")
    golden = GoldenQuestionSet(
        id="s",
        questions=(GoldenQuestion(id="q1", text="day", form=QuestionForm.MATCH, expected=frozenset()),),
    )
    retriever = build_retriever(
        "goldeneval.trec_run", RetrieverContext(CORPUS, tmp_path, {"run": str(run)}, golden_set=golden)
    )
    declared = retriever.provenance()  # type: ignore[attr-defined]
    assert declared == Provenance(
        corpus_revision=CORPUS.revision,
        model_revision=NOT_APPLICABLE,
        chunking_identity=NOT_APPLICABLE,
        pipeline_identity=(
            f"goldeneval.trec_run/file(sha256:{__import__('hashlib').sha256(run.read_bytes()).hexdigest()})"
        ),
        execution_revision=GOLDENEVAL,
    )


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
@pytest.mark.parametrize("retriever_id", ["goldeneval.lexical", "goldeneval.dense", "goldeneval.hybrid"])
def test_every_field_is_declared_so_the_variant_fingerprint_is_known(
    retriever_id: str, tmp_path: Path, encoder: Path
) -> None:
    options = {} if retriever_id == "goldeneval.lexical" else {"model": str(encoder)}
    declared = provenance_of(retriever_id, tmp_path, **options)
    assert all(getattr(declared, field) is not None for field in PROVENANCE_FIELDS)
    assert variant_fingerprint(declared) is not None
