"""The evaluation suite: which golden sets run against which named retrievers, prompt sets
against which models, and a declared kind's own section, from one file.

``goldeneval.yaml`` at the project root declares the sets (registered ids or set files), the
named retrievers (``{name: {id, options, corpus, provenance}}``), the prompt sets and models,
the privacy mode, the regression thresholds, the nightly schedule, where results go and where
alerts go.  Each kind's keys are optional (a team that evaluates only prompts writes no
``sets``), but a kind's sets come with its series and at least one kind must have a set to
run.  Every (set, retriever) pair is one cell: the Dagster code location turns each cell into
a partition, and :meth:`Suite.run_spec` turns one into the run specification that
:mod:`goldeneval.retrieval.pipeline` evaluates, records and judges — the same verbs the CLI
calls.  Every field is validated when the file is loaded, naming the file and the field.
Relative paths are relative to the file.  Nothing here knows about Dagster.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, create_model, field_validator

from goldeneval.core.baseline import Baseline
from goldeneval.core.errors import InputError, invalid_input
from goldeneval.core.gate import RegressionThresholds
from goldeneval.core.privacy import PrivacyMode, resolve_privacy
from goldeneval.core.provenance import Provenance, parse_provenance
from goldeneval.core.settings import Flag, settings_of
from goldeneval.core.spec import DEFAULT_TIMEOUT_S, Timeout
from goldeneval.core.thresholds import SliceThresholds
from goldeneval.kinds import KindDeclaration, SuiteSection, declared_kinds
from goldeneval.prompts.models import known_models
from goldeneval.prompts.registry import resolve_prompt_set
from goldeneval.prompts.settings import PROMPT_RATES, GradingSettings, JudgeSettings
from goldeneval.prompts.spec import JudgeSpec, PromptRunSpec
from goldeneval.retrieval.retrievers.registry import known_retrievers
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.retrieval.settings import RETRIEVAL_RATES, RetrievalSettings
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import StoreLocation
from goldeneval.suite_schedule import ScheduleConfig
from goldeneval.suite_storage import (
    CONFIG_ENV,
    CONFIG_FILE_NAME,
    StorageConfig,
    SuiteStorage,
    find_suite_file,
    load_storage,
    read_suite_file,
)

_T = TypeVar("_T")

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FILE_NAME",
    "AlertsConfig",
    "Cells",
    "RetrieverConfig",
    "Suite",
    "SuiteConfig",
    "SuiteStorage",
    "find_suite_file",
    "load_storage",
    "load_suite",
    "suite_config_model",
]

WEBHOOK_ENV = "GOLDENEVAL_ALERT_WEBHOOK_URL"
UI_URL_ENV = "GOLDENEVAL_UI_URL"

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""What a set id or retriever name must look like to be a partition key and a folder name."""
_RETRIEVER_ID = re.compile(r"[A-Za-z_][\w.-]*(:[A-Za-z_]\w*)?")
"""A registered id (``goldeneval.lexical``) or an import path (``package.module:factory``)."""


def _check_key(kind: str, value: str) -> str:
    if not _KEY.fullmatch(value):
        raise ValueError(
            f"{kind} {value!r} cannot name a partition: use 1 to 100 letters, digits, '.', '_' "
            "or '-', starting with a letter or digit"
        )
    return value


def string_options(options: Mapping[str, str | int | float | bool]) -> dict[str, str]:
    """Options written in YAML (numbers, booleans) as the strings a plug-in receives, as from
    ``--option KEY=VALUE`` (``true``/``false`` for booleans)."""
    return {key: (str(value).lower() if isinstance(value, bool) else str(value)) for key, value in options.items()}


class PluginConfig(BaseModel):
    """One named plug-in of the suite (a retriever, a model): its id, options, corpus, provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, description="Registered id or package.module:factory.")
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Plug-in options, as --option / --model-option KEY=VALUE."
    )
    corpus: str | None = Field(default=None, description="Corpus path; default: the set's own corpus.")
    provenance: dict[str, str] = Field(
        default_factory=dict, description="Declared provenance fields for a plug-in that cannot say them."
    )

    def string_options(self) -> dict[str, str]:
        return string_options(self.options)


class RetrieverConfig(PluginConfig):
    """One named retriever: a registered id or import path, its options, an optional corpus."""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _RETRIEVER_ID.fullmatch(value):
            raise ValueError(
                f"{value!r} is neither a registered retriever id nor an import path package.module:factory"
            )
        if ":" not in value and value not in (known := known_retrievers()):
            raise ValueError(f"unknown retriever {value!r} (registered: {', '.join(known) or 'none'})")
        return value


class ThresholdsConfig(SliceThresholds, RETRIEVAL_RATES.settings()):  # type: ignore[misc]
    """Retrieval's regression thresholds: its two rates in its own words, ``max_p``, and its slices."""


class AlertsConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    webhook_url: str | None = Field(
        default=None, description=f"JSON alerts are POSTed here; ${WEBHOOK_ENV} overrides it."
    )
    slack_channel: str | None = Field(
        default=None, description="Slack channel for alerts; used when $SLACK_TOKEN is set."
    )
    ui_url: str = Field(
        default="http://127.0.0.1:3000",
        description=f"Base URL of the Dagster UI; ${UI_URL_ENV} overrides it.",
    )
    timeout_s: float = Field(
        default=10.0, gt=0, le=3600, allow_inf_nan=False, description="Seconds an alert's delivery may take."
    )


class ModelConfig(PluginConfig):
    """One named model of prompt evaluation (ADR-060): a model id, its options, an optional corpus."""

    @field_validator("id")
    @classmethod
    def _registered(cls, value: str) -> str:
        if ":" not in value and value not in (known := known_models()):
            raise ValueError(f"unknown model {value!r} (registered: {', '.join(known) or 'none'})")
        return value


class JudgeConfig(JudgeSettings):
    """The judge model of ``llm_judge``: its id and options beside how it is asked."""

    id: str = Field(min_length=1, description="The judge's model id.")
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Judge model options, as --judge-option KEY=VALUE."
    )


class PromptGradingConfig(GradingSettings, PROMPT_RATES.settings()):  # type: ignore[misc]
    """How prompt runs are graded and gated: ``goldeneval prompts``' options."""

    judge: JudgeConfig | None = Field(default=None, description="The judge model of llm_judge.")


class SuiteConfig(RetrievalSettings):
    """The file as written (docs/guide/dagster.md); how retrieval runs are asked and scored are
    the keys of :class:`~goldeneval.retrieval.settings.RetrievalSettings`, at the top level."""

    sets: list[str] = Field(
        default_factory=list, description="Registered set ids or set file paths (with retrievers; ADR-072)."
    )
    sets_dirs: Annotated[list[str], Flag("--sets-dir", repeated=True)] = Field(
        default_factory=list, description="Extra folders of set files to register."
    )
    retrievers: dict[str, RetrieverConfig] = Field(
        default_factory=dict, description="Named retrievers: each name is a partition key and the runs' series."
    )
    privacy: Annotated[PrivacyMode | None, Flag()] = Field(
        default=None, description="What runs persist: full or metadata_only. Default: $GOLDENEVAL_PRIVACY, else full."
    )
    thresholds: ThresholdsConfig = Field(
        default_factory=ThresholdsConfig, description="Retrieval's regression thresholds."
    )
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig, description="The nightly schedule.")
    storage: StorageConfig = Field(default_factory=StorageConfig, description="Where results and caches go.")
    alerts: AlertsConfig = Field(default_factory=AlertsConfig, description="Where failed checks are sent.")
    timeout_s: Annotated[Timeout, Flag("--timeout")] = Field(
        default=DEFAULT_TIMEOUT_S, description="Per-question (per-call) timeout in seconds; null: no limit."
    )
    baseline: Annotated[str, Flag()] = Field(
        default="accepted",
        description="Compare with: accepted (the nightly's default: the series' accepted level, the last run that "
        "passed the gate or one a person accepted with goldeneval accept, never a night that regressed), previous "
        "(latest earlier complete run; the command line's default), best (best comparable run), run:<id> "
        "or series:<name> (the latest complete run of another series).",
    )
    prompt_sets: list[str] = Field(default_factory=list, description="Golden prompt set ids or files (ADR-060).")
    models: dict[str, ModelConfig] = Field(
        default_factory=dict, description="Named models for the prompt sets: each name is a partition key and series."
    )
    prompts: PromptGradingConfig = Field(
        default_factory=PromptGradingConfig, description="How prompt runs are graded and gated."
    )

    @field_validator("baseline")
    @classmethod
    def _baseline(cls, value: str) -> str:
        try:
            Baseline.parse(value)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("retrievers", "models")
    @classmethod
    def _names_are_keys(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        kind = "retriever name" if info.field_name == "retrievers" else "model name"
        for name in value:
            _check_key(kind, name)
        return value


def suite_config_model(kinds: tuple[KindDeclaration, ...] | None = None) -> type[SuiteConfig]:
    """The suite file's model: :class:`SuiteConfig` and a key for each declared kind's own
    section (:attr:`goldeneval.kinds.KindDeclaration.section`; optional, null when absent)."""
    sections = [kind.section for kind in (declared_kinds() if kinds is None else kinds) if kind.section is not None]
    return _with_sections(tuple(sections)) if sections else SuiteConfig


@functools.cache
def _with_sections(sections: tuple[SuiteSection, ...]) -> type[SuiteConfig]:
    taken = [section.key for section in sections if section.key in SuiteConfig.model_fields]
    if taken:
        raise ValueError(f"suite section {taken[0]!r} is a key of the suite file already")
    fields: dict[str, Any] = {
        section.key: (section.model | None, Field(default=None, description=section.description))
        for section in sections
    }
    model: type[SuiteConfig] = create_model(
        "SuiteConfig", __base__=SuiteConfig, __module__=__name__, __doc__=SuiteConfig.__doc__, **fields
    )
    return model


class Cells(NamedTuple):
    """One kind's partitions as a suite declares them: every set crossed with every series."""

    set_ids: list[str]
    series: list[str]


@dataclass(frozen=True)
class Suite:
    """A loaded suite file: its settings with paths resolved, and every set by its id."""

    path: Path
    config: SuiteConfig
    set_refs: Mapping[str, str]
    """Set id -> the reference it was loaded from (absolute path or registered id)."""
    prompt_set_refs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Prompt set id -> the reference it was loaded from."""

    @property
    def folder(self) -> Path:
        return self.path.parent

    def _resolve(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.folder / path

    def section(self, key: str) -> Any:
        """A declared kind's own section of the file (None when the file has none)."""
        return getattr(self.config, key, None)

    def cells(self, kind: KindDeclaration) -> Cells:
        """A declared kind's partitions' axes: its set ids x its series names."""
        set_ids, series = kind.cells(self)
        return Cells(list(set_ids), list(series))

    @property
    def retrieval_cells(self) -> Cells:
        """The retrieval partitions' axes: set ids x retriever names."""
        return Cells(list(self.set_refs), list(self.config.retrievers))

    @property
    def storage(self) -> SuiteStorage:
        return SuiteStorage(config=self.config.storage, path=self.path)

    @property
    def store_path(self) -> Path:
        """The DuckDB store file; see :attr:`store_location` for a store that may be a URL."""
        location = self.store_location
        if location.path is None:
            raise InputError(f"{self.path}: the result store {location} is a PostgreSQL URL, not a DuckDB file")
        return location.path

    @property
    def store_location(self) -> StoreLocation:
        """``$GOLDENEVAL_STORE``, else ``storage.store``, else the default: a ``postgresql://`` URL
        as written, else a path (a suite value and the default relative to this file)."""
        return self.storage.store()

    @property
    def tables_root(self) -> Path:
        """``$GOLDENEVAL_TABLES``, else ``storage.tables``, else the default."""
        return self.storage.tables()

    @property
    def cache_dir(self) -> Path:
        """``$GOLDENEVAL_CACHE``, else ``storage.cache``, else the default."""
        return self.storage.cache()

    @property
    def privacy(self) -> PrivacyMode:
        return self.config.privacy or resolve_privacy(None)

    @property
    def thresholds(self) -> RegressionThresholds:
        return RETRIEVAL_RATES.thresholds(self.config.thresholds, self.config.thresholds)

    def _configured(self, table: Mapping[str, _T], key: str, what: str) -> _T:
        """``table[key]``, else an InputError naming the suite file and what is configured:
        ``no retriever named 'x' (configured: a, b)``."""
        try:
            return table[key]
        except KeyError:
            raise InputError(f"{self.path}: no {what} {key!r} (configured: {', '.join(table)})") from None

    def retriever(self, name: str) -> RetrieverConfig:
        return self._configured(self.config.retrievers, name, "retriever named")

    def declared_provenance(self, name: str) -> Provenance:
        return parse_provenance(self.retriever(name).provenance, f"{self.path}: retriever {name!r}")

    def run_spec(self, set_id: str, retriever_name: str) -> RunSpec:
        """The run specification of one cell.  Its series is the retriever's *name*, so two
        configurations of one retriever id (BM25 with two k1 values) are two series, and a
        CLI run with ``--name <name>`` continues the nightly series."""
        reference = self._configured(self.set_refs, set_id, "set with id")
        configured = self.retriever(retriever_name)
        config = self.config
        return RunSpec(
            set_ref=reference,
            expected_set_id=set_id,
            sets_dirs=tuple(self._resolve(d) for d in config.sets_dirs),
            retriever_id=configured.id,
            options=configured.string_options(),
            corpus=self._resolve(configured.corpus) if configured.corpus else None,
            series=retriever_name,
            cache_dir=self.cache_dir,
            timeout_s=config.timeout_s,
            privacy=self.privacy,
            thresholds=self.thresholds,
            baseline=Baseline.parse(config.baseline),
            provenance=self.declared_provenance(retriever_name),
            **settings_of(config, RetrievalSettings),
        )

    @property
    def prompt_cells(self) -> Cells:
        """The prompt partitions' axes: prompt set ids x model names."""
        return Cells(list(self.prompt_set_refs), list(self.config.models))

    def prompt_run_spec(self, set_id: str, model_name: str) -> PromptRunSpec:
        """The run specification of one (prompt set x model) cell; its series is the model's name."""
        reference = self._configured(self.prompt_set_refs, set_id, "prompt set with id")
        model = self._configured(self.config.models, model_name, "model named")
        grading = self.config.prompts
        judge = grading.judge
        return PromptRunSpec(
            set_ref=reference,
            expected_set_id=set_id,
            model_id=model.id,
            model_options=model.string_options(),
            corpus=self._resolve(model.corpus) if model.corpus else None,
            series=model_name,
            judge=JudgeSpec(
                model_id=judge.id, options=string_options(judge.options), **settings_of(judge, JudgeSettings)
            )
            if judge is not None
            else None,
            cache_dir=self.cache_dir,
            timeout_s=self.config.timeout_s,
            privacy=self.privacy,
            thresholds=PROMPT_RATES.thresholds(grading),
            baseline=Baseline.parse(self.config.baseline),
            provenance=parse_provenance(model.provenance, f"{self.path}: model {model_name!r}"),
            **settings_of(grading, GradingSettings),
        )


_PAIRS = (("sets", "retrievers"), ("prompt_sets", "models"))
"""The keys of the kinds goldeneval ships that are evaluated together: a set list and its series."""


def _pairs_complete(path: Path, config: SuiteConfig) -> None:
    """Sets and their series come together (``sets`` and ``retrievers``, ``prompt_sets`` and
    ``models``): one without the other is a mistake, not a no-op."""
    for sets, series in _PAIRS:
        given = {key: bool(getattr(config, key)) for key in (sets, series)}
        if given[sets] != given[series]:
            missing = series if given[sets] else sets
            raise InputError(f"{path}: field {missing!r}: {sets} and {series} are evaluated together; add {missing}")


def _something_to_run(suite: Suite, kinds: Sequence[KindDeclaration]) -> None:
    """At least one declared kind has a set to run: a suite file that configures none would
    build a code location with nothing in it."""
    if any(suite.cells(kind).set_ids for kind in kinds):
        return
    options = [f"{sets} and {series}" for sets, series in _PAIRS]
    options += [f"a {kind.section.key!r} section ({kind.name})" for kind in kinds if kind.section is not None]
    raise InputError(f"{suite.path}: nothing to evaluate: no run kind has a set to run; add {', or '.join(options)}")


def _set_references(
    path: Path, field: str, references: Sequence[str], set_id_of: Callable[[str], str], key: str, noun: str
) -> dict[str, str]:
    """Set id -> reference, for the references of field ``field`` (``sets``, ``prompt_sets``):
    each loaded once by ``set_id_of`` to learn its id, which must be a valid ``key``.  A
    reference is a file beside the suite file when there is one, else as written (a path from
    the working directory or a set name).  Two references to one id fail; the message calls
    that id ``{noun}{id!r}``."""
    found: dict[str, str] = {}
    for reference in references:
        candidate = Path(reference).expanduser()
        if not candidate.is_absolute() and (path.parent / candidate).exists():
            candidate = path.parent / candidate
        resolved = str(candidate) if candidate.exists() else reference
        set_id = set_id_of(resolved)
        try:
            _check_key(key, set_id)
        except ValueError as exc:
            raise InputError(f"{path}: {field}: {reference}: {exc}") from None
        if set_id in found:
            raise InputError(f"{path}: {field}: {reference!r} and {found[set_id]!r} are both {noun}{set_id!r}")
        found[set_id] = resolved
    return found


def load_suite(path: str | Path) -> Suite:
    """Read and validate the suite file and load every set once, to learn its id.

    Errors name the file and the field.  Two references to one set id fail.
    """
    path = Path(path).resolve()
    raw = read_suite_file(path)
    try:
        config = suite_config_model().model_validate(raw)
    except ValidationError as exc:
        raise invalid_input(exc, path, whole="(file)", clipped=False) from None
    _pairs_complete(path, config)
    for name, retriever in config.retrievers.items():
        parse_provenance(retriever.provenance, f"{path}: retriever {name!r}")
        if retriever.corpus is not None:
            corpus = Path(retriever.corpus).expanduser()
            corpus = corpus if corpus.is_absolute() else path.parent / corpus
            if not corpus.exists():
                raise InputError(f"{path}: field 'retrievers.{name}.corpus': {corpus} does not exist")
    folders = [p if (p := Path(d).expanduser()).is_absolute() else path.parent / p for d in config.sets_dirs]
    set_refs = _set_references(
        path, "sets", config.sets, lambda resolved: resolve_golden_set(resolved, folders).id, "set id", "set "
    )
    prompt_set_refs = _set_references(
        path, "prompt_sets", config.prompt_sets, lambda resolved: resolve_prompt_set(resolved).id, "prompt set id", ""
    )
    for name, model in config.models.items():
        parse_provenance(model.provenance, f"{path}: model {name!r}")
    suite = Suite(path=path, config=config, set_refs=set_refs, prompt_set_refs=prompt_set_refs)
    _something_to_run(suite, declared_kinds())
    return suite
