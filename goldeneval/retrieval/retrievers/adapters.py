"""What ``goldeneval.qdrant``, ``goldeneval.langchain`` and ``goldeneval.llamaindex`` share: each
measures a system a team already runs, through that system's own Python library, so each
needs the same few rules, written here once.

* :func:`require_extra` — the library comes with an optional extra; without it, building the
  retriever is one line naming the extra (the default install stays light).
* :func:`document_id` — the document id of a hit is read from a field the user names (a Qdrant
  payload, a LangChain ``Document.metadata``, a LlamaIndex ``node.metadata``); a hit without
  it, or with a value that is not a string or an integer, is that question's error naming the
  hit, the field and what the hit does hold.
* :func:`load_user_factory` — ``factory=package.module:callable`` names the team's own code that
  builds its retriever; it is imported and called with no arguments (what it prints goes to
  standard error, so that ``--format json`` stays JSON: LlamaIndex prints a notice when
  ``llm=None``), and whatever goes wrong is one line naming the option.
* :class:`LimitedCopies` — the limit is passed where the framework has a setting for it
  (``k``, ``similarity_top_k``): on a copy per limit, so that ``--workers`` threads never see
  each other's setting and the team's object is never changed.
* :class:`FrameworkRetriever` and :func:`build_framework_retriever` — the LangChain and
  LlamaIndex adapters are one retriever and one factory; each framework says only how its
  retriever is asked, how the limit reaches it and where a result keeps its document id.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from goldeneval.core.errors import GoldenEvalError, RetrieverError, one_line
from goldeneval.core.plugins import import_named_module
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision, option_label
from goldeneval.retrieval.retrievers.external import (
    REVISION_OPTIONS,
    SearchError,
    bounded_identity,
    describe_json,
    refuse_secret,
)
from goldeneval.retrieval.retrievers.options import check_known_options, str_option
from goldeneval.retrieval.retrievers.revisions import declared_revisions

__all__ = [
    "FRAMEWORK_OPTIONS",
    "FrameworkRetriever",
    "LimitedCopies",
    "build_framework_retriever",
    "document_id",
    "framework_provenance",
    "framework_revisions",
    "id_field_option",
    "load_user_factory",
    "missing_id",
    "require_extra",
]

FRAMEWORK_OPTIONS = ("factory", "id_field", *REVISION_OPTIONS)
"""The options of ``goldeneval.langchain`` and ``goldeneval.llamaindex``."""
DEFAULT_ID_FIELD = "id"
"""The metadata field a framework result names its document by when option ``id_field`` is not given."""

T = TypeVar("T")
F = TypeVar("F", bound="FrameworkRetriever")


def require_extra(retriever_id: str, module: str, extra: str) -> Any:
    """``module`` imported, else one line naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        problem = (
            f"no module named {exc.name!r}"
            if isinstance(exc, ModuleNotFoundError) and exc.name
            else one_line(str(exc) or type(exc).__name__, 120)
        )
        raise RetrieverError(
            f"retriever {retriever_id!r} needs the {extra!r} extra: pip install 'goldeneval[{extra}]' ({problem})"
        ) from None


def document_id(fields: Mapping[str, Any] | None, id_field: str, hit: str) -> str | None:
    """The document id in ``fields[id_field]`` (a string, or an integer as its decimal text),
    None when the field is absent; a value of another type is the question's error.

    ``hit`` names the hit in that error (``hit 3 (point 17)``).  An integer is accepted because
    stores often key documents by number; the golden set's ids are strings, so it is compared
    as its decimal text.
    """
    if not fields or id_field not in fields:
        return None
    value = fields[id_field]
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise SearchError(f"{hit}: field {id_field!r} is {describe_json(value)}, not a string id")


def missing_id(fields: Mapping[str, Any] | None, id_field: str, hit: str, where: str) -> SearchError:
    """The error of a hit whose ``where`` (payload, metadata) lacks ``id_field``, naming what it has."""
    keys = ", ".join(one_line(str(key), 40) for key in list(fields or {})[:8]) or "none"
    return SearchError(
        f"{hit} has no {where} field {id_field!r} (its {where} has: {keys}); "
        f"name the field that holds the document id with --option id_field=..."
    )


def load_user_factory(context: RetrieverContext, retriever_id: str, example: str) -> tuple[str, Any]:
    """Option ``factory`` (``package.module:callable``, required): the object it returns when
    called with no arguments, and the option's text (for the pipeline identity)."""
    label = option_label("factory", retriever_id)
    raw = str_option(context, "factory", retriever_id=retriever_id)
    if raw is None:
        raise RetrieverError(
            f"retriever {retriever_id!r} needs option factory=package.module:callable, e.g. --option factory={example}"
        )
    text = raw.strip()
    module_name, colon, attribute = text.partition(":")
    if not colon or not module_name or not attribute:
        raise RetrieverError(f"{label}: expected package.module:callable, got {raw!r}")
    try:
        module = import_named_module(module_name)
    except ImportError as exc:
        raise RetrieverError(f"{label}: cannot import {module_name!r}: {one_line(str(exc), 160)}") from None
    except Exception as exc:  # the team's module failed while importing: its error, in one line
        raise RetrieverError(
            f"{label}: importing {module_name!r} raised {type(exc).__name__}: {one_line(str(exc))}"
        ) from None
    factory: Any = module
    for part in attribute.split("."):
        factory = getattr(factory, part, None)
    if not callable(factory):
        raise RetrieverError(f"{label}: module {module_name!r} has no callable {attribute!r}")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # what it prints must not break --format json
            built = factory()
    except GoldenEvalError:
        raise
    except (Exception, SystemExit) as exc:
        raise RetrieverError(f"{label}: {text}() raised {type(exc).__name__}: {one_line(str(exc))}") from None
    return text, built


def framework_revisions(context: RetrieverContext, retriever_id: str) -> dict[str, str | None]:
    """Options ``corpus_revision`` and ``model_revision`` checked as provenance values, and
    ``factory`` / ``id_field`` checked to hold no credential: before the team's code runs."""
    for name in ("factory", "id_field"):
        if name in context.options:
            refuse_secret(context.options[name], option_label(name, retriever_id))
    return declared_revisions(context, retriever_id)


def id_field_option(context: RetrieverContext, retriever_id: str, default: str) -> tuple[str, bool]:
    """Option ``id_field``, and whether the user named it (then every hit must have it)."""
    value = str_option(context, "id_field", retriever_id=retriever_id)
    return (value.strip(), True) if value is not None else (default, False)


def framework_provenance(
    retriever_id: str, factory: str, built: object, revisions: Mapping[str, str | None], package: str
) -> Callable[[], Provenance]:
    """Provenance of a retriever the team's factory built: the pipeline identity is the factory
    and the class it returned; corpus and model revisions are declared by option, else unknown
    (goldeneval cannot see inside the team's chain); chunking is unknown."""
    kind = type(built)
    identity = bounded_identity(f"{retriever_id}/{factory} -> {kind.__module__}.{kind.__qualname__}")

    def provenance() -> Provenance:
        return Provenance(
            corpus_revision=revisions.get("corpus_revision"),
            model_revision=revisions.get("model_revision"),
            pipeline_identity=identity,
            execution_revision=execution_revision(package),
        )

    return provenance


class LimitedCopies(Generic[T]):
    """Copies of one object, each with its limit setting (``k``, ``similarity_top_k``) set to
    one limit, made once per limit: the evaluator asks nearly every question with the same
    limit, so there are one or two copies in a run."""

    def __init__(self, original: T, make: Callable[[T, int], T]) -> None:
        self.original = original
        self._make = make
        self._copies: dict[int, T] = {}
        self._lock = threading.Lock()

    def get(self, limit: int) -> T:
        found = self._copies.get(limit)
        if found is None:
            with self._lock:
                found = self._copies.get(limit)
                if found is None:
                    found = self._copies[limit] = self._make(self.original, limit)
        return found


def shallow_copy_with(original: T, attribute: str, value: int) -> T:
    """A shallow copy of ``original`` with ``attribute`` set to ``value`` (the rest shared)."""
    duplicate = copy.copy(original)
    setattr(duplicate, attribute, value)
    return duplicate


class FrameworkRetriever(ABC):
    """What the LangChain and LlamaIndex adapters share: the team's retriever, how the limit
    reaches it (``limit_by``), the field its results name their document by, and the provenance
    declared when it was built.  A framework's subclass says how its retriever is asked
    (:meth:`_ask`), which limit setting it has and where a result keeps its document id."""

    fallback_words = ""
    """How an error names the id attributes tried after the metadata field (``Document.id``)."""
    asked_with = ""
    """The call that asks the team's retriever, as an error names it (``invoke()``)."""
    result_words = ""
    """What that call must return a list of, as an error names it (``Documents``)."""

    def __init__(
        self,
        retriever: Any,
        *,
        id_field: str = DEFAULT_ID_FIELD,
        strict_field: bool = False,
        provenance: Callable[[], Provenance] | None = None,
    ) -> None:
        self.retriever = retriever
        self.id_field = id_field
        self.strict_field = strict_field
        self._provenance = provenance
        self.limit_by = self._limit_setting(retriever)
        """How the limit reaches the retriever: a setting's name, or ``truncate``."""
        self._copies: LimitedCopies[Any] = LimitedCopies(retriever, self._with_limit)

    def provenance(self) -> Provenance:
        return Provenance() if self._provenance is None else self._provenance()

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        results = self._ask(question, limit)
        if not isinstance(results, (list, tuple)):
            raise SearchError(f"{self.asked_with} returned {type(results).__name__}, not a list of {self.result_words}")
        return [self._id(position, item) for position, item in enumerate(results[:limit])]

    @abstractmethod
    def _limit_setting(self, retriever: Any) -> str:
        """How the limit can reach ``retriever`` (its ``limit_by``): ``truncate`` when it cannot."""

    @abstractmethod
    def _with_limit(self, retriever: Any, limit: int) -> Any:
        """A copy of ``retriever`` set to return ``limit`` results (the original unchanged)."""

    @abstractmethod
    def _ask(self, question: str, limit: int) -> Any:
        """What the team's retriever returns for ``question``, ``limit`` passed as ``limit_by`` says."""

    @abstractmethod
    def _id(self, position: int, item: Any) -> str:
        """The document id of the result at ``position``."""

    def _document_id(self, metadata: Any, hit: str, fallbacks: tuple[tuple[str, Any, str], ...]) -> str:
        """The id in ``metadata[id_field]``; unless the field was named, else the first of the
        ``(attribute, value, label)`` fallbacks that is set; else that result's error."""
        found = document_id(metadata, self.id_field, hit)
        if found is not None:
            return found
        if not self.strict_field:
            for attribute, value, label in fallbacks:
                if value is not None:
                    found = document_id({attribute: value}, attribute, label)
                    if found is not None:
                        return found
        error = missing_id(metadata, self.id_field, hit, "metadata")
        raise error if self.strict_field else SearchError(f"{error} (and it has no {self.fallback_words})")


def build_framework_retriever(
    context: RetrieverContext, retriever_id: str, kind: type[F], module: str, extra: str, package: str
) -> F:
    """The factory of ``goldeneval.langchain`` and ``goldeneval.llamaindex``: the options
    checked before the team's code runs, then option ``factory`` (required) called, and what
    it returned wrapped in ``kind`` when it is a ``module.BaseRetriever`` (``module`` comes with
    ``extra``; ``package`` is the distribution whose version is the execution revision)."""
    check_known_options(context, retriever_id, FRAMEWORK_OPTIONS)
    id_field, strict = id_field_option(context, retriever_id, DEFAULT_ID_FIELD)
    revisions = framework_revisions(context, retriever_id)
    retrievers = require_extra(retriever_id, module, extra)
    factory, built = load_user_factory(context, retriever_id, "my_module:make_retriever")
    if not isinstance(built, retrievers.BaseRetriever):
        raise RetrieverError(
            f"{option_label('factory', retriever_id)}: {factory}() returned {type(built).__module__}."
            f"{type(built).__qualname__}, not a {module}.BaseRetriever"
        )
    provenance = framework_provenance(retriever_id, factory, built, revisions, package)
    return kind(built, id_field=id_field, strict_field=strict, provenance=provenance)
