"""The main command's operator ergonomics (issue 43): ``--partition SET|RETRIEVER`` runs one
partition, an unknown one is one line (exit 2), and a suite-file error is one line naming the
file and the field (exit 3), not a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import dagster as dg
import pytest
import yaml

from tests.dagster_support import SETS, write_project
from tests.test_dagster_main import _main


def main(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _main(root, root / "dagster_home", *args)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_suite_file_error_is_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    config = tmp_path / "goldeneval.yaml"
    content = yaml.safe_load(config.read_text())
    content["thresholds"] = {"max_top1_drop": 7}
    config.write_text(yaml.safe_dump(content))
    result = main(tmp_path)
    assert result.returncode == 3
    assert result.stderr == (
        f"goldeneval: error: {config}: field 'thresholds.max_top1_drop': Input should be less than or equal to 1\n"
    )
    assert result.stdout == ""


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_unknown_partition_is_one_line_listing_the_declared_ones(tmp_path: Path) -> None:
    write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    result = main(tmp_path, "--partition", "alpha-set|nothere")
    assert result.returncode == 2
    assert result.stderr == (
        "goldeneval: error: --partition 'alpha-set|nothere': the suite file declares no such SET|RETRIEVER "
        "or PROMPT_SET|MODEL partition; it declares alpha-set|fixed, alpha-set|lexical\n"
    )


@pytest.mark.slow  # the in-process asset graph: seconds; CI runs it
def test_one_partition_runs_alone(tmp_path: Path) -> None:
    write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    result = main(tmp_path, "--partition", "alpha-set|fixed")
    assert result.returncode == 0, result.stderr
    home = tmp_path / "dagster_home"
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs(filters=dg.RunsFilter(job_name="nightly_evaluation"))
    assert [run.tags.get("dagster/partition") for run in runs] == ["fixed|alpha-set"]
