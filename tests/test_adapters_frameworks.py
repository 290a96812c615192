"""``goldeneval.langchain`` and ``goldeneval.llamaindex`` with real LangChain and LlamaIndex
retrievers (tests/adapter_toys.py, no model): the factory option, how the limit reaches the
framework, where document ids come from, and one line for everything that goes wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.external import SearchError
from goldeneval.retrieval.retrievers.langchain import LangChainRetriever
from goldeneval.retrieval.retrievers.llamaindex import LlamaIndexRetriever
from tests import adapter_toys

TOYS = "tests.adapter_toys"
LLAMA_TOYS = "tests.adapter_toys_llamaindex"
ADAPTERS = ("goldeneval.langchain", "goldeneval.llamaindex")


def build(retriever_id: str, tmp_path: Path, **options: str) -> LangChainRetriever | LlamaIndexRetriever:
    retriever = build_retriever(retriever_id, RetrieverContext(corpus=None, cache_dir=tmp_path, options=options))
    assert isinstance(retriever, (LangChainRetriever, LlamaIndexRetriever))
    return retriever


# ------------------------------------------------------------------ LangChain: the limit


def test_a_k_field_is_set_on_a_copy_per_limit_and_the_teams_object_is_unchanged(tmp_path: Path) -> None:
    retriever = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_keyword_retriever")
    assert retriever.limit_by == "k"
    adapter_toys.K_OF_CALLS.clear()
    assert retriever.retrieve("ticket price", 3) == ["fares/day-ticket", "fares/single-ticket", "fares/monthly-pass"]
    assert retriever.retrieve("ticket price", 1) == ["fares/day-ticket"]
    assert retriever.retrieve("ticket price", 3)[:1] == ["fares/day-ticket"]
    assert adapter_toys.K_OF_CALLS == [3, 1, 3]
    assert retriever.retriever.k == 2


def test_a_vector_store_retriever_gets_k_in_the_call(tmp_path: Path) -> None:
    retriever = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_vector_store_retriever")
    assert retriever.limit_by == "search_kwargs"
    ranking = retriever.retrieve("lost property", 4)
    assert len(ranking) == 4 and set(ranking) <= set(adapter_toys.DOCUMENTS)
    assert retriever.retriever.search_kwargs == {"k": 1}  # as the team made it


def test_a_retriever_without_a_limit_setting_is_truncated_and_ids_fall_back_to_document_id(tmp_path: Path) -> None:
    retriever = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_everything_retriever")
    assert retriever.limit_by == "truncate"
    assert retriever.retrieve("anything", 2) == ["fares/day-ticket", "fares/single-ticket"]
    assert retriever.retrieve("anything", 0) == []


# ------------------------------------------------------------------ LangChain: ids


def test_a_named_id_field_is_read_and_required(tmp_path: Path) -> None:
    keyed = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_source_keyed_retriever", id_field="source")
    assert keyed.retrieve("lost property", 5) == ["service/lost-property"]
    everything = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_everything_retriever", id_field="doc")
    with pytest.raises(SearchError, match=r"^document 0 has no metadata field 'doc' \(its metadata has: n\); name"):
        everything.retrieve("anything", 2)


def test_integer_ids_are_text_and_other_ids_are_the_questions_error(tmp_path: Path) -> None:
    retriever = build("goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_odd_ids_retriever")
    assert retriever.retrieve("a number", 5) == ["17"]
    with pytest.raises(SearchError, match=r"document 0: field 'id' is an object with keys nested, not a string id"):
        retriever.retrieve("an object", 5)
    with pytest.raises(SearchError, match=r"has no metadata field 'id' \(its metadata has: source\).*no Document.id"):
        retriever.retrieve("nothing", 5)


# ------------------------------------------------------------------ LlamaIndex


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_llamaindex_similarity_top_k_is_set_on_a_shallow_copy(tmp_path: Path) -> None:
    retriever = build("goldeneval.llamaindex", tmp_path, factory=f"{LLAMA_TOYS}:make_keyword_nodes", id_field="doc_id")
    assert retriever.limit_by == "similarity_top_k"
    assert retriever.retrieve("ticket price", 3) == ["fares/day-ticket", "fares/single-ticket", "fares/monthly-pass"]
    assert retriever.retriever.similarity_top_k == 2


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_llamaindex_ids_fall_back_to_the_source_document_then_the_node_id(tmp_path: Path) -> None:
    by_source = build("goldeneval.llamaindex", tmp_path, factory=f"{LLAMA_TOYS}:make_keyword_nodes")
    assert by_source.retrieve("ticket price", 2) == ["fares/day-ticket", "fares/single-ticket"]  # ref_doc_id
    by_node = build("goldeneval.llamaindex", tmp_path, factory=f"{LLAMA_TOYS}:make_all_nodes")
    assert by_node.limit_by == "truncate"
    assert by_node.retrieve("anything", 2) == ["fares/day-ticket", "fares/single-ticket"]  # node_id
    strict = build("goldeneval.llamaindex", tmp_path, factory=f"{LLAMA_TOYS}:make_all_nodes", id_field="doc_id")
    with pytest.raises(SearchError, match=r"^node 0 has no metadata field 'doc_id' \(its metadata has: none\)"):
        strict.retrieve("anything", 2)


# ------------------------------------------------------------------ both: the factory option


@pytest.mark.parametrize("retriever_id", ADAPTERS)
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, r"needs option factory=package\.module:callable, e\.g\. --option factory=my_module:make_retriever"),
        ({"factory": "no_colon"}, r"option 'factory': expected package\.module:callable, got 'no_colon'"),
        ({"factory": "no_such_module_xyz:make"}, r"option 'factory': cannot import 'no_such_module_xyz'"),
        ({"factory": f"{TOYS}:missing"}, r"option 'factory': module 'tests\.adapter_toys' has no callable 'missing'"),
        (
            {"factory": f"{TOYS}:make_failure"},
            r"option 'factory': tests\.adapter_toys:make_failure\(\) raised ValueError: the index is not built yet "
            r"run make index first$",
        ),
        ({"factory": f"{TOYS}:make_nothing"}, r"option 'factory': tests\.adapter_toys:make_nothing\(\) returned "),
        ({"factory": f"{TOYS}:make_keyword_retriever", "k": "3"}, r"unknown option\(s\) k \(known: corpus_revision"),
    ],
)
def test_a_bad_factory_is_one_line_naming_the_retriever(
    tmp_path: Path, retriever_id: str, options: dict[str, str], message: str
) -> None:
    with pytest.raises(RetrieverError, match=message) as caught:
        build_retriever(retriever_id, RetrieverContext(corpus=None, cache_dir=tmp_path, options=options))
    assert str(caught.value).startswith(f"retriever '{retriever_id}'") and "\n" not in str(caught.value)


def test_a_factory_of_the_other_framework_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match=r"returned tests\.adapter_toys\.KeywordRetriever, not a llama_index"):
        build("goldeneval.llamaindex", tmp_path, factory=f"{TOYS}:make_keyword_retriever")
    with pytest.raises(
        RetrieverError, match=r"returned tests\.adapter_toys_llamaindex\.KeywordNodes, not a langchain_core"
    ):
        build("goldeneval.langchain", tmp_path, factory=f"{LLAMA_TOYS}:make_keyword_nodes")


def test_provenance_names_the_factory_and_takes_declared_revisions(tmp_path: Path) -> None:
    retriever = build(
        "goldeneval.langchain",
        tmp_path,
        factory=f"{TOYS}:make_keyword_retriever",
        corpus_revision="index-2026-12-01",
        model_revision="bm25-v3",
    )
    provenance = retriever.provenance()
    assert provenance.pipeline_identity == (
        "goldeneval.langchain/tests.adapter_toys:make_keyword_retriever -> tests.adapter_toys.KeywordRetriever"
    )
    assert (provenance.corpus_revision, provenance.model_revision) == ("index-2026-12-01", "bm25-v3")
    assert provenance.chunking_identity is None
    assert (
        build("goldeneval.llamaindex", tmp_path, factory=f"{LLAMA_TOYS}:make_all_nodes").provenance().corpus_revision
        is None
    )


def test_a_secret_in_a_revision_option_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match=r"option 'model_revision': cannot be the model_revision"):
        build(
            "goldeneval.langchain", tmp_path, factory=f"{TOYS}:make_keyword_retriever", model_revision="ghp_" + "a" * 36
        )


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_through_the_cli_a_talking_factory_keeps_json_clean_and_a_bad_id_is_its_questions_error(tmp_path: Path) -> None:
    args = ["retrieval", "--set", "transit-sample", "--store", str(tmp_path / "r.duckdb"), "--no-progress"]
    args += ["--retriever", "goldeneval.langchain"]
    result = CliRunner().invoke(
        main,
        [*args, "--option", f"factory={TOYS}:make_noisy_retriever", "--format", "json"],
    )
    assert result.exit_code == ExitCode.OK, result.output
    document = json.loads(result.stdout)
    assert "loading the index" in result.stderr
    assert document["run"]["errors"] == 0 and document["run"]["top1_rate"] > 0
    odd = CliRunner().invoke(
        main,
        [*args, "--option", f"factory={TOYS}:make_odd_ids_retriever", "--option", "id_field=source"],
    )
    assert odd.exit_code == ExitCode.OK, odd.output  # incomplete: stored, no verdict (no gate asked)
    assert "81 of 81 questions errored" in odd.output
    assert "ERROR: SearchError: document 0 has no metadata field 'source' (its metadata has: id)" in odd.output
