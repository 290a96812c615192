"""A small sample of benchmarks/fuzz_inputs.py: every bad input is one InputError line naming
its file (the script runs 100,000 inputs; this runs a few hundred on every test run)."""

from __future__ import annotations

import pytest

from benchmarks.fuzz_inputs import TARGETS, fuzz


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
@pytest.mark.parametrize("target", list(TARGETS))
def test_fuzzed_input_is_accepted_or_refused_with_one_line_naming_the_file(target: str) -> None:
    tally = fuzz(target, 100)
    assert tally.counts["unexpected"] == 0, tally.examples
    assert sum(tally.counts.values()) >= 50
