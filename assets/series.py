"""One series over the nights, and one night's retrievers side by side, as assets the UI plots.

The summary asset is partitioned by (set x retriever), so its Plots tab runs across
partitions: the points of every series in one line, in materialisation order.  Dagster plots
the float metadata of *one asset key* over its events, so each series gets a key of its own:

* ``series/<set>/<retriever>`` — one observation per stored run of that series (its rates,
  rank metrics, verdict and stored run id): the key's Plots tab is that series over the
  nights, one line per rate;
* ``nightly/<set>`` — one observation per stored run of any retriever of the set, holding the
  latest run of *every* retriever of the set (``<retriever>/top1_hit_rate``, …, and a Markdown
  table): its latest event shows the retrievers of the latest night side by side.

Prompt runs (ADR-060) get the same from ``prompt_summary``: ``prompt_series/<prompt set>/<model>``
and ``prompt_nightly/<prompt set>``, with the pass rate and mean score (:data:`PROMPT_SERIES`).

Both are external assets (``AssetSpec``, observed, never materialised) in the group
``goldeneval_series``, declared for every configured partition, so the UI lists them with
their descriptions; the observations are logged by the summary asset after it has recorded
the run (:func:`observe`).  docs/guide/dagster.md ("Plots per series") says why this
and not a time partition dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from assets.partitions import MODEL_DIMENSION, PROMPT_SET_DIMENSION, RETRIEVER_DIMENSION, SET_DIMENSION
from goldeneval.core.records import StoredRun
from goldeneval.history.door import JudgedSpec
from goldeneval.store import Store
from resources.goldeneval import GoldenEvalResource

SERIES_GROUP = "goldeneval_series"


@dataclass(frozen=True)
class SeriesKind:
    """How a kind of run names its per-series and per-set keys and what they plot."""

    series_prefix: str
    nightly_prefix: str
    set_dimension: str
    member_dimension: str
    """The partition dimension a series is named by: the retriever, or the model."""
    summary: str
    """The summary asset that observes them."""
    plotted: tuple[str, str]
    """The two rates shown side by side for each member of a night."""
    labels: tuple[str, str]
    """Their column titles."""


@dataclass(frozen=True)
class CliRuns:
    """How a kind's runs stored by the CLI join its series' plots (``pipelines.sensors``'s
    CLI-run sensors): a run of a nightly series that no Dagster run wrote (``goldeneval
    retrieval --name <retriever>``, ``goldeneval prompts --name <model>``) is observed on the
    series key as the summary observes the nightly's, marked ``door: cli``."""

    series: SeriesKind
    sensor: str
    """The sensor's name."""
    spec: Callable[[GoldenEvalResource, Mapping[str, str]], JudgedSpec]
    """The partition's run specification: the run is judged as the nightly judges its own."""
    plotted: Callable[[Store, StoredRun], Mapping[str, float | None]]
    """The floats a stored run plots, the same names the summary observes."""


RETRIEVAL_SERIES = SeriesKind(
    "series", "nightly", SET_DIMENSION, RETRIEVER_DIMENSION, "evaluation_summary",
    ("top1_hit_rate", "top3_hit_rate"), ("top-1", "top-3"),
)  # fmt: skip
PROMPT_SERIES = SeriesKind(
    "prompt_series", "prompt_nightly", PROMPT_SET_DIMENSION, MODEL_DIMENSION, "prompt_summary",
    ("pass_rate", "mean_score"), ("pass rate", "mean score"),
)  # fmt: skip

__all__ = [
    "PROMPT_SERIES",
    "RETRIEVAL_SERIES",
    "SERIES_GROUP",
    "CliRuns",
    "SeriesKind",
    "build_series_specs",
    "dimension_keys",
    "nightly_key",
    "observations",
    "observe",
    "series_key",
]


def series_key(set_id: str, member: str, kind: SeriesKind = RETRIEVAL_SERIES) -> dg.AssetKey:
    return dg.AssetKey([kind.series_prefix, set_id, member])


def nightly_key(set_id: str, kind: SeriesKind = RETRIEVAL_SERIES) -> dg.AssetKey:
    return dg.AssetKey([kind.nightly_prefix, set_id])


def dimension_keys(partitions_def: dg.MultiPartitionsDefinition, name: str) -> list[str]:
    """The keys of one dimension of a kind's partitions (its sets, or its members)."""
    [dimension] = [d for d in partitions_def.partitions_defs if d.name == name]
    return [str(key) for key in dimension.partitions_def.get_partition_keys()]


def build_series_specs(
    partitions_def: dg.MultiPartitionsDefinition, kind: SeriesKind = RETRIEVAL_SERIES
) -> list[dg.AssetSpec]:
    """An observed asset per series (set x member) and per set, from the kind's partitions."""
    sets = dimension_keys(partitions_def, kind.set_dimension)
    members = dimension_keys(partitions_def, kind.member_dimension)
    member = kind.member_dimension.replace("_", " ")
    specs = [
        dg.AssetSpec(
            series_key(set_id, name, kind),
            group_name=SERIES_GROUP,
            deps=[kind.summary],
            description=f"Series {name!r} on set {set_id!r} over the nights: one observation per stored "
            "run (its Plots tab is this series' rates, one line each).",
        )
        for set_id in sets
        for name in members
    ]
    specs += [
        dg.AssetSpec(
            nightly_key(set_id, kind),
            group_name=SERIES_GROUP,
            deps=[kind.summary],
            description=f"Every {member}'s latest run on set {set_id!r}, side by side (the latest "
            f"observation; {member.upper()}/{kind.plotted[0]} and {member.upper()}/{kind.plotted[1]} "
            f"are plotted per {member}).",
        )
        for set_id in sets
    ]
    return specs


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> Mapping[str, Any]:
    records = instance.fetch_observations(key, limit=1).records
    observation = records[0].asset_observation if records else None
    return {} if observation is None else {k: v.value for k, v in observation.metadata.items()}


def _side_by_side(latest: Mapping[str, Mapping[str, Any]], kind: SeriesKind) -> str:
    member = kind.member_dimension.replace("_", " ")
    lines = [
        f"| {member} | {kind.labels[0]} | {kind.labels[1]} | verdict | stored run |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    for name, values in sorted(latest.items()):
        rates = [values.get(rate) for rate in kind.plotted]
        shown = ["-" if rate is None else f"{float(rate):.3f}" for rate in rates]
        lines.append(
            f"| {name} | {shown[0]} | {shown[1]} | {values.get('verdict', '-')} "
            f"| `{values.get('stored_run_id', '-')}` |"
        )
    return "\n".join(lines) + "\n"


def observations(
    instance: dg.DagsterInstance,
    where: Mapping[str, str],
    members: list[str],
    metadata: Mapping[str, Any],
    kind: SeriesKind = RETRIEVAL_SERIES,
    *,
    pending: Mapping[dg.AssetKey, Mapping[str, Any]] | None = None,
) -> list[dg.AssetObservation]:
    """The observations of one stored run: on its series key, and the set's night on its
    nightly key; none when the series' latest observation is that run already.

    ``metadata`` holds floats (plotted) and texts, as values or ``MetadataValue``.  ``pending``
    holds series observations made but not yet logged (a sensor tick that observes several
    runs), read before the instance's."""
    set_id, member = where[kind.set_dimension], where[kind.member_dimension]
    metadata = {name: value.value if isinstance(value, dg.MetadataValue) else value for name, value in metadata.items()}
    pending = pending or {}

    def latest(key: dg.AssetKey) -> Mapping[str, Any]:
        return pending[key] if key in pending else _latest(instance, key)

    key = series_key(set_id, member, kind)
    if latest(key).get("stored_run_id") == metadata.get("stored_run_id"):
        return []
    others = {name: latest(series_key(set_id, name, kind)) for name in members if name != member}
    side = {name: values for name, values in others.items() if values}
    side[member] = metadata
    night: dict[str, Any] = {
        f"{name}/{rate}": dg.MetadataValue.float(float(values[rate]))
        for name, values in side.items()
        for rate in kind.plotted
        if values.get(rate) is not None
    }
    night[f"{kind.member_dimension}s"] = dg.MetadataValue.md(_side_by_side(side, kind))
    return [
        dg.AssetObservation(asset_key=key, metadata=dict(metadata)),
        dg.AssetObservation(asset_key=nightly_key(set_id, kind), metadata=night),
    ]


def observe(
    context: dg.AssetExecutionContext,
    where: Mapping[str, str],
    members: list[str],
    metadata: Mapping[str, Any],
    kind: SeriesKind = RETRIEVAL_SERIES,
) -> None:
    """Log the stored run on its series key and the set's night on its nightly key
    (:func:`observations`): a run already observed (the summary re-materialised for the same
    tables) is not observed again, so a series' plot has one point per stored run."""
    for observation in observations(context.instance, where, members, metadata, kind):
        context.log_event(observation)
