"""A mismatch explains itself (issue 43): the store keeps a content-free manifest per benchmark,
the reason names the documents and questions that changed, and the questions that did not
change are compared for information, with no numeric verdict.

Driven through the CLI on a copy of the bundled sample (``goldeneval/sample/transit``: 81
questions over 72 pages) with the lexical retriever, whose corpus revision is the corpus's
own: a page edited and a label changed between two runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner, Result

import goldeneval
from goldeneval.cli import ExitCode, main
from goldeneval.core.manifest import INFORMATIONAL, LISTED_IDS, BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.store import ResultStore, StoreLocation
from goldeneval.store.spool import keep_run, read_spooled
from tests.conftest import CliWorkspace

SAMPLE = Path(goldeneval.__file__).parent / "sample" / "transit"
EDITED = "fares/day-ticket"
"""The page edited between the runs: q-001 and q-002 expect it (their labels stay)."""
RELABELLED = "q-003"
"""The question whose expected documents change between the runs."""


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # the lexical index cache, .goldeneval/cache, lies here
    return Path(shutil.copytree(SAMPLE, tmp_path / "transit"))


def retrieval(sample: Path, *extra: str) -> Result:
    args = ["retrieval", "--set", str(sample / "golden.yaml"), "--retriever", "goldeneval.lexical"]
    return CliRunner().invoke(main, [*args, "--store", str(sample.parent / "s.duckdb"), "--no-progress", *extra])


def edit_page(sample: Path, page: str = EDITED) -> None:
    path = sample / "corpus" / f"{page}.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nPrices are reviewed every January.\n", encoding="utf-8")


def relabel(sample: Path) -> None:
    path = sample / "golden.yaml"
    text = path.read_text(encoding="utf-8")
    old = "expected: [fares/day-ticket-2025-archived]"
    assert text.count(old) == 1
    path.write_text(text.replace(old, "expected: [fares/day-ticket-2025-archived, fares/fare-table-2026]"))


def verdict(result: Result) -> dict[str, object]:
    assert result.exit_code in (ExitCode.OK, ExitCode.NOT_COMPARABLE), result.output
    document: dict[str, object] = json.loads(result.stdout)["verdict"]
    return document


def corpus_ids() -> set[str]:
    return {path.relative_to(SAMPLE / "corpus").with_suffix("").as_posix() for path in SAMPLE.glob("corpus/**/*.md")}


def store_text(path: Path) -> str:
    """Every value of every table of a DuckDB store, as text."""
    with duckdb.connect(str(path), read_only=True) as con:
        tables = [row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return "\n".join(repr(con.execute(f'SELECT * FROM "{table}"').fetchall()) for table in tables)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_document_and_a_changed_label_are_named_and_the_rest_compared(sample: Path) -> None:
    assert retrieval(sample).exit_code == ExitCode.OK
    edit_page(sample)
    relabel(sample)
    result = retrieval(sample, "--format", "json", "--fail-on-regression")
    assert result.exit_code == ExitCode.NOT_COMPARABLE  # still no numeric verdict: the gate fails
    found = verdict(result)
    assert found["state"] == "mismatch"
    reason = str(found["reason"])
    assert f"1 document changed: {EDITED}" in reason
    assert f"labels changed for 1 question: {RELABELLED}" in reason
    assert "2 questions with unchanged labels judge a changed document: q-001, q-002" in reason
    assert "sha256" not in reason  # no shortened hashes
    change = found["benchmark_change"]
    assert isinstance(change, dict)
    assert change["documents"]["changed_ids"] == [EDITED]
    assert change["questions"]["labels_changed_ids"] == [RELABELLED]
    informational = found["informational"]
    assert isinstance(informational, dict)
    assert informational["note"] == INFORMATIONAL and informational["numeric_verdict"] is False
    # 81 questions: q-001 and q-002 (their page changed) and q-003 (its labels) are left out
    assert (informational["unchanged_questions"], informational["left_out_questions"]) == (78, 3)
    assert [rate["rate"] for rate in informational["rates"]] == ["top-1 hit rate", "top-3 hit rate"]
    for rate in informational["rates"]:
        assert rate["questions"] == 78  # every unchanged question scored by both runs
        assert rate["earlier"] == rate["current"]  # the same retriever on the same questions and pages


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_table_of_retrieval_and_of_compare_mark_the_comparison_informational(sample: Path) -> None:
    first = json.loads(retrieval(sample, "--format", "json").stdout)["run"]["id"]
    edit_page(sample)
    relabel(sample)
    table = retrieval(sample).stdout
    assert f"Regression verdict: mismatch: benchmark differs from the previous run {first}: 1 document" in table
    assert f"  {INFORMATIONAL}: the 78 questions whose labels and judged documents did not change (3 left out):" in (
        table
    )
    assert "    top-1 hit rate " in table and " over 78 questions; 0 newly failing" in table
    second = ResultStore(sample.parent / "s.duckdb").list_runs(limit=1)[0].id
    compared = CliRunner().invoke(main, ["compare", first, second, "--store", str(sample.parent / "s.duckdb")])
    assert compared.exit_code == ExitCode.OK, compared.output
    assert f"labels changed for 1 question: {RELABELLED}" in compared.stdout
    assert f"  {INFORMATIONAL}: the 78 questions" in compared.stdout
    assert "Note: the verdict's informational comparison covers the 78 questions" in compared.stdout


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_added_and_removed_documents_are_named_and_a_long_list_is_cut(sample: Path) -> None:
    assert retrieval(sample).exit_code == ExitCode.OK
    pages = sorted((sample / "corpus" / "news").glob("*.md"))
    assert len(pages) > 1
    removed = pages[0].relative_to(sample / "corpus").with_suffix("").as_posix()
    pages[0].unlink()
    (sample / "corpus" / "news" / "a-new-page.md").write_text("# New\nA page added tonight.\n", encoding="utf-8")
    edited = sorted(p for p in corpus_ids() if p.startswith(("timetables/", "service/")))[: LISTED_IDS + 2]
    for page in edited:
        edit_page(sample, page)
    reason = str(verdict(retrieval(sample, "--format", "json"))["reason"])
    assert f"{LISTED_IDS + 2} documents changed: {', '.join(edited[:LISTED_IDS])} and 2 more" in reason
    assert "1 document added: news/a-new-page" in reason
    assert f"1 document removed: {removed}" in reason


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_benchmark_without_a_manifest_says_so_and_falls_back_to_its_revisions(sample: Path) -> None:
    assert retrieval(sample).exit_code == ExitCode.OK
    with duckdb.connect(str(sample.parent / "s.duckdb")) as con:  # as if stored before manifests were kept
        con.execute("DELETE FROM benchmark_manifests")
    edit_page(sample)
    found = verdict(retrieval(sample, "--format", "json"))
    reason = str(found["reason"])
    assert "corpus changed (revision corpus-v1:sha256:" in reason
    assert "the store kept no manifest of the benchmark of the previous run" in reason
    assert "(stored before manifests were kept, or not written), so which documents and labels changed is not " in (
        reason
    )
    assert reason.endswith("is not known; no numeric verdict")
    assert "informational" not in found and "benchmark_change" not in found


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_manifest_is_kept_once_per_benchmark(sample: Path) -> None:
    for _ in range(2):
        assert retrieval(sample).exit_code == ExitCode.OK
    with duckdb.connect(str(sample.parent / "s.duckdb"), read_only=True) as con:
        rows = con.execute(
            "SELECT benchmark_fingerprint, privacy, document_count, question_count FROM benchmark_manifests"
        ).fetchall()
    [run] = ResultStore(sample.parent / "s.duckdb").list_runs(limit=1)
    assert rows == [(run.benchmark_fingerprint, "full", 72, 81)]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retention_deletes_a_manifest_with_the_last_run_of_its_benchmark(sample: Path) -> None:
    from datetime import UTC, datetime, timedelta

    assert retrieval(sample).exit_code == ExitCode.OK
    store = ResultStore(sample.parent / "s.duckdb")
    [run] = store.list_runs()
    assert store.manifest(run.benchmark_fingerprint) is not None
    store.purge(datetime.now(UTC) + timedelta(days=1))
    assert store.manifest(run.benchmark_fingerprint) is None


# --------------------------------------------------------------------------- privacy


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_under_metadata_only_the_reason_counts_and_no_document_id_is_stored(sample: Path) -> None:
    private = ("--privacy", "metadata_only")
    assert retrieval(sample, *private).exit_code == ExitCode.OK
    edit_page(sample)
    relabel(sample)
    found = verdict(retrieval(sample, "--format", "json", *private))
    reason = str(found["reason"])
    assert "corpus changed (72 -> 72 documents; document ids are not kept under metadata_only)" in reason
    assert "labels changed for 1 question;" in reason and RELABELLED not in reason
    assert "2 questions with unchanged labels judge a changed document;" in reason
    informational = found["informational"]
    assert isinstance(informational, dict) and informational["unchanged_questions"] == 78
    change = json.dumps(found["benchmark_change"])
    text = store_text(sample.parent / "s.duckdb")
    for document in corpus_ids():
        assert document not in text, f"document id {document} in the store"
        assert document not in change and document not in reason
    with duckdb.connect(str(sample.parent / "s.duckdb"), read_only=True) as con:
        assert con.execute("SELECT DISTINCT privacy, document_count FROM benchmark_manifests").fetchall() == [
            ("metadata_only", 72)
        ]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_full_run_does_not_name_documents_against_a_metadata_only_run(sample: Path) -> None:
    assert retrieval(sample, "--privacy", "metadata_only").exit_code == ExitCode.OK
    edit_page(sample)
    reason = str(verdict(retrieval(sample, "--format", "json"))["reason"])
    assert EDITED not in reason
    assert "2 questions with unchanged labels judge a changed document;" in reason


def test_a_spooled_metadata_only_run_carries_its_manifest_without_document_ids(sample: Path, tmp_path: Path) -> None:
    from goldeneval.retrieval import pipeline
    from goldeneval.retrieval.spec import RunSpec

    spec = RunSpec(set_ref=str(sample / "golden.yaml"), retriever_id="goldeneval.lexical", series="goldeneval.lexical")
    evaluated = pipeline.evaluate(spec, retriever_progress=False)
    assert evaluated.manifest is not None and evaluated.manifest.documents is not None
    record = evaluated.to_record(PrivacyMode.METADATA_ONLY)
    path = keep_run(record, "r1", StoreLocation(path=tmp_path / "s.duckdb"), tmp_path / "spool")
    text = path.read_text(encoding="utf-8")
    for document in corpus_ids():
        assert document not in text, f"document id {document} in the spool file"
    manifest = read_spooled(path).record.manifest
    assert isinstance(manifest, BenchmarkManifest)
    assert manifest.privacy is PrivacyMode.METADATA_ONLY and manifest.documents is None
    assert manifest.questions == evaluated.manifest.questions
    assert len(manifest.questions) == len(resolve_golden_set(str(sample / "golden.yaml"), ()).questions)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_store_copy_takes_the_manifests_along(sample: Path) -> None:
    assert retrieval(sample).exit_code == ExitCode.OK
    edit_page(sample)
    assert retrieval(sample).exit_code == ExitCode.OK
    source, target = sample.parent / "s.duckdb", sample.parent / "copy.duckdb"
    copied = CliRunner().invoke(main, ["store", "copy", "--from", str(source), "--to", str(target)])
    assert copied.exit_code == ExitCode.OK, copied.output
    [second, first] = ResultStore(target).list_runs()
    compared = CliRunner().invoke(main, ["compare", first.id, second.id, "--store", str(target), "--format", "json"])
    assert f"1 document changed: {EDITED}" in json.loads(compared.stdout)["verdict"]["reason"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("privacy", ["full", "metadata_only"])
def test_every_backend_keeps_the_manifest_and_explains_the_mismatch(
    sample: Path, store_location: StoreLocation, privacy: str
) -> None:
    from tests.store_sql import raw_sql

    store = ["--store", str(store_location.url or store_location.path), "--privacy", privacy]
    assert retrieval(sample, *store).exit_code == ExitCode.OK
    edit_page(sample)
    relabel(sample)
    reason = str(verdict(retrieval(sample, "--format", "json", *store))["reason"])
    assert "labels changed for 1 question" in reason
    rows = raw_sql(store_location, "SELECT privacy, document_count, question_count FROM benchmark_manifests")
    assert sorted(rows) == [(privacy, 72, 81)] * 2
    kept = "\n".join(str(row) for row in raw_sql(store_location, "SELECT manifest FROM benchmark_manifests"))
    if privacy == "full":
        assert f"1 document changed: {EDITED}" in reason and EDITED in kept
    else:
        assert EDITED not in reason and RELABELLED not in reason
        for document in corpus_ids():
            assert document not in kept, f"document id {document} in a metadata_only manifest"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_questions_added_and_removed_are_named(cli_workspace: CliWorkspace) -> None:
    from tests.conftest import FIXED_QUESTIONS

    rankings = {"alpha": ["a"], "beta": ["b"], "gamma": [], "delta": ["d"]}
    assert cli_workspace.evaluate(rankings).exit_code == ExitCode.OK
    added = {"id": "q4", "text": "delta", "form": "MATCH", "expected": ["d"], "hard_class": None}
    cli_workspace.write_set([*FIXED_QUESTIONS[:2], added])
    found = verdict(cli_workspace.evaluate(rankings, "--format", "json"))
    reason = str(found["reason"])
    assert "1 question added: q4; 1 question removed: q3" in reason
    assert "document" not in reason  # the retriever declares its corpus: no document is digested
    informational = found["informational"]
    assert isinstance(informational, dict)
    assert (informational["unchanged_questions"], informational["left_out_questions"]) == (2, 1)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_retriever_that_declares_its_corpus_revision_gets_a_manifest_of_questions_only(
    cli_workspace: CliWorkspace,
) -> None:
    assert cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []}).exit_code == ExitCode.OK
    store = ResultStore(cli_workspace.store)
    [run] = store.list_runs()
    manifest = store.manifest(run.benchmark_fingerprint)
    assert manifest is not None
    assert (manifest.documents, manifest.document_count) == (None, None)
    assert sorted(manifest.questions) == ["q1", "q2", "q3"]
    assert all(judged is None for _, judged in manifest.questions.values())


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_full_run_replaces_the_manifest_a_metadata_only_run_kept(sample: Path) -> None:
    assert retrieval(sample, "--privacy", "metadata_only").exit_code == ExitCode.OK
    store = ResultStore(sample.parent / "s.duckdb")
    [first] = store.list_runs()
    private = store.manifest(first.benchmark_fingerprint)
    assert private is not None and private.documents is None
    assert retrieval(sample).exit_code == ExitCode.OK
    richer = store.manifest(first.benchmark_fingerprint)
    assert richer is not None and richer.privacy is PrivacyMode.FULL
    assert richer.documents is not None and EDITED in richer.documents
    assert retrieval(sample, "--privacy", "metadata_only").exit_code == ExitCode.OK  # never the other way
    assert store.manifest(first.benchmark_fingerprint) == richer


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_declared_corpus_revision_that_changed_is_named_beside_a_changed_label(
    cli_workspace: CliWorkspace,
) -> None:
    from tests.conftest import FIXED_QUESTIONS

    rankings = {"alpha": ["a"], "beta": ["b"], "gamma": []}
    assert cli_workspace.evaluate(rankings).exit_code == ExitCode.OK
    cli_workspace.write_set([{**FIXED_QUESTIONS[0], "expected": ["a", "c"]}, *FIXED_QUESTIONS[1:]])
    found = verdict(cli_workspace.evaluate(rankings, "--format", "json", corpus="rev-2"))
    assert "corpus changed (revision rev-1 -> rev-2); labels changed for 1 question: q1" in str(found["reason"])
    assert "informational" not in found  # no corpus at hand: which judged documents changed is not known


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_under_metadata_only_a_label_change_alone_does_not_say_the_corpus_changed(sample: Path) -> None:
    assert retrieval(sample, "--privacy", "metadata_only").exit_code == ExitCode.OK
    relabel(sample)
    reason = str(verdict(retrieval(sample, "--format", "json", "--privacy", "metadata_only"))["reason"])
    assert reason.endswith(": labels changed for 1 question; no numeric verdict"), reason
