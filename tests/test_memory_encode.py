"""Issue 44 (memory): ``columnar.encode`` codes string ids a batch at a time.

What is checked here is behaviour: coding in batches gives exactly the codes and the vocabulary
of one Arrow dictionary encoding of every id at once (the way it was coded before), whatever the
batch size and the input's form; and what encoding allocates beyond its result grows with the
batch, not with the run (a ratio of allocations in one process, never a time)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from goldeneval.retrieval.columnar import encode
from goldeneval.retrieval.columnar import encoding as columnar_encoding

ROOT = Path(__file__).resolve().parents[1]


def _at_once(rankings: list[list[Any]], judged: list[list[Any]]) -> tuple[list[Any], list[int], list[int]]:
    """The reference: every id of both sides cast to ``large_string``, concatenated and
    dictionary-encoded in one call: (vocabulary, ranking codes, judged codes)."""
    text = pa.large_string()
    flat_r = pa.array([v for row in rankings for v in row]).cast(text)
    flat_j = pa.array([v for row in judged for v in row]).cast(text)
    coded = pc.dictionary_encode(pa.concat_arrays([flat_r, flat_j]))
    codes = coded.indices.to_numpy(zero_copy_only=False).tolist()
    return coded.dictionary.to_pylist(), codes[: len(flat_r)], codes[len(flat_r) :]


def _run(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    n, vocabulary = rng.randint(0, 40), rng.randint(1, 30)
    rankings = [[f"d{rng.randrange(vocabulary)}" for _ in range(rng.randint(0, 12))] for _ in range(n)]
    judged = [sorted({f"d{rng.randrange(vocabulary + 5)}" for _ in range(rng.randint(0, 4))}) for _ in range(n)]
    return rankings, judged


@pytest.mark.parametrize("batch", [5, 64, columnar_encoding._BATCH_IDS])
@pytest.mark.parametrize("form", ["python", "arrow", "chunked"])
def test_encoding_in_batches_equals_one_dictionary_encoding(
    batch: int, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(columnar_encoding, "_BATCH_IDS", batch)
    for seed in range(15):
        rankings, judged = _run(seed)
        vocabulary, ranked_codes, judged_codes = _at_once(rankings, judged)
        given: Any = rankings
        if form == "arrow":
            given = pa.array(rankings, pa.list_(pa.string()))
        elif form == "chunked":
            half = len(rankings) // 2
            given = pa.chunked_array(
                [pa.array(rankings[:half], pa.list_(pa.string())), pa.array(rankings[half:], pa.list_(pa.string()))]
            )
        coded = encode(given, judged)
        assert coded.vocabulary.type == pa.large_string()
        assert coded.vocabulary.to_pylist() == vocabulary
        assert coded.rankings.codes.dtype == np.int32
        assert coded.rankings.codes.tolist() == ranked_codes
        assert coded.judgements.codes.tolist() == judged_codes
        assert coded.rankings.offsets.tolist() == [0, *np.cumsum([len(r) for r in rankings]).tolist()]


@pytest.mark.parametrize("batch", [1, 2, columnar_encoding._BATCH_IDS])
def test_ids_of_other_types_and_bad_ids_are_read_as_at_once(batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer ids are cast to strings (so 3 and "3" are one document); a null or a mixed type
    is refused with the whole side's count, in whichever batch it lies."""
    monkeypatch.setattr(columnar_encoding, "_BATCH_IDS", batch)
    rankings: list[list[Any]] = [[1, 2, 3], [3, 4]]
    coded = encode(rankings, [{"3"}, ["9"]])
    vocabulary, ranked_codes, judged_codes = _at_once(rankings, [["3"], ["9"]])
    assert (coded.vocabulary.to_pylist(), coded.rankings.codes.tolist()) == (vocabulary, ranked_codes)
    assert coded.judgements.codes.tolist() == judged_codes
    with pytest.raises(ValueError) as error:
        encode([["a", None], [None]], [["a"], []])
    assert str(error.value) == "rankings holds 2 null value(s); every entry must be set"
    with pytest.raises(ValueError) as error:
        encode([["a"]], [[None]])
    assert str(error.value) == "judged holds 1 null value(s); every entry must be set"
    with pytest.raises(ValueError, match=r"^rankings: every value must be of one type \("):
        encode([["a", 1]], [["a"]])
    chunked = pa.chunked_array([pa.array([["a", None]]), pa.array([[None], ["b"]])])
    with pytest.raises(ValueError) as error:
        encode(chunked, [["a"], [], []])
    assert str(error.value) == "rankings holds 2 null value(s); every entry must be set"


_ALLOCATIONS = """
import json, sys, tracemalloc
import pyarrow as pa
from goldeneval.retrieval.columnar import encoding
encoding._BATCH_IDS = 2048
pool = [f"doc-{j}" for j in range(50)]
encoding.encode([["a"]], [["a"]])  # imports and first-call set-up, before anything is counted
result = {}
for n in (250, 2000):  # 25,000 and 200,000 ids: the second run eight times the first
    rankings = [[pool[(i + j) % 50] for j in range(100)] for i in range(n)]
    judged = [[pool[i % 50]] for i in range(n)]
    tracemalloc.start()
    coded = encoding.encode(rankings, judged)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    kept = sum(a.nbytes for a in (coded.rankings.codes, coded.rankings.offsets, coded.judgements.codes,
                                 coded.judgements.offsets, coded.judgements.grades))
    result[n] = {"arrow_peak": pa.default_memory_pool().max_memory(), "python_beyond_result": peak - kept}
print(json.dumps(result))
"""


@pytest.mark.slow  # a fresh process: its imports alone take seconds on a loaded machine
def test_encoding_python_ids_allocates_with_the_batch_not_with_the_run() -> None:
    """Eight times the ids: Arrow's peak stays where it was (the ids were one array, then cast and
    concatenated: eight times the peak), and what Python and numpy hold beyond the codes grows far
    less than the ids (one flat list of every id did: 8.7x), measured in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _ALLOCATIONS], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    small, large = json.loads(done.stdout).values()
    assert large["arrow_peak"] <= 1.5 * small["arrow_peak"], (small, large)
    assert large["python_beyond_result"] <= 4 * small["python_beyond_result"], (small, large)
