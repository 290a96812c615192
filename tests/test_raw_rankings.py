"""A scored run keeps what was returned as numbers into its distinct ids (issue 26: a tuple of
100 strings a question cost 856 bytes); read back, it is the list of tuples it stands for."""

from __future__ import annotations

import pytest

from goldeneval.retrieval.encoding import code_run
from goldeneval.retrieval.golden import GoldenQuestion


def test_raw_rankings_read_back_as_the_returned_tuples() -> None:
    questions = [GoldenQuestion(id=f"q{i}", text="t", form="MATCH", expected=["d1"]) for i in range(3)]
    returned = [("d1#0", "d2#0", "d1#1"), (), ("d2#0",)]
    raw = code_run(questions, returned, lambda raw_id: raw_id.split("#")[0]).raw
    assert len(raw) == 3 and list(raw) == returned and raw == returned
    assert raw[-1] == ("d2#0",) and raw[1] == () and raw[0:2] == returned[0:2]
    assert raw.ids.tolist() == ["d1#0", "d2#0", "d1#1"]  # each distinct id once, in first-seen order
    assert raw != [("d1#0",), (), ("d2#0",)] and raw != returned[:2]
    with pytest.raises(IndexError):
        raw[3]
