"""The evaluation assets: golden sets -> rankings -> per-question hits -> stored summary.

Thin on purpose: each body loads its input, calls goldeneval, writes a table or a run and
attaches metadata.  The rules live in goldeneval.suite, goldeneval.tables and the store.
"""

import dataclasses
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from assets.checks import partitioned_check
from assets.metadata import rates, table_schema, text_or_unknown
from assets.partitions import cell
from goldeneval.privacy import PrivacyMode
from goldeneval.provenance import label_digest
from goldeneval.retrievers.base import document_id_mapper
from goldeneval.scoring import NO_HARD_CLASS
from goldeneval.suite import evaluate_cell
from goldeneval.tables import (
    TABLES_RUN_KEY,
    file_run_id,
    golden_set_table,
    hits_table,
    markdown_preview,
    rankings_table,
    run_from_hits,
    run_privacy,
)
from resources.goldeneval import GoldenEvalResource

GROUP = "goldeneval"
STORE_POOL = "goldeneval_store"
"""Every step that opens the DuckDB store takes a slot of this pool (limit 1)."""
RUN_COMPLETE = "run_complete"
HITS_PREVIEW_COLUMNS = (
    "question_id",
    "form",
    "hard_class",
    "status",
    "top1_hit",
    "top3_hit",
    "latency_ms",
    "top_documents",
)


def _counts(values: list[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def build_evaluation_assets(partitions_def: dg.MultiPartitionsDefinition) -> list[Any]:
    """The four evaluation assets over the given (set x retriever) partitions."""

    @dg.asset(
        partitions_def=partitions_def,
        group_name=GROUP,
        kinds={"parquet"},
        description="The validated golden question set, one row per question (Parquet, hive layout).",
    )
    def golden_question_sets(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
        where = cell(context.partition_key)
        suite = goldeneval.suite()
        golden_set = suite.load_set(where["set"])
        digest = label_digest(golden_set)
        now = datetime.now(UTC)
        table = golden_set_table(golden_set, suite.privacy, context.run.run_id, now)
        path = goldeneval.write_table("golden_question_sets", where, table, context.run.run_id, now)
        questions = golden_set.questions
        return dg.MaterializeResult(
            metadata={
                "question_count": len(questions),
                "count_by_form": dg.MetadataValue.json(_counts([q.form.value for q in questions])),
                "count_by_hard_class": dg.MetadataValue.json(
                    _counts([q.hard_class or NO_HARD_CLASS for q in questions])
                ),
                "label_digest": digest,
                "privacy": suite.privacy.value,
                "path": dg.MetadataValue.path(str(path)),
                "dagster/row_count": table.num_rows,
                "dagster/column_schema": table_schema(table.schema),
            },
            data_version=dg.DataVersion(digest),
        )

    @dg.multi_asset(
        specs=[
            dg.AssetSpec(
                "retriever_rankings",
                deps=[golden_question_sets],
                group_name=GROUP,
                kinds={"parquet"},
                description="The raw overfetched ranking of every question, one row per returned id.",
            ),
            dg.AssetSpec(
                "question_hits",
                deps=["retriever_rankings"],
                group_name=GROUP,
                kinds={"parquet"},
                description="Per question: distinct top-3 documents, top-1/top-3 hit, form, "
                "hard class, latency, status.",
            ),
        ],
        partitions_def=partitions_def,
    )
    def retrieval(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> Iterator[dg.MaterializeResult]:  # type: ignore[type-arg]
        where = cell(context.partition_key)
        suite = goldeneval.suite()
        privacy = suite.privacy
        run = evaluate_cell(suite, where["set"], where["retriever"])
        to_document = document_id_mapper(suite.config.chunk_separator or None)
        rankings = rankings_table(run, privacy, to_document, context.run.run_id)
        rankings_path = goldeneval.write_table(
            "retriever_rankings", where, rankings, context.run.run_id, run.started_at
        )
        yield dg.MaterializeResult(
            asset_key="retriever_rankings",
            metadata={
                "question_count": len(run.results),
                "privacy": privacy.value,
                "path": dg.MetadataValue.path(str(rankings_path)),
                "dagster/row_count": rankings.num_rows,
                "dagster/column_schema": table_schema(rankings.schema),
            },
        )
        hits = hits_table(run, privacy, context.run.run_id)
        hits_path = goldeneval.write_table("question_hits", where, hits, context.run.run_id, run.started_at)
        overall = run.aggregates.overall
        yield dg.MaterializeResult(
            asset_key="question_hits",
            metadata={
                **rates(overall),
                "errors": overall.errors,
                "privacy": privacy.value,
                "path": dg.MetadataValue.path(str(hits_path)),
                "dagster/row_count": hits.num_rows,
                "dagster/column_schema": table_schema(hits.schema),
                "preview": dg.MetadataValue.md(markdown_preview(hits, columns=HITS_PREVIEW_COLUMNS)),
            },
        )

    @dg.asset(
        partitions_def=partitions_def,
        group_name=GROUP,
        kinds={"duckdb"},
        deps=["question_hits"],
        pool=STORE_POOL,
        check_specs=[
            partitioned_check(
                RUN_COMPLETE,
                "evaluation_summary",
                partitions_def,
                "No question errored or timed out: the run is complete.",
            )
        ],
        description="Aggregates overall, by form and by hard class, stored as one run in the DuckDB result store.",
    )
    def evaluation_summary(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
        where = cell(context.partition_key)
        suite = goldeneval.suite()
        hits_path, hits = goldeneval.read_table("question_hits", where, context.run.run_id)
        run = run_from_hits(hits)
        strict = PrivacyMode.METADATA_ONLY in (suite.privacy, run_privacy(hits))
        privacy = PrivacyMode.METADATA_ONLY if strict else PrivacyMode.FULL
        store = goldeneval.open_store()
        record = run.to_record(privacy)
        # The Parquet files this run is built from, so that retention deletes them with it.
        tables = {**record.details, TABLES_RUN_KEY: file_run_id(hits_path)}
        stored = store.save_run(dataclasses.replace(record, details=tables))
        aggregates = run.aggregates
        by_slice: dict[str, Any] = {}
        for kind, groups in (("form", aggregates.by_form), ("hard_class", aggregates.by_hard_class)):
            for value, summary in groups.items():
                by_slice.update(rates(summary, prefix=f"{kind}={value}/"))
        overall = aggregates.overall
        identity = {
            "set": where["set"],
            "retriever": where["retriever"],
            "stored_run_id": stored.id,
            **rates(overall),
        }
        complete = overall.errors == 0
        return dg.MaterializeResult(
            metadata={
                **identity,
                **by_slice,
                "question_count": overall.questions,
                "scored_count": overall.scored,
                "error_count": overall.errors,
                "status": stored.status,
                "rates_by_slice": dg.MetadataValue.json(
                    {
                        "by_form": {k: v.to_dict() for k, v in aggregates.by_form.items()},
                        "by_hard_class": {k: v.to_dict() for k, v in aggregates.by_hard_class.items()},
                    }
                ),
                "label_digest": text_or_unknown(stored.label_digest),
                "benchmark_fingerprint": text_or_unknown(stored.benchmark_fingerprint),
                "variant_fingerprint": text_or_unknown(stored.variant_fingerprint),
                "privacy": privacy.value,
                "store": dg.MetadataValue.path(str(store.path)),
                "question_hits_file": dg.MetadataValue.path(str(hits_path)),
            },
            check_results=[
                dg.AssetCheckResult(
                    check_name=RUN_COMPLETE,
                    passed=complete,
                    severity=dg.AssetCheckSeverity.ERROR,
                    metadata={
                        **identity,
                        "verdict": "complete" if complete else "incomplete",
                        "reason": (
                            f"all {overall.questions} questions answered"
                            if complete
                            else f"{overall.errors} of {overall.questions} questions errored or timed out"
                        ),
                    },
                )
            ],
        )

    return [golden_question_sets, retrieval, evaluation_summary]
