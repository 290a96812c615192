"""The main command's help names the partitions of the declared kinds, not retrieval's alone."""

from __future__ import annotations

import pytest

import pipelines.main
from goldeneval.kinds import built_in_kinds
from tests.toy_kind import TOY_DECLARATION


def test_the_help_names_every_shipped_kinds_partitions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line a paragraph: argparse wraps to the terminal
    with pytest.raises(SystemExit) as ended:
        pipelines.main.main(["--help"])
    assert ended.value.code == 0
    shown = capsys.readouterr().out
    assert "every partition of goldeneval.yaml ((golden set x retriever), (golden prompt set x model))" in shown
    assert "[--partition PARTITION]" in shown
    assert (
        "Run only this partition, named by its kind's dimensions (SET|RETRIEVER, PROMPT_SET|MODEL); repeatable."
        in shown
    )


def test_the_help_of_a_third_kind_names_its_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    shown = pipelines.main.parser_for([*built_in_kinds(), TOY_DECLARATION]).format_help()
    assert "((golden set x retriever), (golden prompt set x model), (toy set x reranker))" in shown
    assert "(SET|RETRIEVER, PROMPT_SET|MODEL, SET|RERANKER); repeatable." in shown
