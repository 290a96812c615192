"""Fuzz every reader of user input: each bad input must be an ``InputError`` of one line that
names the file, never another exception.

Targets: golden set files (YAML, JSON, JSONL), the suite file, TREC run files, the BEIR
importer and retriever option parsing.  Inputs come from hypothesis: arbitrary text, and
structures shaped like the real thing (sets with questions whose fields have random types
and values), so both the parsers and the validators are reached.

    .venv/bin/python -m benchmarks.fuzz_inputs [--examples 20000]   # per target; 5 targets

Prints, per target, the inputs tried, how many were accepted, refused with an
``InputError``, and unexpected (any other exception, or a message that is not one line
naming the file).  ``tests/test_fuzz.py`` runs a small sample of the same targets.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldeneval.core.errors import InputError
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.golden import load_golden_set
from goldeneval.retrieval.retrievers.base import RetrieverContext
from goldeneval.retrieval.retrievers.options import float_option, int_option
from goldeneval.retrieval.trec import read_trec_run
from goldeneval.suite import load_suite

MAX_MESSAGE = 1000
"""A refusal longer than this is not one readable line."""

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
question = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=12), values),
        "text": st.one_of(st.text(max_size=40), values),
        "form": st.one_of(st.sampled_from(["MATCH", "GAP", "match", ""]), values),
        "expected": st.one_of(st.lists(st.text(max_size=10), max_size=4), values),
        "hard_class": st.one_of(st.none(), st.text(max_size=12), values),
        "answer_gist": st.one_of(st.none(), st.text(max_size=20)),
        "extra": values,
    },
)
golden_set = st.fixed_dictionaries(
    {},
    optional={
        "id": st.one_of(st.text(max_size=12), values),
        "description": st.one_of(st.text(max_size=20), values),
        "questions": st.one_of(st.lists(question, max_size=5), values),
        "corpus": st.one_of(st.none(), st.text(max_size=10)),
    },
)
suite = st.fixed_dictionaries(
    {},
    optional={
        "sets": st.one_of(st.lists(st.text(max_size=12), max_size=3), values),
        "retrievers": st.one_of(
            st.dictionaries(
                st.text(max_size=12),
                st.fixed_dictionaries({}, optional={"id": st.text(max_size=20), "options": values}),
                max_size=3,
            ),
            values,
        ),
        "thresholds": st.one_of(
            st.fixed_dictionaries(
                {}, optional={"max_top1_drop": scalars, "slice_max_drop": values, "min_slice_questions": scalars}
            ),
            values,
        ),
        "schedule": st.one_of(st.fixed_dictionaries({}, optional={"cron": scalars, "timezone": scalars}), values),
        "baseline": scalars,
        "timeout_s": scalars,
        "privacy": scalars,
    },
)


def _text_or(structured: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """Arbitrary text half the time, a dumped structure (YAML or JSON) the other half."""
    dumped = structured.map(lambda value: yaml.safe_dump(value, allow_unicode=True))
    as_json = structured.map(lambda value: json.dumps(value, allow_nan=True))
    return st.one_of(st.text(max_size=300), dumped, as_json)


class Tally:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: list[str] = []

    def run(self, action: Callable[[], object], path: Path) -> None:
        try:
            action()
        except InputError as exc:
            message = str(exc)
            if "\n" in message or len(message) > MAX_MESSAGE or str(path) not in message:
                self._unexpected(f"{type(exc).__name__}: {message[:300]!r}")
            else:
                self.counts["refused"] += 1
        except Exception as exc:  # the point of fuzzing: anything else is a defect
            self._unexpected(f"{type(exc).__name__}: {str(exc)[:300]!r}")
        else:
            self.counts["accepted"] += 1

    def _unexpected(self, what: str) -> None:
        self.counts["unexpected"] += 1
        if len(self.examples) < 5:
            self.examples.append(what)


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


def fuzz_set_files(root: Path, examples: int, tally: Tally) -> None:
    @_settings(examples)
    @given(content=_text_or(golden_set), suffix=st.sampled_from([".yaml", ".json", ".jsonl"]))
    def check(content: str, suffix: str) -> None:
        path = root / f"set{suffix}"
        path.write_text(content, encoding="utf-8")
        tally.run(lambda: load_golden_set(path), path)

    check()


def fuzz_suite_files(root: Path, examples: int, tally: Tally) -> None:
    (root / "s.yaml").write_text("id: s\nquestions:\n  - {id: q, text: t, form: MATCH, expected: []}\n")

    @_settings(examples)
    @given(content=_text_or(suite))
    def check(content: str) -> None:
        path = root / "goldeneval.yaml"
        path.write_text(content, encoding="utf-8")
        tally.run(lambda: load_suite(path), path)

    check()


def fuzz_trec_runs(root: Path, examples: int, tally: Tally) -> None:
    line = st.lists(st.one_of(st.text(max_size=8), st.integers().map(str), st.floats().map(str)), max_size=7).map(
        " ".join
    )

    @_settings(examples)
    @given(lines=st.lists(line, max_size=6))
    def check(lines: list[str]) -> None:
        path = root / "x.run"
        path.write_text("\n".join(lines), encoding="utf-8")
        tally.run(lambda: read_trec_run(path), path)

    check()


def fuzz_beir_folders(root: Path, examples: int, tally: Tally) -> None:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    record = st.dictionaries(st.sampled_from(["_id", "title", "text", "x"]), scalars, max_size=4).map(json.dumps)
    jsonl = st.lists(st.one_of(record, st.text(max_size=40)), max_size=4).map("\n".join)
    qrels = st.lists(st.lists(st.text(max_size=6), max_size=4).map("\t".join), max_size=4).map("\n".join)

    @_settings(examples)
    @given(corpus=jsonl, queries=jsonl, judgements=qrels)
    def check(corpus: str, queries: str, judgements: str) -> None:
        (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
        (folder / "queries.jsonl").write_text(queries, encoding="utf-8")
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + judgements, encoding="utf-8")
        tally.run(lambda: load_beir_set(folder), folder)

    check()


def fuzz_options(root: Path, examples: int, tally: Tally) -> None:
    @_settings(examples)
    @given(raw=st.one_of(st.text(max_size=20), st.floats().map(str), st.integers().map(str)))
    def check(raw: str) -> None:
        context = RetrieverContext(corpus=None, cache_dir=root, options={"k": raw})

        def parse() -> None:
            float_option(context, "k", 1.0)
            int_option(context, "k", minimum=1)

        # Option errors name the option, not a file: the "path" they must name is the option.
        tally.run(parse, Path("k"))

    check()


TARGETS: dict[str, Callable[[Path, int, Tally], None]] = {
    "set files": fuzz_set_files,
    "suite file": fuzz_suite_files,
    "TREC run files": fuzz_trec_runs,
    "BEIR folders": fuzz_beir_folders,
    "retriever options": fuzz_options,
}


def fuzz(target: str, examples: int) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="goldeneval-fuzz-") as tmp:
        TARGETS[target](Path(tmp), examples, tally)
    return tally


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000, help="inputs per target")
    options = parser.parse_args(argv)
    print("| target | inputs | accepted | refused (InputError) | unexpected |")
    print("| --- | --- | --- | --- | --- |")
    total = Counter[str]()
    notes = []
    for target in TARGETS:
        tally = fuzz(target, options.examples)
        counts = tally.counts
        total.update(counts)
        inputs = sum(counts.values())
        print(f"| {target} | {inputs:,} | {counts['accepted']:,} | {counts['refused']:,} | {counts['unexpected']:,} |")
        notes += [f"{target}: {example}" for example in tally.examples]
    print(f"| all | {sum(total.values()):,} | {total['accepted']:,} | {total['refused']:,} | {total['unexpected']:,} |")
    for note in notes:
        print(f"  unexpected — {note}")


if __name__ == "__main__":
    main()
