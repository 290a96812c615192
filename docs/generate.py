"""The generated parts of the reference pages in docs/reference/, read from the code.

Each page holds a cog block that calls one function here and prints what it returns:

    <!-- [[[cog import generate; cog.out(generate.cli_reference()) ]]] -->
    ...generated text...
    <!-- [[[end]]] -->

Regenerate every page with ``bash scripts/docs.sh`` (``cog -r -I docs`` on each page);
``tests/test_docs_generated.py`` runs ``cog --check`` on each page and fails when one drifted.

Everything comes from public entry points: the click group ``goldeneval.cli.main``, the metric
registry ``goldeneval.retrieval.metrics``, a real store created in a temporary folder and read
back with DuckDB's ``information_schema``, real runs of the bundled sets (``transit-sample``
against ``goldeneval.lexical``, ``goldeneval.smoke`` against ``goldeneval.extractive``), and
Dagster's ``Definitions`` API over ``pipelines.definitions``.  Two tables are not exported yet
and are read where they are (``METRIC_ALIASES`` / ``_ALIASES`` of the metric registry, checked
through ``parse_metric``; ``MIGRATIONS`` / ``_MIGRATIONS`` of ``goldeneval.store.schema``, to
say which schema version added each column).  Only what a person has to say about a field (what it means) is
written here, in the description tables below; a field the code has and the table does not
describe, or a description of a field the code no longer has, fails the generation, so the
pages cannot silently fall behind.  Values that change from run to run (ids, timestamps,
latencies, versions) never reach a page, so regenerating an unchanged tree changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "cli_reference",
    "dagster_reference",
    "json_output_reference",
    "metrics_reference",
    "parquet_reference",
    "store_reference",
    "suite_reference",
]

TERMINAL_WIDTH = 100
"""Help text is wrapped at this width whatever the terminal, so the page is the same everywhere."""
SAMPLE_SET = "transit-sample"
SAMPLE_RETRIEVER = "goldeneval.lexical"
SAMPLE_PROMPT_SET = "goldeneval.smoke"
SAMPLE_MODEL = "goldeneval.extractive"
REGENERATE = "bash scripts/docs.sh"


class UndocumentedError(RuntimeError):
    """The code has a field this module does not describe, or the other way round."""


# --------------------------------------------------------------------------- shared helpers


@contextmanager
def _clean_environment() -> Iterator[None]:
    """No GOLDENEVAL_* variable of the caller's shell (a store, a privacy mode, a sets path)
    may change what a page says."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("GOLDENEVAL_")}
    for name in saved:
        del os.environ[name]
    os.environ["GOLDENEVAL_NO_SUPERVISOR"] = "1"
    try:
        yield
    finally:
        del os.environ["GOLDENEVAL_NO_SUPERVISOR"]
        os.environ.update(saved)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _check_described(kind: str, found: Sequence[str], described: Mapping[str, object]) -> None:
    missing = [name for name in found if name not in described]
    stale = [name for name in described if name not in found]
    problems = []
    if missing:
        problems.append(f"the code has {kind} that docs/generate.py does not describe: {missing}")
    if stale:
        problems.append(f"docs/generate.py describes {kind} the code no longer has: {stale}")
    if problems:
        raise UndocumentedError("; ".join(problems) + f". Edit the descriptions, then run {REGENERATE}.")


def _cli(args: Sequence[str]) -> str:
    """Run ``goldeneval ARGS`` in this process (click's runner) and return its stdout."""
    from click.testing import CliRunner

    from goldeneval.cli import main

    with _clean_environment():
        result = CliRunner().invoke(main, list(args), prog_name="goldeneval", terminal_width=TERMINAL_WIDTH)
    if result.exit_code != 0:
        raise RuntimeError(f"goldeneval {' '.join(args)} exited {result.exit_code}:\n{result.output}")
    return result.stdout


# --------------------------------------------------------------------------- cli.md


def _command_paths() -> list[list[str]]:
    """Every command and subcommand of ``goldeneval``, in the order ``--help`` lists them."""
    import click

    from goldeneval.cli import main

    paths: list[list[str]] = []

    def walk(group: click.Group, prefix: list[str]) -> None:
        context = click.Context(group, info_name=" ".join(["goldeneval", *prefix]))
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            if command is None or command.hidden:
                continue
            paths.append([*prefix, name])
            if isinstance(command, click.Group):
                walk(command, [*prefix, name])

    walk(main, [])
    return paths


def cli_reference() -> str:
    """``goldeneval --help`` and every command's and subcommand's ``--help``."""
    paths = _command_paths()
    out = ["Commands: " + ", ".join(f"[`{' '.join(p)}`](#goldeneval-{'-'.join(p)})" for p in paths) + ".\n"]
    for path in [[], *paths]:
        title = " ".join(["goldeneval", *path])
        out.append(f"\n## {title}\n\n```text\n{_cli([*path, '--help']).rstrip()}\n```\n")
    return "".join(out)


# --------------------------------------------------------------------------- suite.md


def _type_words(annotation: Any) -> str:
    """A field's type as a reader of the suite file meets it."""
    import enum
    import types
    import typing

    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_words(args[0])
    if isinstance(annotation, types.UnionType) or origin is typing.Union:
        kept = [arg for arg in args if arg is not type(None)]
        words = " or ".join(_type_words(arg) for arg in kept)
        return f"{words} or null" if len(kept) < len(args) else words
    if origin is typing.Literal:
        return " | ".join(f"`{value}`" for value in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(f"`{member.value}`" for member in annotation)
    if origin in (list, tuple):
        return f"list of {_type_words(args[0])}"
    if origin is dict:
        return f"mapping of {_type_words(args[0])} to {_type_words(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section"
    return {str: "text", int: "integer", float: "number", bool: "true | false"}.get(annotation, str(annotation))


def _default_words(info: Any) -> str:
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if value is None or value == {} or value == [] or value == () or isinstance(value, BaseModel):
        return "" if value is not None else "null"
    if isinstance(value, tuple | list):
        return ", ".join(f"`{item}`" for item in value)
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return "" if value is PydanticUndefined else f"`{getattr(value, 'value', value)}`"


def suite_reference() -> str:
    """Every key of the suite file (``goldeneval.suite.SuiteConfig``, then each declared run kind's
    own section, ``goldeneval.suite.suite_config_model``), section by section: its type, default,
    the flag that sets the same thing and its description (each from the field)."""
    import typing

    from pydantic import BaseModel

    from goldeneval.core.settings import flag_of
    from goldeneval.suite import SuiteConfig, suite_config_model

    rows: list[list[str]] = []
    missing: list[str] = []

    def key_of(model: type[BaseModel], name: str, prefix: str) -> None:
        info = model.model_fields[name]
        key = prefix + name
        if not info.description:
            missing.append(key)
        flag = flag_of(info)
        rows.append(
            [
                f"`{key}`",
                _type_words(info.annotation),
                _default_words(info),
                f"`{flag.option(name)}`" if flag is not None else "",
                info.description or "",
            ]
        )
        if typing.get_origin(info.annotation) is dict:
            value = typing.get_args(info.annotation)[1]
            if isinstance(value, type) and issubclass(value, BaseModel):
                walk(value, key + ".<name>.")
            return
        for arg in typing.get_args(info.annotation) or (info.annotation,):  # a section, or a section or null
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                walk(arg, key + ".")

    def walk(model: type[BaseModel], prefix: str) -> None:
        own = [name for name in vars(model).get("__annotations__", {}) if name in model.model_fields]
        for name in [*own, *(name for name in model.model_fields if name not in own)]:  # the model's own keys first
            key_of(model, name, prefix)

    walk(SuiteConfig, "")
    declared = suite_config_model()
    for name in declared.model_fields:  # the sections of the run kinds that have their own
        if name not in SuiteConfig.model_fields:
            key_of(declared, name, "")
    if missing:
        raise UndocumentedError(f"suite keys without a description (Field(description=...)): {missing}")
    return _table(["key", "type", "default", "flag", "what it sets"], rows)


# --------------------------------------------------------------------------- metrics.md


def metrics_reference() -> str:
    """The metric registry: one row per metric family, then the defaults and the aliases."""
    from goldeneval.retrieval import metrics
    from goldeneval.retrieval.spec import RunSpec

    rows = [
        [
            f"`{kind.key}@k`" if kind.takes_cutoff else f"`{kind.key}`",
            kind.label,
            "graded" if kind.graded else "binary",
            kind.definition,
            f"`{kind.trec_eval}`",
            kind.citation,
        ]
        for kind in metrics.METRIC_KINDS.values()
    ]
    out = [
        "<!-- metrics-table: one row per entry of goldeneval.retrieval.metrics.METRIC_KINDS, in its order -->\n",
        _table(["name", "metric", "relevance", "one question's value", "equals trec_eval", "reference"], rows),
        "<!-- end metrics-table -->\n",
    ]
    # The aliases the parser accepts beside the names above (its table is not exported, so
    # each one is read through the public parser: only what parse_metric accepts is listed).
    aliases = getattr(metrics, "METRIC_ALIASES", None) or getattr(metrics, "_ALIASES", {})
    alias_rows = []
    for alias, key in sorted(aliases.items()):
        kind = metrics.METRIC_KINDS[key]
        example = f"{alias}@10" if kind.takes_cutoff else alias
        parsed = metrics.parse_metric(example)
        alias_rows.append([f"`{example}`", f"`{parsed.name}`"])
    hit_cutoffs = ",".join(str(k) for k in RunSpec.model_fields["hit_cutoffs"].default)
    default_metrics = ",".join(RunSpec.model_fields["metrics"].default)
    out += [
        "\n## Defaults and limits\n\n",
        _table(
            ["setting", "value"],
            [
                ["`--hit-k` (suite: `hit_cutoffs`)", f"`{hit_cutoffs}`"],
                ["`--metrics` (suite: `metrics`)", f"`{default_metrics}`"],
                ["cutoff k", f"a whole number from 1 to {metrics.MAX_CUTOFF}"],
                ["`--relevance-level` (suite: `relevance_level`)", f"`{metrics.DEFAULT_RELEVANCE_LEVEL}`"],
            ],
        ),
    ]
    if alias_rows:
        out += [
            "\n## Aliases\n\nNames are case-insensitive; these spellings are read as the metric beside them:\n\n",
            _table(["written", "read as"], alias_rows),
        ]
    return "".join(out)


# --------------------------------------------------------------------------- store.md

STORE_COLUMNS: dict[str, dict[str, str]] = {
    "runs": {
        "id": "The run id (32 hex digits). Commands that take a run id accept any unique prefix.",
        "created_at": "When the run started, UTC.",
        "set_id": "The golden set (or golden prompt set) the run measured.",
        "model": "The series name: `--name`, default the retriever id (for prompt runs the model id); "
        "in the nightly job the retriever's name in `goldeneval.yaml`.",
        "grader": "`retrieval_hit_rate` for retrieval runs; `deterministic`, `llm_judge`, "
        "`answer_deterministic` or `answer_llm_judge` for prompt and answer runs.",
        "pass_rate": "Retrieval: the top-1 hit rate. Prompts: the share of graded prompts that passed. "
        "NULL when nothing was scored.",
        "mean_score": "Retrieval: the top-3 hit rate. Prompts: the mean score. NULL when nothing was scored.",
        "question_count": "Questions (or prompts) in the run.",
        "scored_count": "Questions scored (not errored).",
        "error_count": "Questions that errored or timed out.",
        "status": "`complete`, or `incomplete` when a question errored.",
        "details": "The typed, versioned record of the run (JSON): for retrieval runs "
        "`goldeneval.retrieval.details.RetrievalDetails`, for prompt and answer runs "
        "`goldeneval.prompts.details.PromptDetails`; see [below](#details).",
        "corpus_revision": "Provenance: SHA-256 revision of the corpus; NULL = unknown.",
        "model_revision": "Provenance: the embedding or chat model's revision, or `not_applicable`; NULL = unknown.",
        "chunking_identity": "Provenance: how documents were chunked, or `not_applicable`; NULL = unknown.",
        "pipeline_identity": "Provenance: the retriever's algorithm and parameters; NULL = unknown.",
        "execution_revision": "Provenance: the software versions that ran (for reproduction only, never compared).",
        "label_digest": "Digest of the set's labels ([label-digest.md](../label-digest.md)); computed, never supplied.",
        "benchmark_fingerprint": "f(corpus revision, label digest, scoring protocol); NULL when a part is unknown.",
        "variant_fingerprint": "f(model, chunking, pipeline); NULL when a part is unknown.",
        "privacy": "`full` or `metadata_only`; NULL for runs stored before privacy was recorded.",
        "retriever_id": "The retriever behind the series name; NULL for runs stored before schema 3.",
        "tables_run_id": "The Dagster run whose Parquet tables the run was built from; NULL for CLI runs.",
    },
    "run_slices": {
        "run_id": "The run (`runs.id`).",
        "slice_kind": "`form`, `hard_class` or, for answer runs, `retrieval`.",
        "slice_value": "The form (`MATCH`, `GAP`), the hard class, or `hit`/`miss`.",
        "question_count": "Questions in the slice.",
        "scored_count": "Questions of the slice that were scored.",
        "pass_rate": "The slice's top-1 hit rate (prompts: pass rate).",
        "mean_score": "The slice's top-3 hit rate (prompts: mean score).",
    },
    "acceptances": {
        "run_id": "The run a person accepted (`runs.id`): from then on it is its series' accepted level "
        "(`baseline: accepted`, the nightly's default).",
        "accepted_at": "When it was accepted, UTC.",
        "accepted_by": "Who accepted it: `goldeneval accept --by`, default the user running the command.",
        "reason": "Why, as the person wrote it (`--reason`); never empty.",
    },
    "benchmark_manifests": {
        "benchmark_fingerprint": "The benchmark (`runs.benchmark_fingerprint`) this manifest describes; one row per "
        "benchmark, written with the first run that measured it.",
        "created_at": "When it was kept, UTC.",
        "privacy": "What it holds: `full` (document ids with their digests) or `metadata_only` (no document id: "
        "the number of documents only).",
        "document_count": "Documents of the corpus the run measured; null when that corpus was not at hand.",
        "question_count": "Questions of the set.",
        "manifest": "JSON (`manifest-v1`): `documents` (document id -> digest of title and text; null under "
        "`metadata_only` or without the corpus) and `questions` (question id -> [labels digest, judged "
        "documents digest]). Digests are 128-bit SHA-256 prefixes and spell no text.",
    },
    "schema_version": {
        "version": "A migration that has been applied to this store.",
        "description": "What it added.",
        "applied_at": "When it was applied to this store.",
    },
}


def _columns_by_migration() -> dict[tuple[str, str], int]:
    """The schema version that added each column, by applying the store's migrations one at a
    time to an empty in-memory DuckDB (a migration only adds, so each one's new columns are
    the difference), in the order the migrations created them."""
    import duckdb

    from goldeneval.store import schema

    migrations = getattr(schema, "MIGRATIONS", None) or schema._MIGRATIONS
    con = duckdb.connect(":memory:")
    added: dict[tuple[str, str], int] = {}
    for version, _description, statements in migrations:
        for statement in statements:
            con.execute(statement)
            for table, column in con.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'main' ORDER BY ordinal_position"
            ).fetchall():
                added.setdefault((table, column), version)
    con.close()
    return added


def store_reference() -> str:
    """The tables and columns of a store created by this goldeneval, read back from DuckDB."""
    import duckdb

    from goldeneval.store import SCHEMA_VERSION, ResultStore
    from goldeneval.store.postgres import POSTGRES

    added = _columns_by_migration()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.duckdb"
        ResultStore(path)
        con = duckdb.connect(str(path), read_only=True)
        columns = con.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall()
        keys = con.execute(
            "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
            "WHERE constraint_type = 'PRIMARY KEY' ORDER BY table_name"
        ).fetchall()
        checks = con.execute(
            "SELECT table_name, constraint_text FROM duckdb_constraints() "
            "WHERE constraint_type = 'CHECK' ORDER BY table_name, constraint_text"
        ).fetchall()
        indexes = con.execute("SELECT table_name, sql FROM duckdb_indexes() ORDER BY table_name, index_name").fetchall()
        migrations = con.execute("SELECT version, description FROM schema_version ORDER BY version").fetchall()
        con.close()

    # The tables the migrations made, in the order they made them; then the bookkeeping.
    tables = list(dict.fromkeys([*(table for table, _ in added), *(table for table, *_ in columns)]))
    _check_described("tables", tables, STORE_COLUMNS)
    out = [f"Schema version {SCHEMA_VERSION}. Tables: " + ", ".join(f"[`{t}`](#{t})" for t in tables)]
    out.append(".\n")
    primary = {table: list(names) for table, names in keys}
    for table in tables:
        described = STORE_COLUMNS[table]
        found = [column for t, column, *_ in columns if t == table]
        _check_described(f"columns of {table}", found, described)
        rows = []
        for t, column, data_type, nullable in columns:
            if t != table:
                continue
            since = added.get((table, column))
            rows.append(
                [
                    f"`{column}`",
                    f"`{data_type}`",
                    f"`{POSTGRES.ddl(data_type)}`",
                    "yes" if nullable == "YES" else "no",
                    "" if since is None else str(since),
                    described[column],
                ]
            )
        out.append(f"\n## {table}\n\n")
        key = primary.get(table)
        if key:
            out.append(f"Primary key: ({', '.join(f'`{c}`' for c in key)}).")
        table_checks = [text for t, text in checks if t == table]
        if table_checks:
            out.append(" Checks: " + "; ".join(f"`{text}`" for text in table_checks) + ".")
        table_indexes = [sql for t, sql in indexes if t == table and sql]
        if table_indexes:
            out.append(" Indexes: " + "; ".join(f"`{sql.rstrip(';')}`" for sql in table_indexes) + ".")
        out.append("\n\n")
        out.append(_table(["column", "DuckDB type", "PostgreSQL type", "nullable", "since schema", "meaning"], rows))
    out.append("\n## Migrations\n\nApplied in order, each once, recorded in `schema_version`:\n\n")
    out.append(_table(["version", "what it adds"], [[str(v), d] for v, d in migrations]))
    return "".join(out)


# --------------------------------------------------------------------------- Parquet tables

PARQUET_COLUMNS: dict[str, dict[str, str]] = {
    "golden_question_sets": {
        "question_id": "The question's id.",
        "form": "`MATCH` or `GAP`.",
        "hard_class": "The hard class, or null.",
        "expected_count": "How many documents are expected (0: a no-answer question).",
        "form_derived": "Whether the form was derived (BEIR sets), not labelled.",
        "text": "The question text.",
        "expected": "The expected document ids, sorted.",
        "answer_gist": "The set's answer gist, or null.",
    },
    "retriever_rankings": {
        "question_id": "The question's id.",
        "rank": "1-based rank of the returned id in the raw over-fetched ranking.",
        "returned_id": "The id the retriever returned (a document or chunk id).",
        "document_id": "Its document id (the prefix before the chunk separator).",
        "is_target": "Whether that document is expected for the question.",
        "latency_ms": "The question's latency.",
    },
    "question_hits": {
        "question_id": "The question's id.",
        "form": "`MATCH` or `GAP`.",
        "hard_class": "The hard class, or null.",
        "status": "`ok` or `error`.",
        "top1_hit": "Top-1 hit; null when the question errored.",
        "top3_hit": "Top-3 hit; null when the question errored.",
        "latency_ms": "The question's latency.",
        "metrics": "Every reported rank metric of the question (empty for a no-answer question).",
        "judged": "Whether the question has rank metrics (false for a no-answer question: no expected document).",
        "depth": "Distinct documents the ranking reached; null when errored.",
        "error": "The error; in `metadata_only` only the exception's class (a message can quote content).",
        "top_documents": "The distinct top-3 documents: what the top-3 verdict looked at.",
        "documents": "The distinct documents, best first, to the measurement depth.",
    },
}
STAMP_COLUMNS = {
    "run_id": "The Dagster run that wrote the file.",
    "evaluated_at": "When the run started, UTC.",
}


def _sample_run() -> Any:
    """A real evaluation of the bundled sample with the lexical retriever (nothing stored)."""
    from goldeneval.retrieval.pipeline import evaluate
    from goldeneval.retrieval.spec import RunSpec

    with tempfile.TemporaryDirectory() as folder, _clean_environment():
        spec = RunSpec(
            set_ref=SAMPLE_SET,
            retriever_id=SAMPLE_RETRIEVER,
            series="sample",
            cache_dir=Path(folder) / "cache",
        )
        return evaluate(spec)


def parquet_reference() -> str:
    """The columns of the three Parquet tables the Dagster assets write, in both privacy modes."""
    from datetime import UTC, datetime

    from goldeneval.core.privacy import PrivacyMode
    from goldeneval.retrieval.pipeline import load_golden_set
    from goldeneval.retrieval.spec import RunSpec
    from goldeneval.retrieval.tables import golden_set_table, hits_table, rankings_table

    run = _sample_run()
    with _clean_environment():
        golden = load_golden_set(RunSpec(set_ref=SAMPLE_SET, retriever_id=SAMPLE_RETRIEVER, series="sample"))
    started = datetime(2026, 1, 1, tzinfo=UTC)

    def tables(privacy: PrivacyMode) -> dict[str, Any]:
        return {
            "golden_question_sets": golden_set_table(golden, privacy, "RUN", started),
            "retriever_rankings": rankings_table(run, privacy, "RUN").to_table(),
            "question_hits": hits_table(run, privacy, "RUN"),
        }

    full, private = tables(PrivacyMode.FULL), tables(PrivacyMode.METADATA_ONLY)
    _check_described("Parquet tables", list(full), PARQUET_COLUMNS)
    out = []
    for name, table in full.items():
        kept = set(private[name].column_names)
        described = {**PARQUET_COLUMNS[name], **STAMP_COLUMNS}
        _check_described(f"columns of the Parquet table {name}", table.column_names, described)
        rows = [
            [
                f"`{field.name}`",
                f"`{field.type}`",
                "yes" if field.name in kept else "**no**",
                described[field.name],
            ]
            for field in table.schema
        ]
        out.append(f"\n### {name}\n\n")
        out.append(_table(["column", "Arrow type", "in `metadata_only`", "meaning"], rows))
    return "".join(out)


# --------------------------------------------------------------------------- json-output.md

JSON_FIELDS: dict[str, str] = {
    "format_version": "1; bumped on any incompatible change of this document.",
    "store": "The result store the run was written to (a PostgreSQL URL with its password as `***`).",
    "run": "The stored run, as `goldeneval runs --format json` lists it.",
    "run.id": "The stored run id.",
    "run.created_at": "Start time, ISO 8601, UTC.",
    "run.set_id": "The golden set: first part of the series key.",
    "run.retriever": "The series name (`--name`, default the retriever id); stored as `runs.model`.",
    "run.retriever_id": "The retriever id that produced the rankings (null for runs stored before schema 3).",
    "run.grader": "`retrieval_hit_rate`: the series key's third part.",
    "run.status": "`complete`, or `incomplete` when a question errored.",
    "run.top1_rate": "Top-1 hit rate over the scored questions (null when none scored).",
    "run.top3_rate": "Top-3 hit rate over the scored questions (null when none scored).",
    "run.questions": "Questions in the run.",
    "run.scored": "Questions scored.",
    "run.errors": "Questions that errored or timed out.",
    "run.provenance": "The declared provenance fields; null = unknown.",
    "run.provenance.corpus_revision": "Revision of the corpus.",
    "run.provenance.model_revision": "Revision of the model, or `not_applicable`.",
    "run.provenance.chunking_identity": "Chunking, or `not_applicable`.",
    "run.provenance.pipeline_identity": "The retriever's algorithm and parameters.",
    "run.provenance.execution_revision": "The software versions that ran.",
    "run.label_digest": "Identity of the set's labels (null = unknown).",
    "run.benchmark_fingerprint": "Identity of what was measured: corpus, labels, protocol (null = unknown).",
    "run.variant_fingerprint": "Identity of what measured it: model, chunking, pipeline (null = unknown).",
    "run.privacy": "`full` or `metadata_only` (null for runs stored before privacy was recorded).",
    "run.accepted": "Null, or who accepted the run as its series' level (`goldeneval accept`): an object with "
    "`by`, `at` (ISO 8601, UTC) and `reason`. A run just stored is never accepted yet.",
    "protocol": "The scoring protocol.",
    "protocol.revision": "`retrieval-hit-rate/v1`.",
    "protocol.top_k": "3: top-3 is the widest gated hit.",
    "protocol.overfetch_multiplier": "10: the retriever is asked for top_k x 10 raw ids.",
    "protocol.hit_cutoffs": "Cutoffs of the reported hit@k metrics (`--hit-k`).",
    "measurement": "What the rank metrics measured and what they left out.",
    "measurement.metrics": "One entry per reported metric.",
    "measurement.metrics[].name": "The metric, e.g. `ndcg@10`.",
    "measurement.metrics[].value": "Its mean over the questions it is defined for (null when none).",
    "measurement.metrics[].graded": "Whether it uses the grades (nDCG) rather than the relevance level.",
    "measurement.metrics[].definition": "One question's value, in words (the registry's definition).",
    "measurement.metrics[].trec_eval": "The trec_eval measure it equals.",
    "measurement.metrics[].mean_over": "Which questions `value` is the mean of, and how trec_eval's mean differs.",
    "measurement.depth": "Measurement depth: the deepest cutoff.",
    "measurement.relevance_level": "Grade from which the binary metrics count a document relevant.",
    "measurement.average_over": "`all-judged` when `--average-over all-judged` asked for trec_eval's mean "
    "(absent at the default, `with-relevant`).",
    "measurement.judged_only": "True when `--judged-only` computed every rank metric on condensed lists "
    "(trec_eval -J); absent otherwise.",
    "measurement.questions": "Questions in the rank metrics.",
    "measurement.no_answer": "Questions left out of the rank metrics because they expect no document.",
    "measurement.no_answer.count": "How many.",
    "measurement.no_answer.ids": "Their ids.",
    "measurement.unjudged": "Questions the set's source left without a relevant judgement (BEIR).",
    "measurement.unjudged.count": "How many.",
    "measurement.unjudged.ids": "Their ids.",
    "measurement.short_rankings": "Questions whose ranking ended before the depth (missing ranks count as misses).",
    "measurement.short_rankings.count": "How many.",
    "measurement.short_rankings.ids": "Their ids.",
    "judged": "Label coverage (sets with judged negatives only; absent otherwise): the share of each "
    "ranking's first k documents that carry a judgment.",
    "judged.cutoffs": "The cutoffs k it is reported at: 3 and every reported cutoff.",
    "judged.overall": "judged@k over the scored questions.",
    "judged.overall.<judged@k>": "The share at k.",
    "judged.by_form": "The same per question form.",
    "judged.by_form.<form>": "judged@k of the form's questions.",
    "judged.by_form.<form>.<judged@k>": "The share at k.",
    "judged.questions": "Questions averaged over (scored, with a judgment and a non-empty ranking).",
    "judged.definition": "judged@k, in words (ir_measures' Judged@k).",
    "judged.bounds": "Bounds under unjudged documents, per rank metric (absent on condensed lists).",
    "judged.bounds.<metric>": "The metric's mean at both ends.",
    "judged.bounds.<metric>.unjudged_not_relevant": "With every unjudged document of its top k not relevant: "
    "the metric as reported.",
    "judged.bounds.<metric>.unjudged_relevant": "With every unjudged document of its top k relevant.",
    "judged.bounds_definition": "The bounds, in words.",
    "measurement.short_rankings.shortest": "The shortest such ranking, in documents (null when none).",
    "questions": "One entry per question, in the set's order.",
    "questions[].id": "The question's id.",
    "questions[].form": "`MATCH` or `GAP`.",
    "questions[].hard_class": "The hard class, or null.",
    "questions[].documents": "Distinct returned document ids, best first, to the measurement depth.",
    "questions[].depth": "Distinct documents reached; null when errored.",
    "questions[].top1_hit": "Top-1 hit; null when errored.",
    "questions[].top3_hit": "Top-3 hit; null when errored.",
    "questions[].latency_ms": "The question's latency (a batched question's share of its batch).",
    "questions[].status": "`ok`, `error`, or `unjudged` (under `all-judged`: a query its source judged only "
    "with grade 0, never asked, scoring 0 on every metric).",
    "questions[].error": "Why the question errored (in `metadata_only` only the exception's class); else null.",
    "questions[].metrics": "Every reported metric of the question; empty for a question without targets.",
    "questions[].metrics.<metric>": "The value of that metric for this question.",
    "questions[].judged_at": "Its judged@k (sets with judged negatives only).",
    "questions[].judged_at.<judged@k>": "The share of its first k documents that carry a judgment.",
    "questions[].unjudged_ranks": "Which of its top-3 documents nobody judged: ranks, never ids.",
    "questions[].unjudged_relevant": "Each rank metric with every unjudged document of its top k judged "
    "relevant: the other end of its bounds (sets with judged negatives only).",
    "questions[].unjudged_relevant.<metric>": "That value.",
    "aggregates": "The protocol's rates.",
    "aggregates.overall": "Over the whole run.",
    "aggregates.overall.questions": "Questions.",
    "aggregates.overall.scored": "Scored questions.",
    "aggregates.overall.errors": "Errored questions.",
    "aggregates.overall.top1_hits": "Top-1 hits.",
    "aggregates.overall.top3_hits": "Top-3 hits.",
    "aggregates.overall.top1_rate": "Top-1 hit rate (null when none scored).",
    "aggregates.overall.top3_rate": "Top-3 hit rate (null when none scored).",
    "aggregates.by_form": "The same counts and rates per form.",
    "aggregates.by_form.<form>": "One form: the keys of `aggregates.overall`.",
    "aggregates.by_form.<form>.questions": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.scored": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.errors": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.top1_hits": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.top3_hits": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.top1_rate": "As in `aggregates.overall`.",
    "aggregates.by_form.<form>.top3_rate": "As in `aggregates.overall`.",
    "aggregates.by_hard_class": "The same per hard class (`(none)` for questions without one).",
    "aggregates.by_hard_class.<hard class>": "One hard class: the keys of `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.questions": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.scored": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.errors": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.top1_hits": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.top3_hits": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.top1_rate": "As in `aggregates.overall`.",
    "aggregates.by_hard_class.<hard class>.top3_rate": "As in `aggregates.overall`.",
    "aggregates.metrics": "Mean of each rank metric over the scored questions it is defined for.",
    "aggregates.metrics.<metric>": "That mean.",
    "verdict": "The comparison with the earlier run of the series.",
    "verdict.status": "`baseline`, `pass`, `regression`, `mismatch` or `unknown`.",
    "verdict.state": "`baseline`, `comparable`, `mismatch` or `unknown`.",
    "verdict.previous_run_id": "The run compared against (null for a baseline).",
    "verdict.reason": "A sentence explaining the verdict.",
    "verdict.treatment_change": "For a comparable pair: how model, chunking, pipeline or retriever differ "
    "(null if they do not).",
    "verdict.changes": "One entry per gated rate (top-1, top-3).",
    "verdict.changes[].rate": "The rate, e.g. `top-1 hit rate`.",
    "verdict.changes[].column": "Its store column: `pass_rate` or `mean_score`.",
    "verdict.changes[].previous": "The earlier run's value.",
    "verdict.changes[].current": "This run's value.",
    "verdict.changes[].drop": "previous - current.",
    "verdict.changes[].threshold": "The largest allowed drop.",
    "verdict.changes[].p_value": "Exact McNemar p-value of the change (null where none is computed).",
    "verdict.changes[].regressed": "Whether it regressed (a drop past the threshold, and significant with `--max-p`).",
    "verdict.slice_changes": "The same per gated slice (`--slice-drop`), when both runs scored enough questions in it.",
    "verdict.slice_changes[].rate": "The slice and rate, e.g. `form GAP: top-1 hit rate`.",
    "verdict.slice_changes[].column": "As in `verdict.changes`.",
    "verdict.slice_changes[].previous": "As in `verdict.changes`.",
    "verdict.slice_changes[].current": "As in `verdict.changes`.",
    "verdict.slice_changes[].drop": "As in `verdict.changes`.",
    "verdict.slice_changes[].threshold": "As in `verdict.changes`.",
    "verdict.slice_changes[].p_value": "As in `verdict.changes`.",
    "verdict.slice_changes[].regressed": "As in `verdict.changes`.",
    "verdict.paired": "Per rate, the paired comparison of the questions both runs scored.",
    "verdict.paired[].rate": "The rate.",
    "verdict.paired[].questions": "Questions compared.",
    "verdict.paired[].newly_failing": "Ids of the questions that newly fail.",
    "verdict.paired[].newly_passing": "Ids of the questions that newly pass.",
    "verdict.paired[].mcnemar_p": "Exact McNemar p-value (two-sided binomial on the discordant questions).",
    "verdict.paired[].bootstrap_95": "[low, high]: paired bootstrap 95% interval of the change (seed 42).",
    "verdict.label_coverage": "For a comparable pair whose run measured judged@k: how much of the top-3 "
    "nobody judged, in this run and the earlier one.",
    "verdict.label_coverage.judged_at_3": "This run's judged@3.",
    "verdict.label_coverage.baseline_judged_at_3": "The earlier run's (null when it did not measure it).",
    "verdict.label_coverage.newly_unjudged_questions": "Questions whose top-3 hold more unjudged documents "
    "than the earlier run's did.",
    "verdict.label_coverage.newly_failing_unjudged": "Newly failing questions (top-3) whose top-3 hold "
    "documents nobody judged (empty in `metadata_only`).",
    "verdict.label_coverage.newly_failing_unjudged.<question id>": "Those documents' ids.",
    "verdict.label_coverage.hint": "How to judge what the new retriever found (null when nothing is newly unjudged).",
    "verdict.label_coverage.overlapping_bounds": "Rank metrics whose means differ but whose bounds under "
    "unjudged documents overlap: the labels cannot decide them.",
    "verdict.label_coverage.overlapping_bounds.<metric>": "The metric's bounds in both runs.",
    "verdict.label_coverage.overlapping_bounds.<metric>.baseline": "[unjudged not relevant, unjudged relevant] "
    "in the earlier run.",
    "verdict.label_coverage.overlapping_bounds.<metric>.candidate": "The same in this run.",
    "verdict.labels_incomplete": "For a baseline under `--min-judged` whose judged@3 is below it (or not "
    "measured): stored as the baseline, it fails the gate (`--fail-on-regression` exits 6).",
    "verdict.labels_incomplete.judged_at_3": "The baseline's judged@3 (null when not measured).",
    "verdict.labels_incomplete.min_judged": "The threshold it falls short of.",
    "verdict.labels_incomplete.reason": "The same in words (also at the end of `verdict.reason`).",
    "verdict.benchmark_change": "For a `mismatch` whose benchmarks both have a manifest in the store: what "
    "changed (docs/guide/provenance-and-comparison.md#what-a-mismatch-says). Absent otherwise.",
    "verdict.benchmark_change.ids_shown": "Whether the reason names ids: both runs are `full`.",
    "verdict.benchmark_change.documents": "The corpus's documents in both benchmarks.",
    "verdict.benchmark_change.documents.earlier_count": "Documents of the earlier benchmark (null: its corpus "
    "was not at hand).",
    "verdict.benchmark_change.documents.current_count": "Documents of this run's benchmark.",
    "verdict.benchmark_change.documents.known": "Whether both manifests hold document ids, so added, removed "
    "and changed are known (false under `metadata_only`).",
    "verdict.benchmark_change.documents.added": "Documents only in this run's corpus (null when not known).",
    "verdict.benchmark_change.documents.removed": "Documents only in the earlier corpus (null when not known).",
    "verdict.benchmark_change.documents.changed": "Documents whose title or text changed (null when not known).",
    "verdict.benchmark_change.documents.added_ids": "Their ids (null unless `ids_shown`).",
    "verdict.benchmark_change.documents.removed_ids": "Their ids (null unless `ids_shown`).",
    "verdict.benchmark_change.documents.changed_ids": "Their ids (null unless `ids_shown`).",
    "verdict.benchmark_change.questions": "The set's questions in both benchmarks.",
    "verdict.benchmark_change.questions.labels_changed": "Questions in both whose labels changed.",
    "verdict.benchmark_change.questions.added": "Questions only in this run's set.",
    "verdict.benchmark_change.questions.removed": "Questions only in the earlier set.",
    "verdict.benchmark_change.questions.judged_documents_changed": "Questions whose labels held but a document "
    "they judge changed (or left the corpus).",
    "verdict.benchmark_change.questions.unchanged": "Questions whose labels and judged documents did not change: "
    "what `informational` compares.",
    "verdict.benchmark_change.questions.labels_changed_ids": "Their ids (question ids: kept in every mode).",
    "verdict.benchmark_change.questions.added_ids": "Their ids.",
    "verdict.benchmark_change.questions.removed_ids": "Their ids.",
    "verdict.benchmark_change.questions.judged_documents_changed_ids": "Their ids.",
    "verdict.informational": "For a `mismatch` with unchanged questions (same scoring protocol): both runs' "
    "rates on those questions, informational, no numeric verdict: the state stays `mismatch` and the gate "
    "fails. Absent otherwise.",
    "verdict.informational.note": '`"informational, no numeric verdict"`.',
    "verdict.informational.numeric_verdict": "Always false.",
    "verdict.informational.unchanged_questions": "Questions of this run's set whose labels and judged "
    "documents did not change.",
    "verdict.informational.left_out_questions": "This run's other questions (changed or new).",
    "verdict.informational.rates": "Per binary rate (top-1, top-3), paired by question.",
    "verdict.informational.rates[].rate": "The rate.",
    "verdict.informational.rates[].questions": "Unchanged questions both runs scored.",
    "verdict.informational.rates[].earlier": "The earlier run's rate on them.",
    "verdict.informational.rates[].current": "This run's rate on them.",
    "verdict.informational.rates[].change": "current - earlier.",
    "verdict.informational.rates[].newly_failing": "Ids of the questions that newly fail.",
    "verdict.informational.rates[].newly_passing": "Ids of the questions that newly pass.",
    "verdict.informational.rates[].mcnemar_p": "Exact McNemar p-value.",
    "verdict.informational.rates[].bootstrap_95": "[low, high]: paired bootstrap 95% interval of the change.",
    "warnings": "What to know about the input, e.g. expected document ids that are not in the corpus "
    "(with `--strict` that is exit 3 instead; in `metadata_only` the ids are counted, not named).",
}
JSON_MAPS = {
    "questions[].metrics": "<metric>",
    "aggregates.metrics": "<metric>",
    "aggregates.by_form": "<form>",
    "aggregates.by_hard_class": "<hard class>",
    "judged.overall": "<judged@k>",
    "judged.by_form": "<form>",
    "judged.by_form.<form>": "<judged@k>",
    "questions[].judged_at": "<judged@k>",
    "questions[].unjudged_relevant": "<metric>",
    "judged.bounds": "<metric>",
    "verdict.label_coverage.overlapping_bounds": "<metric>",
    "verdict.label_coverage.newly_failing_unjudged": "<question id>",
}
"""Objects keyed by data (a metric name, a form), not by a fixed field name."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _json_paths(
    value: Any, path: str, found: dict[str, set[str]], maps: Mapping[str, str], *, item: bool = False
) -> None:
    """Record the JSON type of every key path under ``value``; the keys of the objects in a
    list are recorded under ``<list>[].<key>``."""
    kind = _json_type(value)
    if isinstance(value, list):
        items = {_json_type(element) for element in value}
        kind = "array of " + " or ".join(sorted(items)) if items else "array"
    if path and not item:
        found.setdefault(path, set()).add(kind)
    if isinstance(value, dict):
        for key, child in value.items():
            name = maps.get(path, key)
            _json_paths(child, f"{path}.{name}" if path else name, found, maps)
    elif isinstance(value, list):
        for element in value:
            if isinstance(element, dict):
                _json_paths(element, f"{path}[]", found, maps, item=True)


PROMPT_JSON_FIELDS: dict[str, str] = {
    "format_version": "1; bumped on any incompatible change of this document.",
    "kind": "`prompts` (`answers` inside a `goldeneval answers` document).",
    "store": "The result store the run was written to (a PostgreSQL URL with its password as `***`).",
    "run": "The stored run.",
    "run.id": "The stored run id.",
    "run.created_at": "Start time, ISO 8601, UTC.",
    "run.set_id": "The golden prompt set.",
    "run.model": "The series name (`--name`, default the model id; `openai:<served model>` for "
    "`goldeneval.openai`); stored as `runs.model`.",
    "run.model_id": "The model id behind the series name.",
    "run.retriever_id": "Answer runs: the retriever that found the context; else null.",
    "run.grader": "`deterministic` or `llm_judge` (`answer_deterministic` / `answer_llm_judge` for answer runs).",
    "run.requested_grader": "The grader asked for, when it was unknown and `deterministic` stood in; else null.",
    "run.status": "`complete`, or `incomplete` when a prompt errored.",
    "run.pass_rate": "Share of the graded prompts that passed (null when none was graded).",
    "run.mean_score": "Mean score of the graded prompts (null when none was graded).",
    "run.prompts": "Prompts in the run.",
    "run.graded": "Prompts graded.",
    "run.errors": "Prompts whose model call or grading failed.",
    "run.failed": "Graded prompts answered wrongly (a missed abstention included); over-abstentions are apart.",
    "run.over_abstentions": "Answer runs: answerable questions the model said it could not answer.",
    "run.under_abstentions": "Answer runs: questions no document answers that the model answered (also in failed).",
    "run.unstable": "Prompts whose judge samples straddle the pass threshold (graded, not a pass).",
    "run.measures": "Each judge measure of `--judge-rubrics` and its mean over the graded prompts (null when none "
    "had a value); empty without measures. Per prompt they are `prompts[].measures` (each value) and "
    "`prompts[].measure_verdicts` (the judge's score of each unit), in the summary `aggregates.measures.<name>` "
    "(`questions`, `mean`); those keys are absent when the run asked for no measure. Never mixed into "
    "`pass_rate` or `mean_score`.",
    "run.provenance": "The declared provenance fields; null = unknown.",
    "run.provenance.corpus_revision": "Revision of the corpus the model read, if any.",
    "run.provenance.model_revision": "The model's name and declared revision, or `(mutable alias)` without one.",
    "run.provenance.chunking_identity": "Chunking, or `not_applicable`.",
    "run.provenance.pipeline_identity": "The model's endpoint and settings, or its algorithm.",
    "run.provenance.execution_revision": "The software versions that ran.",
    "run.label_digest": "The prompt set's digest (`prompts-v1:sha256:...`).",
    "run.benchmark_fingerprint": "f(label digest, grading protocol with the grader's identity) (null = unknown).",
    "run.variant_fingerprint": "f(model, chunking, pipeline) (null = unknown).",
    "run.privacy": "`full` or `metadata_only`.",
    "run.retrieval_run_id": "Answer runs: the retrieval run stored beside this one; else null.",
    "grading": "How the answers were graded.",
    "grading.protocol": "The grading protocol with the grader's identity: part of the benchmark fingerprint.",
    "grading.grader_identity": "The grader, its version and settings (the judge model's revision, samples).",
    "grading.pass_threshold": "Score at which a judged or reference-graded answer passes (`--pass-threshold`).",
    "grading.judge_samples": "`--judge-samples` for `llm_judge`; else null.",
    "prompts": "One entry per prompt, in the set's order.",
    "prompts[].id": "The prompt's id.",
    "prompts[].status": "`ok`; `unstable` when the judge samples straddle the pass threshold (graded, not a "
    "pass); `error` when the model call or the grading failed.",
    "prompts[].stage": "Where an error happened: `retrieval`, `model` or `grader`; else null.",
    "prompts[].passed": "Whether the prompt passed; null when errored or unstable.",
    "prompts[].outcome": "`pass`, `fail`, `abstained` (an unanswerable question, rightly), `missed_abstention`, "
    "`over_abstention` (an answerable one, wrongly) or `unstable`; null when errored.",
    "prompts[].score": "Its score in [0, 1]; null when errored.",
    "prompts[].latency_ms": "Wall-clock time of the model call.",
    "prompts[].error": "Why it errored (in `metadata_only` only the exception's class); else null.",
    "prompts[].tags": "The prompt's tags.",
    "prompts[].answer": "The model's answer.",
    "prompts[].reason": "How the answer was graded, when a judge or the reference graded it: the judge's reason "
    "(the first sample's) or the reference grading (the facts missing or wrong, or the token F1).",
    "prompts[].assertions": "One entry per assertion of the prompt.",
    "prompts[].assertions[].type": "`exact`, `contains`, `regex` or `json_schema`.",
    "prompts[].assertions[].passed": "Whether it passed (after `negate`).",
    "prompts[].assertions[].weight": "Its weight in the score.",
    "prompts[].assertions[].negate": "Whether it passes when the check fails.",
    "prompts[].assertions[].message": "What was expected and found (it quotes the set and the answer).",
    "prompts[].samples": "`llm_judge`: the judge's scores, one per successful sample.",
    "prompts[].spread": "`llm_judge`: largest minus smallest sample; else null.",
    "prompts[].unstable": "Whether the judge samples straddle the pass threshold.",
    "prompts[].retrieval_hit": "Answer runs: whether retrieval found an expected document (top-3); else null.",
    "prompts[].form": "Answer runs: the question's form; else null.",
    "prompts[].hard_class": "Answer runs: the question's hard class; else null.",
    "prompts[].supported_share": "Answer runs: faithfulness without a judge, the share of the answer's facts "
    "(numbers, times, dates, entities) the retrieved passages state; null when the answer states none, and for "
    "prompt runs.",
    "aggregates": "Counts and rates.",
    "aggregates.overall": "Over the whole run.",
    "aggregates.overall.prompts": "Prompts.",
    "aggregates.overall.graded": "Graded prompts.",
    "aggregates.overall.errors": "Errored prompts.",
    "aggregates.overall.passed": "Prompts that passed.",
    "aggregates.overall.failed": "Graded prompts answered wrongly (a missed abstention included).",
    "aggregates.overall.over_abstentions": "Answer runs: abstentions on questions a document answers.",
    "aggregates.overall.under_abstentions": "Answer runs: answers to questions no document answers (also in failed).",
    "aggregates.overall.unstable": "Unstable judge verdicts (graded, not a pass).",
    "aggregates.overall.pass_rate": "passed / graded (null when none was graded).",
    "aggregates.overall.mean_score": "Mean score of the graded prompts (null when none was graded).",
    "aggregates.unstable": "Prompts reported unstable.",
    "aggregates.mean_latency_ms": "Mean latency of the model calls.",
    "aggregates.by_retrieval": "Answer runs: the keys of `aggregates.overall` per `hit` and `miss`; else empty.",
    "aggregates.by_form": "Answer runs: the keys of `aggregates.overall` per form; else empty.",
    "aggregates.by_hard_class": "Answer runs: the keys of `aggregates.overall` per hard class; else empty.",
    "verdict": "The comparison with the earlier run of the series, as for retrieval runs, with the rates named "
    "`pass rate` and `mean score`.",
    "verdict.changes": "One entry per gated rate (pass rate, mean score).",
    "verdict.changes[].rate": "The rate: `pass rate` or `mean score`.",
    "verdict.paired[].rate": "The rate (`pass rate`: McNemar on the per-prompt pass/fail).",
    "notices": "What to know about the run, e.g. an unknown grader that fell back to `deterministic`.",
    "usage": "The run's model calls by role (`model`, `judge`), stored in the details; absent when no call "
    "went through the call policy.",
    "usage.<role>": "One role's calls.",
    "usage.<role>.calls": "Calls made (each may have made several HTTP attempts), failed ones included.",
    "usage.<role>.cached": "Calls answered from the response cache: no request, no tokens.",
    "usage.<role>.reported": "Calls whose answer reported token usage.",
    "usage.<role>.prompt_tokens": "Prompt tokens reported (null when no call reported usage).",
    "usage.<role>.completion_tokens": "Completion tokens reported (null when no call reported usage).",
    "usage.<role>.total_tokens": "Their sum (null when no call reported usage).",
    "usage.<role>.cost": "Cost of the reported tokens at the model's `input_price` and `output_price` per "
    "million; null without prices or reported usage.",
}
PROMPT_JSON_MAPS = {
    "usage": "<role>",
    "aggregates.by_retrieval": "<hit or miss>",
    "aggregates.by_form": "<form>",
    "aggregates.by_hard_class": "<hard class>",
}
ANSWER_JSON_FIELDS: dict[str, str] = {
    "format_version": "1; bumped on any incompatible change of this document.",
    "store": "The result store both runs were written to.",
    "retrieval": "The retrieval run: a `goldeneval retrieval --format json` document.",
    "answers": "The answer run: a `goldeneval prompts --format json` document with `kind: answers` and the keys below.",
    "gate": "The gate decision of `--fail-on-regression`: the answer run's, or the retrieval run's when "
    "the answer run passes.",
    "answers.prompts[].documents": "The context documents the model answered from, best first.",
    "answers.prompts[].unsupported_facts": "The answer's facts no retrieved passage states (absent in "
    "`metadata_only`).",
    "answers.aggregates.by_retrieval.<hit or miss>": "Prompts whose question retrieval hit or missed (top-3).",
    "answers.aggregates.by_form.<form>": "Prompts of one question form.",
    "answers.aggregates.by_hard_class.<hard class>": "Prompts of one hard class.",
}


COMPARE_RUN_FIELDS: dict[str, str] = {
    "": "A run of the comparison (`earlier`: null when the run has no earlier one).",
    "id": "The stored run id.",
    "created_at": "Start time, ISO 8601, UTC.",
    "set_id": "The golden set (or prompt set).",
    "series": "The series name (stored as `runs.model`).",
    "retriever_id": "The retriever behind the series (null for prompt runs).",
    "grader": "`retrieval_hit_rate`, or a prompt or answer grader.",
    "status": "`complete` or `incomplete`.",
    "pass_rate": "Retrieval: the top-1 hit rate; prompts and answers: the pass rate.",
    "mean_score": "Retrieval: the top-3 hit rate; prompts and answers: the mean score.",
    "questions": "Questions (prompts) in the run.",
    "benchmark_fingerprint": "What decides comparability (null = unknown).",
    "variant_fingerprint": "f(model, chunking, pipeline) (null = unknown).",
    "privacy": "`full` or `metadata_only`: the comparison shows no more than the stricter run kept.",
}
COMPARE_SIDE_FIELDS: dict[str, str] = {
    "": "The question in that run; null when the run did not have it.",
    "status": "`ok`, `error` (then an `error` key says why; its class only in `metadata_only`), or (answers) "
    "`unstable`.",
    "outcomes": "Per binary rate (`rates`): the question's outcome, null for an error.",
    "outcomes.<rate>": "Hit (retrieval) or passed (answers).",
    "documents": "Its first 5 documents, best first; null when withheld (`metadata_only`).",
    "first_relevant_rank": "Rank of the first expected document among every stored document; null when none "
    "was found or the set is not at hand.",
    "depth": "Distinct documents the ranking reached (retrieval).",
    "unjudged_ranks": "Ranks of the top-3 documents nobody judged (sets with judged negatives); else null.",
    "relevant_ranks": "Ranks of the shown documents that are expected; null when the set is not at hand.",
    "answer": "Answer runs: the model's answer (absent for retrieval).",
    "score": "Answer runs: the grade in [0, 1].",
    "reason": "Answer runs: how the answer was graded (the judge's reason, the reference grading).",
}
COMPARE_SLICE_FIELDS: dict[str, str] = {
    "": "The slice in that run; null when the run had no question in it.",
    "questions": "Questions in the slice.",
    "scored": "Questions of the slice that were scored.",
    "pass_rate": "The slice's top-1 hit rate (pass rate).",
    "mean_score": "The slice's top-3 hit rate (mean score).",
}


def _under(prefixes: Sequence[str], fields: Mapping[str, str]) -> dict[str, str]:
    """``fields`` described under each prefix (``""`` for the prefix's own object)."""
    return {f"{prefix}{'.' + key if key else ''}": text for prefix in prefixes for key, text in fields.items()}


COMPARE_JSON_FIELDS: dict[str, str] = {
    "format_version": "1; bumped on any incompatible change of this document.",
    "kind": "`retrieval`, `prompts` or `answers`.",
    **_under(("earlier", "current"), COMPARE_RUN_FIELDS),
    "verdict": "The gate's verdict of the pair, as in a `goldeneval retrieval` document: `goldeneval compare "
    "RUN_A RUN_B` judges RUN_B against RUN_A; with one run, the run its `--against` chooses.",
    "informational": "True when there is no numeric verdict (`mismatch`, `unknown`) but the questions are "
    "compared all the same, for information.",
    "privacy": "What the comparison shows: the strictest of `--privacy` and both runs' modes.",
    "notes": "What is not shown, and why (no set at hand, `metadata_only`, labels changed since).",
    "rates": "The binary rates each question's `outcomes` hold, in order.",
    "measures": "Every rate and rank metric of both runs.",
    "measures[].name": "The rate or metric (`top-1 hit rate`, `ndcg@10`, `pass rate`, ...).",
    "measures[].earlier": "Its value in the earlier run (null when absent).",
    "measures[].current": "Its value in the current run.",
    "measures[].change": "current - earlier (null when either is absent).",
    "measures[].gated": "Whether the gate reads it (the two stored rates).",
    "paired": "Per binary rate, the paired comparison: the verdict's own, or, without a numeric verdict, the "
    "same computed for information.",
    "paired[].rate": "The rate.",
    "paired[].questions": "Questions both runs scored.",
    "paired[].newly_failing": "Ids that passed before and fail now.",
    "paired[].newly_passing": "Ids that failed before and pass now.",
    "paired[].mcnemar_p": "Exact McNemar p-value of the change.",
    "paired[].bootstrap_95": "Paired bootstrap 95% interval of the change in rate.",
    "slices": "Every slice (form, hard class; answers: retrieval hit or miss) of either run.",
    "slices[].kind": "`form`, `hard_class` or `retrieval`.",
    "slices[].value": "The form, the hard class, `hit` or `miss`.",
    **_under(("slices[].earlier", "slices[].current"), COMPARE_SLICE_FIELDS),
    "slices[].paired": "Per binary rate, the paired comparison of the slice's questions (the current run's "
    "members), with the keys of `paired[]`: the slice's McNemar p and bootstrap interval.",
    "slices[].paired[].rate": "The rate.",
    "slices[].paired[].questions": "Questions of the slice both runs scored.",
    "slices[].paired[].newly_failing": "Ids of the slice's questions that newly fail.",
    "slices[].paired[].newly_passing": "Ids of the slice's questions that newly pass.",
    "slices[].paired[].mcnemar_p": "Exact McNemar p-value of the slice's change.",
    "slices[].paired[].bootstrap_95": "Paired bootstrap 95% interval of the slice's change in rate.",
    "questions": "One entry per question of the current run, in its order, then the earlier run's others.",
    "questions[].id": "The question's id (kept in every privacy mode).",
    "questions[].text": "Its text, from the set at hand; null when the set is not at hand or in `metadata_only`.",
    "questions[].form": "MATCH or GAP (answers: null for prompt runs).",
    "questions[].hard_class": "Its hard class, or null.",
    "questions[].flip": "`newly_failing`, `newly_passing`, `unchanged`, `only_in_current` or `only_in_earlier`.",
    "questions[].flipped_rates": "The rates whose outcome flipped.",
    "questions[].informational": "Compared without a numeric verdict (see `informational`).",
    "questions[].rank_change": "The first relevant document's rank now minus before (negative: it moved up); "
    "null when neither run found one.",
    "questions[].expected": "What should have come back: its expected documents in the set at hand (titles in "
    "`documents`); null when the set is not at hand or in `metadata_only`.",
    **_under(("questions[].earlier", "questions[].current"), COMPARE_SIDE_FIELDS),
    "documents": "Title and snippet of every document shown, where the corpus is at hand.",
    "documents.<document id>": "One document.",
    "documents.<document id>.title": "Its title.",
    "documents.<document id>.snippet": "The start of its text.",
    "trend": "Every stored run of the current run's series, oldest first.",
    "trend[].run_id": "The run.",
    "trend[].created_at": "When it started.",
    "trend[].status": "`complete` or `incomplete`.",
    "trend[].pass_rate": "Its stored pass rate (top-1 hit rate).",
    "trend[].mean_score": "Its stored mean score (top-3 hit rate).",
    "trend[].benchmark_fingerprint": "Its benchmark fingerprint.",
    "trend[].break_before": "The benchmark changed since the run before (or is unknown): a trend line breaks here.",
}
COMPARE_JSON_MAPS = {
    "documents": "<document id>",
    "questions[].earlier.outcomes": "<rate>",
    "questions[].current.outcomes": "<rate>",
}


def _compare_section(documents: Mapping[str, tuple[list[Any], list[Any]]]) -> str:
    full, private = documents["compare"]
    found = _key_paths(full, COMPARE_JSON_MAPS)
    borrowed = {path: text for path, text in JSON_FIELDS.items() if path.startswith("verdict.") and path in found}
    described = {**borrowed, **{path: text for path, text in COMPARE_JSON_FIELDS.items() if path in found}}
    unused = sorted(set(COMPARE_JSON_FIELDS) - set(found))
    if unused:
        raise UndocumentedError(f"goldeneval compare --format json: described but never printed: {unused}")
    return "".join(
        [
            "\n## `goldeneval compare --format json`\n\n",
            "One JSON object: the comparison of two stored runs (from retrieval, prompt and answer runs of the "
            "bundled sets); the `verdict` keys are those of a retrieval document.\n\n",
            _key_table(full, private, described, COMPARE_JSON_MAPS),
        ]
    )


def _types(kinds: set[str]) -> str:
    """``array of string, null``; a bare ``array`` (an empty list) only when no run filled it."""
    if any(kind.startswith("array of ") for kind in kinds):
        kinds = kinds - {"array"}
    order = ["object", "array", "string", "integer", "number", "boolean", "null"]
    return ", ".join(sorted(kinds, key=lambda k: (order.index(k.split()[0]), k)))


def _cli_json(args: Sequence[str]) -> Any:
    return json.loads(_cli([*args, "--format", "json", "--no-progress"]))


def _sample_documents(folder: Path) -> dict[str, tuple[list[Any], list[Any]]]:
    """Each JSON document the commands print, from real runs, in ``full`` and in
    ``metadata_only``: for ``retrieval`` and ``prompts`` a compared run (retrieval: another k1
    under the same series name, slices gated) and its baseline; for ``answers`` one run.  The
    compared run comes first: it has every key, so keys are listed in the document's order."""
    store = ["--store", str(folder / "results.duckdb"), "--cache-dir", str(folder / "cache")]
    retrieval = ["retrieval", "--set", SAMPLE_SET, "--retriever", SAMPLE_RETRIEVER, *store]
    prompts = ["prompts", "--set", SAMPLE_PROMPT_SET, "--model", SAMPLE_MODEL, *store]
    answers = ["answers", "--set", SAMPLE_SET, "--retriever", SAMPLE_RETRIEVER, "--model", SAMPLE_MODEL, *store]
    judged = ["retrieval", "--set", str(_judged_sample_set(folder)), "--retriever", SAMPLE_RETRIEVER, *store]
    judged += ["--average-over", "all-judged"]
    documents: dict[str, tuple[list[Any], list[Any]]] = {}
    for mode in ("full", "metadata_only"):
        privacy = ["--privacy", mode, "--name"]
        first = _cli_json([*retrieval, *privacy, f"sample-{mode}"])
        second = _cli_json([*retrieval, *privacy, f"sample-{mode}", "--option", "k1=1.2", "--slice-drop", "*=0.2"])
        # a baseline short of labels: its verdict says so (labels_incomplete)
        judged_first = _cli_json([*judged, *privacy, f"judged-{mode}", "--min-judged", "0.99"])
        changed = ["--option", "k1=0.1", "--option", "b=0.1", "--slice-drop", "*=0.2"]  # top-3s nobody judged
        judged_second = _cli_json([*judged, *privacy, f"judged-{mode}", *changed])
        condensed = _cli_json([*judged, *privacy, f"condensed-{mode}", "--judged-only"])
        # a mismatch the manifests explain: a page edited and a label changed in between
        for changed in (False, True):
            sample_set = ["--set", str(_mismatch_sample_set(folder, changed=changed))]
            mismatch = _cli_json(
                ["retrieval", *sample_set, "--retriever", SAMPLE_RETRIEVER, *store, *privacy, f"mismatch-{mode}"]
            )
        # the compared run of the judged set first: it holds every key a retrieval document can
        documents.setdefault("retrieval", ([], []))[mode != "full"].extend(
            [judged_second, mismatch, second, first, judged_first, condensed]
        )
        first = _cli_json([*prompts, *privacy, f"prompts-{mode}"])
        second = _cli_json([*prompts, *privacy, f"prompts-{mode}"])
        documents.setdefault("prompts", ([], []))[mode != "full"].extend([second, first])
        documents.setdefault("answers", ([], []))[mode != "full"].append(_cli_json([*answers, *privacy[:2]]))
    runs = json.loads(_cli(["runs", "--store", str(folder / "results.duckdb"), "--format", "json"]))
    documents["runs"] = ([runs], [])
    compared: tuple[list[Any], list[Any]] = ([], [])
    for mode in ("full", "metadata_only"):
        for document in (documents["retrieval"][mode != "full"][2], documents["prompts"][mode != "full"][0]):
            compare = ["compare", document["run"]["id"], "--store", str(folder / "results.duckdb")]
            compared[mode != "full"].append(json.loads(_cli([*compare, "--format", "json"])))
    answer_runs = [entry["id"] for entry in runs if entry["grader"] == "answer_deterministic"]
    compared[0].append(
        json.loads(
            _cli(["compare", *answer_runs[1::-1], "--store", str(folder / "results.duckdb"), "--format", "json"])
        )
    )
    documents["compare"] = compared
    return documents


def _judged_sample_set(folder: Path) -> Path:
    """The bundled sample set with judged negatives (every third question judges one more
    document not relevant), so that the documents hold what only such sets report: judged@k,
    each question's unjudged ranks, a verdict's label coverage."""
    import yaml

    from goldeneval.retrieval.sets import resolve_golden_set

    sample = resolve_golden_set(SAMPLE_SET)
    questions = []
    for number, question in enumerate(sample.questions):
        entry = question.model_dump(mode="json", exclude_defaults=True)
        if number % 3 == 0:
            others = [doc for doc in JUDGED_NEGATIVES if doc not in question.expected]
            entry["not_relevant"] = others[:1]
        questions.append(entry)
    path = folder / "judged-sample.yaml"
    path.write_text(yaml.safe_dump({"id": "judged-sample", "corpus": str(sample.corpus), "questions": questions}))
    return path


def _mismatch_sample_set(folder: Path, *, changed: bool) -> Path:
    """A copy of the bundled sample set over a copy of its corpus; ``changed``: one page of the
    corpus edited (:data:`MISMATCH_PAGE`) and one question relabelled, so a run of it after
    one of the unchanged copy is a mismatch whose verdict names both and compares the rest."""
    import shutil

    import yaml

    from goldeneval.retrieval.sets import resolve_golden_set

    sample = resolve_golden_set(SAMPLE_SET)
    corpus = folder / ("mismatch-corpus-changed" if changed else "mismatch-corpus")
    if not corpus.exists():
        assert sample.corpus is not None
        shutil.copytree(sample.corpus, corpus)
        if changed:
            page = corpus / f"{MISMATCH_PAGE}.md"
            page.write_text(page.read_text(encoding="utf-8") + "\nPrices are reviewed every January.\n")
    questions = [question.model_dump(mode="json", exclude_defaults=True) for question in sample.questions]
    if changed:
        questions[2]["expected"] = sorted({*questions[2]["expected"], "fares/fare-table-2026"})
    path = folder / f"mismatch-sample{'-changed' if changed else ''}.yaml"
    path.write_text(yaml.safe_dump({"id": "mismatch-sample", "corpus": str(corpus), "questions": questions}))
    return path


MISMATCH_PAGE = "fares/day-ticket"
"""The page of the sample corpus the mismatch sample edits."""
JUDGED_NEGATIVES = ("fares/fare-table-2026", "rights/missed-connection-taxi")
"""Documents of the sample corpus the judged copy of the sample set marks not relevant."""


def _key_paths(documents: Sequence[Any], maps: Mapping[str, str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for document in documents:
        _json_paths(document, "", found, maps)
    return found


def _key_table(
    full: Sequence[Any], private: Sequence[Any], described: Mapping[str, str], maps: Mapping[str, str]
) -> str:
    found = _key_paths(full, maps)
    kept = _key_paths(private, maps)
    _check_described("JSON keys", list(found), described)
    rows = [[f"`{path}`", _types(kinds), _kept(path, found, kept), described[path]] for path, kinds in found.items()]
    return _table(["key", "types", "in `metadata_only`", "meaning"], rows)


def _kept(path: str, found: Mapping[str, set[str]], kept: Mapping[str, set[str]]) -> str:
    """``yes``; ``**no**`` when ``metadata_only`` leaves the key out; ``**null**`` when it keeps
    the key but never a value that ``full`` had."""
    if path not in kept:
        return "**no**"
    return "**null**" if kept[path] == {"null"} and found[path] != {"null"} else "yes"


def json_output_reference() -> str:
    """Every key of the JSON documents the commands print, with the JSON types the sample runs
    gave it and whether ``metadata_only`` keeps it."""
    with tempfile.TemporaryDirectory() as folder:
        documents = _sample_documents(Path(folder))
    out = []
    full, private = documents["retrieval"]
    out += [
        "## `goldeneval retrieval --format json`\n\n",
        "One JSON object on stdout, keys in the document's order.\n\n",
        _key_table(full, private, JSON_FIELDS, JSON_MAPS),
    ]
    run_keys = list(full[0]["run"])
    (runs,), _ = documents["runs"]
    listed = list(dict.fromkeys(key for entry in runs for key in entry))
    if listed != run_keys:
        raise UndocumentedError(f"goldeneval runs --format json lists {listed}, not the keys of `run`: {run_keys}")
    out += [
        "\n## `goldeneval runs --format json`\n\n",
        "A JSON array of runs, newest first; each is the `run` object of `goldeneval retrieval` above, with "
        "the keys " + ", ".join(f"`{key}`" for key in run_keys) + ".\n",
    ]
    full, private = documents["prompts"]
    found = _key_paths(full, PROMPT_JSON_MAPS)
    borrowed = {path: text for path, text in JSON_FIELDS.items() if path.startswith("verdict.") and path in found}
    out += [
        "\n## `goldeneval prompts --format json`\n\n",
        f"One JSON object, from runs of the bundled prompt set `{SAMPLE_PROMPT_SET}` against `{SAMPLE_MODEL}`; "
        "the `verdict` keys are those of a retrieval document.\n\n",
        _key_table(full, private, {**borrowed, **PROMPT_JSON_FIELDS}, PROMPT_JSON_MAPS),
    ]
    out += ["\n## `goldeneval answers --format json`\n\n", _answers_section(documents)]
    out.append(_compare_section(documents))
    return "".join(out)


def _answers_section(documents: Mapping[str, tuple[list[Any], list[Any]]]) -> str:
    """The answers document: its own keys, then what its ``answers`` part adds to a prompts document."""
    full, private = documents["answers"]
    top = list(dict.fromkeys(key for document in full for key in document))
    retrieval_keys = {key for document in documents["retrieval"][0] for key in document}
    for document in full:
        if not set(document["retrieval"]) <= retrieval_keys:
            raise UndocumentedError(f"`retrieval` of goldeneval answers has {list(document['retrieval'])}")
    prompt_paths = _key_paths(documents["prompts"][0], PROMPT_JSON_MAPS)
    answer_maps = {f"answers.{path}": name for path, name in PROMPT_JSON_MAPS.items()}
    wrapped = [{"answers": document["answers"]} for document in full]
    found = _key_paths(wrapped, answer_maps)
    kept = _key_paths([{"answers": document["answers"]} for document in private], answer_maps)
    group = re.compile(r"^answers\.aggregates\.by_[a-z_]+\.<[^>]+>\.")
    added = [
        path
        for path in found
        if path != "answers" and path.removeprefix("answers.") not in prompt_paths and not group.match(path)
    ]
    group_keys = sorted({path.split(".")[-1] for path in found if group.match(path)})
    prompt_rate = [path.split(".")[-1] for path in prompt_paths if path.startswith("aggregates.overall.")]
    if group_keys and sorted(group_keys) != sorted(prompt_rate):
        raise UndocumentedError(f"answer groups have {group_keys}, not the keys of aggregates.overall {prompt_rate}")
    from goldeneval.core.gate import GateDecision

    own = {path: text for path, text in ANSWER_JSON_FIELDS.items() if "." not in path}
    own["gate"] += " One of " + ", ".join(f"`{decision.value}`" for decision in GateDecision) + "."
    _check_described("keys of the goldeneval answers document", top, own)
    extra = {path: text for path, text in ANSWER_JSON_FIELDS.items() if path.startswith("answers.")}
    _check_described("keys that answer documents add", added, extra)
    rows = [
        [f"`{key}`", _types({_json_type(full[0][key])}), "yes" if key in private[0] else "**no**", own[key]]
        for key in top
    ]
    rows += [[f"`{path}`", _types(found[path]), _kept(path, found, kept), extra[path]] for path in added]
    return (
        f"One JSON object, from a run of `{SAMPLE_SET}` against `{SAMPLE_RETRIEVER}` and `{SAMPLE_MODEL}`. "
        "Its `answers` part has the keys of a prompts document and those listed below it; each group of "
        "`aggregates.by_retrieval`, `by_form` and `by_hard_class` has the keys of `aggregates.overall`.\n\n"
        + _table(["key", "types", "in `metadata_only`", "meaning"], rows)
    )


# --------------------------------------------------------------------------- dagster.md


def dagster_reference() -> str:
    """The Dagster code location ``pipelines.definitions`` built from the shipped
    ``goldeneval.yaml``: its assets, checks, jobs, schedules and sensors, read through
    Dagster's public ``Definitions`` API."""
    import warnings

    with _clean_environment(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Dagster's beta and preview warnings say nothing about the page
        from pipelines.definitions import defs

        specs = {spec.key.to_user_string(): spec for spec in defs.resolve_all_asset_specs()}
        graph = defs.resolve_asset_graph()
        check_specs = [graph.get_check_spec(key) for key in graph.asset_check_keys]
        repository = defs.get_repository_def()
        jobs = sorted((job for job in repository.get_all_jobs() if not job.name.startswith("__")), key=lambda j: j.name)
        schedules = sorted(repository.schedule_defs, key=lambda s: s.name)
        sensors = sorted(repository.sensor_defs, key=lambda s: s.name)

    def upstream(name: str) -> list[str]:
        return sorted(dep.asset_key.to_user_string() for dep in specs[name].deps)

    ordered: list[str] = []  # upstream first, ties by group and name: the order data flows in
    while len(ordered) < len(specs):
        ready = [n for n in specs if n not in ordered and all(u in ordered for u in upstream(n))]
        ordered.append(min(ready, key=lambda n: (specs[n].group_name or "", n)))
    check_specs.sort(key=lambda spec: (ordered.index(spec.asset_key.to_user_string()), spec.name))
    asset_rows = []
    for name in ordered:
        spec = specs[name]
        partitions = spec.partitions_def
        dimensions = getattr(partitions, "partition_dimension_names", None)
        asset_rows.append(
            [
                f"`{name}`",
                f"`{spec.group_name}`",
                ", ".join(f"`{u}`" for u in upstream(name)) or "—",
                " x ".join(f"`{d}`" for d in sorted(dimensions)) if dimensions else "—",
                spec.description or "",
            ]
        )
    return "".join(
        [
            "## Assets\n\n",
            _table(["asset", "group", "reads", "partitioned by", "what it holds"], asset_rows),
            "\n## Asset checks\n\n",
            _table(
                ["check", "on asset", "blocking", "passes when"],
                [
                    [
                        f"`{spec.name}`",
                        f"`{spec.asset_key.to_user_string()}`",
                        "yes" if spec.blocking else "no",
                        spec.description or "",
                    ]
                    for spec in check_specs
                ],
            ),
            "\n## Jobs\n\n",
            _table(["job", "what it does"], [[f"`{job.name}`", job.description or ""] for job in jobs]),
            "\n## Schedules\n\n",
            _table(
                ["schedule", "job", "cron", "time zone", "on by default", "what it does"],
                [
                    [
                        f"`{s.name}`",
                        f"`{s.job_name}`",
                        f"`{s.cron_schedule}`",
                        s.execution_timezone or "UTC",
                        "yes" if s.default_status.value == "RUNNING" else "no",
                        s.description or "",
                    ]
                    for s in schedules
                ],
            ),
            "\n## Sensors\n\n",
            _table(
                ["sensor", "launches", "on by default", "what it does"],
                [
                    [
                        f"`{s.name}`",
                        ", ".join(f"`{target.job_name}`" for target in s.targets) or "no job (it sends alerts)",
                        "yes" if s.default_status.value == "RUNNING" else "no",
                        s.description or "",
                    ]
                    for s in sensors
                ],
            ),
        ]
    )
