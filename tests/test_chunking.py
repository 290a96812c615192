"""Chunking strategies, chunk ids and the canonical chunking identity."""

from __future__ import annotations

import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import document_id_mapper
from goldeneval.retrieval.retrievers.chunking import (
    ChunkingStrategy,
    Sections,
    TokenWindows,
    WholeDocument,
    chunk_corpus,
    chunking_from_options,
    parse_chunking,
)

TEN_WORDS = " ".join(f"w{i}" for i in range(10))
MARKDOWN = "Intro line one.\nIntro line two.\n\n## Prices\n\nA day ticket costs 7.80.\n\nChildren pay half.\n"


@pytest.mark.parametrize(
    ("identity", "strategy"),
    [
        ("whole", WholeDocument()),
        ("sections", Sections()),
        ("tokens(size=128,overlap=32)", TokenWindows(128, 32)),
        ("tokens(size=5,overlap=0)", TokenWindows(5, 0)),
    ],
    ids=["whole", "sections", "tokens-default", "tokens-no-overlap"],
)
def test_a_chunking_identity_parses_back_to_its_strategy(identity: str, strategy: ChunkingStrategy) -> None:
    assert parse_chunking(identity) == strategy
    assert strategy.identity == identity


@pytest.mark.parametrize(
    ("identity", "message"),
    [
        ("paragraphs", "chunking 'paragraphs' is not one of: whole, sections, tokens"),
        ("tokens(size=4)", "tokens takes exactly size and overlap, got size"),
        ("tokens(size=4,overlap=x)", "expected name=integer parameters, got 'overlap=x'"),
        ("tokens(size=4,overlap=4)", "overlap must be at least 0 and less than size (4), got 4"),
        ("tokens(size=0,overlap=0)", "size must be at least 1, got 0"),
        ("whole(size=3)", "is not one of"),
    ],
    ids=["unknown", "missing-overlap", "non-integer", "overlap-too-big", "zero-size", "whole-params"],
)
def test_a_bad_chunking_identity_says_what_is_wrong(identity: str, message: str) -> None:
    with pytest.raises(RetrieverError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_chunking(identity)


def test_whole_document_chunking_gives_one_chunk_with_title_and_text() -> None:
    chunks = chunk_corpus([Document("fares/day", "Day ticket", "Costs 7.80.")], WholeDocument())
    assert [(c.id, c.document_id, c.text) for c in chunks] == [("fares/day#0", "fares/day", "Day ticket\nCosts 7.80.")]


def test_token_windows_overlap_and_cover_every_token() -> None:
    chunks = chunk_corpus([Document("d", "", TEN_WORDS)], TokenWindows(size=4, overlap=1))
    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]


def test_token_windows_put_the_title_in_front_of_every_window() -> None:
    chunks = chunk_corpus([Document("d", "Title", TEN_WORDS)], TokenWindows(size=6, overlap=2))
    assert [c.text for c in chunks] == ["Title\nw0 w1 w2 w3 w4 w5", "Title\nw4 w5 w6 w7 w8 w9"]


def test_a_document_shorter_than_a_window_is_one_chunk() -> None:
    chunks = chunk_corpus([Document("d", "", "just three words")], TokenWindows(size=128, overlap=32))
    assert [c.id for c in chunks] == ["d#0"]


def test_sections_split_at_blank_lines_and_keep_a_heading_with_its_paragraph() -> None:
    chunks = chunk_corpus([Document("fares", "Fares", MARKDOWN)], Sections())
    assert [c.text for c in chunks] == [
        "Fares\nIntro line one.\nIntro line two.",
        "Fares\n## Prices\nA day ticket costs 7.80.",
        "Fares\nChildren pay half.",
    ]


def test_an_empty_document_still_yields_one_chunk_under_every_strategy() -> None:
    empty = Document("empty", "", "")
    for strategy in (WholeDocument(), Sections(), TokenWindows(4, 1)):
        assert [c.id for c in chunk_corpus([empty], strategy)] == ["empty#0"]


def test_chunk_ids_number_from_zero_and_map_back_to_their_document() -> None:
    corpus = Corpus((Document("a/b", "", TEN_WORDS), Document("c", "", "short")))
    chunks = chunk_corpus(corpus, TokenWindows(size=4, overlap=0))
    to_document = document_id_mapper()
    assert [c.id for c in chunks] == ["a/b#0", "a/b#1", "a/b#2", "c#0"]
    assert [to_document(c.id) for c in chunks] == [c.document_id for c in chunks]


def test_chunking_options_set_token_window_size_and_overlap() -> None:
    assert chunking_from_options("tokens", 64, None) == TokenWindows(64, 32)
    assert chunking_from_options("tokens", None, None) == TokenWindows(128, 32)


def test_chunk_size_with_a_strategy_that_has_no_windows_is_an_error() -> None:
    with pytest.raises(RetrieverError, match="apply to chunking=tokens only, not 'whole'"):
        chunking_from_options("whole", 64, None)
