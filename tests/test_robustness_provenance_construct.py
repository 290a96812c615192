"""Defect 4: a provenance built without validation (``Provenance.model_construct``) is
validated where it enters: a plug-in's ``provenance()``, a model's, a merge with the
configured declaration.  A token or a 5,000,000-character value is exit 3 with one line
and nothing is stored."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import InputError
from goldeneval.core.provenance import Provenance, retriever_provenance
from tests.conftest import CliWorkspace

TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

UNCHECKED_PLUGIN = textwrap.dedent(
    """
    import os

    from goldeneval.core.provenance import Provenance


    class Unchecked:
        def retrieve(self, question, limit):
            return ["a"]

        def provenance(self):
            value = os.environ["UNCHECKED_VALUE"]
            if value == "huge":
                value = "x" * 5_000_000
            return Provenance.model_construct(corpus_revision="rev-1", model_revision=value)


    def build(context):
        return Unchecked()
    """
)


class _Declares:
    def __init__(self, provenance: object) -> None:
        self._provenance = provenance

    def retrieve(self, question: str, limit: int) -> list[str]:
        return []

    def provenance(self) -> object:
        return self._provenance


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (TOKEN, "looks like a secret (a Hugging Face token); declare identities and hashes, never credentials"),
        ("huge", "must be 1 to 200 characters, got 5000000"),
    ],
    ids=["token", "huge"],
)
def test_an_unvalidated_plugin_provenance_is_invalid_input_and_stores_nothing(
    cli_workspace: CliWorkspace, monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    (cli_workspace.root / "unchecked_plugin.py").write_text(UNCHECKED_PLUGIN)
    monkeypatch.setenv("UNCHECKED_VALUE", value)
    args = ["retrieval", "--set", str(cli_workspace.set_path), "--retriever", "unchecked_plugin:build"]
    result = CliRunner().invoke(main, [*args, "--store", str(cli_workspace.store), "--no-progress"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        f"goldeneval: error: unchecked_plugin:build: provenance() field 'model_revision': {problem}\n"
    )
    assert TOKEN not in result.output
    assert not cli_workspace.store.exists()


@pytest.mark.parametrize(
    ("fields", "field", "problem"),
    [
        ({"pipeline_identity": "a\nb"}, "pipeline_identity", "must hold printable characters only"),
        ({"chunking_identity": 12}, "chunking_identity", "Input should be a valid string"),
        ({"corpus_revision": ""}, "corpus_revision", "must be 1 to 200 characters, got 0"),
    ],
    ids=["newline", "not-a-string", "empty"],
)
def test_every_field_of_a_constructed_provenance_is_checked(fields: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        retriever_provenance(_Declares(Provenance.model_construct(**fields)), "r")
    assert str(caught.value).startswith(f"r: provenance() field {field!r}: {problem}")


def test_a_valid_constructed_provenance_passes_as_declared() -> None:
    declared = Provenance.model_construct(corpus_revision="rev-1", pipeline_identity="p")
    assert retriever_provenance(_Declares(declared), "r") == Provenance(corpus_revision="rev-1", pipeline_identity="p")


def test_a_merge_validates_both_sides() -> None:
    configured = Provenance(corpus_revision="rev-1")
    with pytest.raises(InputError, match=r"provenance field 'model_revision': looks like a secret"):
        configured.merged_with(Provenance.model_construct(model_revision=TOKEN))
    with pytest.raises(InputError, match=r"provenance field 'model_revision': looks like a secret"):
        Provenance.model_construct(model_revision=TOKEN).merged_with(configured)
    merged = configured.merged_with(Provenance(model_revision="m"))
    assert merged == Provenance(corpus_revision="rev-1", model_revision="m")
