"""Settings declared once (goldeneval.core.settings): one pydantic field is a suite key, a
specification field and a flag, with one default, one set of bounds and one validator."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import click
import pytest
import yaml
from click.testing import CliRunner
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from goldeneval.cli import main
from goldeneval.cli.declared import declared_options
from goldeneval.cli.options import declared_bundle
from goldeneval.core.errors import InputError
from goldeneval.core.settings import Flag, flag_of, flagged_fields
from goldeneval.prompts.settings import GradingSettings, JudgeSettings
from goldeneval.prompts.spec import GradingSpec, JudgeSpec
from goldeneval.retrieval.settings import RetrievalSettings
from goldeneval.retrieval.spec import RunSpec
from goldeneval.suite import JudgeConfig, PromptGradingConfig, SuiteConfig, load_suite


def _split(value: object) -> object:
    return value.split(",") if isinstance(value, str) else value


def _must_be_even(value: int) -> int:
    if value % 2:
        raise ValueError(f"{value} is odd")
    return value


class Toy(BaseModel):
    """Every shape a declared flag can take."""

    depth: Annotated[int, Flag(), AfterValidator(_must_be_even)] = Field(default=2, ge=0, le=10, description="Depth.")
    share: Annotated[float | None, Flag()] = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False, description="A.")
    mode: Annotated[Literal["fast", "slow"], Flag()] = Field(default="fast", description="Mode.")
    verbose: Annotated[bool, Flag()] = Field(default=False, description="Talk.")
    cache: Annotated[bool, Flag("--no-cache", off=True)] = Field(default=True, description="Cache.")
    names: Annotated[tuple[str, ...], Flag("--name", repeated=True)] = Field(default=(), description="A name.")
    cutoffs: Annotated[tuple[int, ...], Flag(separated=True), BeforeValidator(_split)] = Field(
        default=(1, 3), description="Cutoffs."
    )
    hidden: int = 7


@click.command()
@declared_bundle(Toy, "toy")
def toy_command(toy: Toy) -> None:
    click.echo(toy.model_dump_json())


def _toy(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(toy_command, list(args))
    return result.exit_code, result.output


def test_only_the_fields_that_declare_a_flag_are_options() -> None:
    assert flagged_fields(Toy) == ["depth", "share", "mode", "verbose", "cache", "names", "cutoffs"]
    assert len(declared_options(Toy)) == 7


def test_the_flags_arrive_as_one_validated_model_with_the_declared_defaults() -> None:
    code, output = _toy()
    assert code == 0, output
    assert Toy.model_validate_json(output) == Toy()
    args = ["--depth", "4", "--mode", "slow", "--verbose", "--no-cache", "--name", "a", "--name", "b"]
    code, output = _toy(*args, "--cutoffs", "5,2", "--share", "0.5")
    assert code == 0, output
    expected = Toy(depth=4, share=0.5, mode="slow", verbose=True, cache=False, names=("a", "b"), cutoffs=(5, 2))
    assert Toy.model_validate_json(output) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--depth", "11"], "Invalid value for '--depth': 11 is not in the range 0<=x<=10."),
        (["--depth", "3"], "Invalid value for '--depth': 3 is odd"),
        (["--share", "nan"], "Invalid value for '--share': nan is not a finite number"),
        (["--mode", "warp"], "Invalid value for '--mode': 'warp' is not one of 'fast', 'slow'."),
        (["--cutoffs", "1,x"], "Invalid value for '--cutoffs': Input should be a valid integer"),
    ],
    ids=["range", "validator", "nan", "choice", "separated"],
)
def test_a_refused_value_is_a_usage_error_naming_the_flag(args: list[str], message: str) -> None:
    code, output = _toy(*args)
    assert code == 2
    assert message in output


def test_the_help_shows_each_fields_description_and_default() -> None:
    output = CliRunner().invoke(toy_command, ["--help"]).output
    assert "--depth INTEGER RANGE" in output and "[default: 2; 0<=x<=10]" in output
    assert "--cutoffs TEXT" in output and "Comma-separated.  [default: 1,3]" in output
    assert "--name TEXT" in output and "A name. Repeatable." in output
    assert "--hidden" not in output


@pytest.mark.parametrize(
    ("settings", "owners"),
    [
        (RetrievalSettings, (RunSpec, SuiteConfig)),
        (GradingSettings, (GradingSpec, PromptGradingConfig)),
        (JudgeSettings, (JudgeSpec, JudgeConfig)),
    ],
    ids=["retrieval", "grading", "judge"],
)
def test_every_setting_is_one_field_of_the_spec_and_of_the_suite_file(
    settings: type[BaseModel], owners: tuple[type[BaseModel], ...]
) -> None:
    for owner in owners:
        assert issubclass(owner, settings)
        for name, info in settings.model_fields.items():
            assert repr(owner.model_fields[name]) == repr(info), (owner.__name__, name)
    assert flagged_fields(settings) == list(settings.model_fields)  # every setting is on the command line


def _flag_defaults(command: tuple[str, ...]) -> dict[str, Any]:
    context = click.Context(main)
    found = main.get_command(context, command[0])
    assert found is not None
    return {param.name: param.default for param in found.params}


def test_the_retrieval_flags_default_to_what_the_spec_and_the_suite_default_to() -> None:
    defaults = _flag_defaults(("retrieval",))
    for name, info in RetrievalSettings.model_fields.items():
        flag = flag_of(info)
        assert flag is not None
        default = info.get_default(call_default_factory=True)
        shown = ",".join(map(str, default)) if flag.separated else default
        assert defaults[name] == shown, name


def _suite(tmp_path: Path, **fields: object) -> Path:
    (tmp_path / "s.yaml").write_text(
        yaml.safe_dump({"id": "s", "questions": [{"id": "q", "text": "t", "form": "MATCH", "expected": ["d"]}]})
    )
    path = tmp_path / "goldeneval.yaml"
    path.write_text(yaml.safe_dump({"sets": ["s.yaml"], "retrievers": {"b": {"id": "goldeneval.lexical"}}, **fields}))
    return path


def test_a_setting_in_the_suite_file_reaches_the_cells_specification(tmp_path: Path) -> None:
    path = _suite(tmp_path, hit_cutoffs="10,2", metrics=["NDCG@5"], chunk_separator="", workers=3, strict=True)
    spec = load_suite(path).run_spec("s", "b")
    assert (spec.hit_cutoffs, spec.metrics, spec.chunk_separator) == ((2, 10), ("ndcg@5",), None)
    assert (spec.workers, spec.strict) == (3, True)


@pytest.mark.parametrize(
    ("field", "value", "flag", "message"),
    [
        ("hit_cutoffs", "1,x", "--hit-k", "expected comma-separated integers, got '1,x'"),
        ("metrics", "ndcg@10,gmap", "--metrics", "unknown metric 'gmap'"),
        ("average_over", "some", "--average-over", None),
    ],
)
def test_the_suite_file_and_the_flag_refuse_a_value_by_the_same_rule(
    tmp_path: Path, field: str, value: str, flag: str, message: str | None
) -> None:
    with pytest.raises(InputError) as suite_error:
        load_suite(_suite(tmp_path, **{field: value}))
    result = CliRunner().invoke(main, ["retrieval", "--set", "s", "--retriever", "x", flag, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{flag}'" in result.output
    assert str(suite_error.value).startswith(f"{tmp_path / 'goldeneval.yaml'}: field '{field}': ")
    if message is not None:
        assert message in str(suite_error.value) and message in result.output


def _walk_flags(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str]]:
    """(suite key, flag) for every key of the suite file that declares the flag setting the same."""
    found: list[tuple[str, str]] = []
    for name, info in model.model_fields.items():
        flag = flag_of(info)
        if flag is not None:
            found.append((prefix + name, flag.option(name)))
        section = info.annotation
        for arg in typing.get_args(section) or (section,):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                found += _walk_flags(arg, f"{prefix}{name}.")
    return found


def test_every_flag_the_suite_file_names_is_an_option_of_the_command_its_section_runs() -> None:
    context = click.Context(main)
    options: dict[str, set[str]] = {}
    for command in ("retrieval", "prompts"):
        found = main.get_command(context, command)
        assert found is not None
        options[command] = {flag for param in found.params for flag in param.opts}
    pairs = _walk_flags(SuiteConfig)
    assert ("thresholds.max_top1_drop", "--max-top1-drop") in pairs and ("timeout_s", "--timeout") in pairs
    for key, flag in pairs:
        command = "prompts" if key.startswith("prompts.") else "retrieval"
        assert flag in options[command], (key, flag)


@pytest.mark.parametrize("value", [None, 5, True, {"ndcg@10": 5}], ids=["null", "number", "boolean", "mapping"])
def test_metrics_that_are_neither_a_list_nor_text_name_the_suite_field(tmp_path: Path, value: object) -> None:
    with pytest.raises(InputError) as raised:
        load_suite(_suite(tmp_path, metrics=value))
    assert str(raised.value) == (
        f"{tmp_path / 'goldeneval.yaml'}: field 'metrics': expected a list of metric names or comma-separated text, "
        f"got {type(value).__name__}"
    )


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--slice-drop", "form:GAP=true", "could not convert string to float: 'true'"),
        ("--slice-drop", "form:GAP", "expected SLICE=F, got 'form:GAP'"),
        ("--max-top1-drop", "2", "2.0 is not in the range 0<=x<=1."),
        ("--max-p", "0", "0.0 is not in the range 0<x<=1."),
    ],
)
def test_a_threshold_flag_refused_says_what_was_given(flag: str, value: str, message: str) -> None:
    result = CliRunner().invoke(main, ["retrieval", "--set", "s", "--retriever", "x", flag, value])
    assert result.exit_code == 2
    assert f"Invalid value for '{flag}': {message}" in result.output


def test_the_no_cache_flag_says_what_it_turns_off() -> None:
    output = CliRunner().invoke(main, ["prompts", "--help"], terminal_width=200).output
    [line] = [line for line in output.splitlines() if line.strip().startswith("--no-cache")]
    assert "Call the model (and the judge) for every prompt" in line
