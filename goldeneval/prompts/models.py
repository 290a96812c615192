"""The model contract and its registry (ADR-060): what answers a prompt.

A model is anything with ``complete(request: ChatRequest) -> str``.  A factory
``factory(context: ModelContext) -> Model`` builds it; factories are registered under the
entry-point group ``goldeneval.models`` (built in: ``goldeneval.extractive``, the offline
retrieval-augmented baseline, and ``goldeneval.openai``, any OpenAI-compatible
chat-completions server) or named as ``package.module:factory``.  No model is built, and
none is called, unless a run names it.

A model may declare its provenance (``provenance() -> Provenance``): its revision is its id
plus a declared revision; a mutable alias is recorded as such, never as an immutable
revision (ADR-215).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar, runtime_checkable

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import GoldenEvalError, InputError
from goldeneval.core.plugins import PluginKind
from goldeneval.core.storage import CACHE

__all__ = [
    "MODELS_ENTRY_POINT_GROUP",
    "ChatMessage",
    "ChatRequest",
    "Model",
    "ModelContext",
    "ModelError",
    "ModelFactory",
    "build_model",
    "call_with_timeout",
    "known_models",
]

MODELS_ENTRY_POINT_GROUP = "goldeneval.models"
T = TypeVar("T")


class ModelError(GoldenEvalError):
    """A model call failed (HTTP error, timeout, malformed answer): the prompt's error, not a crash."""


class ModelConfigError(InputError):
    """A model cannot be found or built: invalid input."""


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class ChatRequest:
    """One call: the chat messages, the bare question, and any retrieved context documents.

    Chat models read ``messages`` (the context, if any, is already rendered into them);
    ``goldeneval.extractive`` reads ``question`` and ``context``."""

    messages: tuple[ChatMessage, ...]
    question: str
    context: tuple[Document, ...] = ()


@runtime_checkable
class Model(Protocol):
    def complete(self, request: ChatRequest) -> str:
        """The answer text.  Raises on failure (the evaluator records it)."""
        ...


@dataclass(frozen=True)
class ModelContext:
    """What a model factory may use: its options, a corpus, a cache folder."""

    model_id: str
    options: Mapping[str, str] = field(default_factory=dict)
    corpus: Corpus | None = None
    cache_dir: Path = CACHE.default
    context_supplied: bool = False
    """The caller hands retrieved context with every request (the ``answers`` flow)."""

    def label(self, name: str) -> str:
        return f"model {self.model_id!r}: option {name!r}"

    def check_known(self, known: Sequence[str]) -> None:
        unknown = sorted(set(self.options) - set(known))
        if unknown:
            raise ModelConfigError(
                f"model {self.model_id!r}: unknown option(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(known)) or 'none'})"
            )

    def string(self, name: str, default: str | None = None) -> str | None:
        value = self.options.get(name)
        return default if value is None or value == "" else value

    def _converted(self, name: str, convert: Callable[[str], T], expected: str) -> T | None:
        """Option ``name`` converted, or None when it is not given; one that does not convert
        is refused naming the option (``expected a number, got 'x'``)."""
        raw = self.options.get(name)
        if raw is None:
            return None
        try:
            return convert(raw)
        except ValueError:
            raise ModelConfigError(f"{self.label(name)}: {expected}, got {raw!r}") from None

    def number(self, name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float:
        value = self._converted(name, float, "expected a number")
        if value is None:
            return default
        if (
            not math.isfinite(value)
            or (minimum is not None and value < minimum)
            or (maximum is not None and value > maximum)
        ):
            bounds = f" in [{minimum if minimum is not None else '-inf'}, {maximum if maximum is not None else 'inf'}]"
            raise ModelConfigError(f"{self.label(name)}: must be a finite number{bounds}, got {self.options[name]}")
        return value

    def integer(self, name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
        value = self._converted(name, int, "expected a whole number")
        if value is None:
            return default
        if value < minimum or (maximum is not None and value > maximum):
            top = f", <= {maximum}" if maximum is not None else ""
            raise ModelConfigError(f"{self.label(name)}: must be >= {minimum}{top}, got {value}")
        return value


ModelFactory = Callable[[ModelContext], Model]


MODELS: PluginKind[ModelContext, Model] = PluginKind(
    group=MODELS_ENTRY_POINT_GROUP, noun="model", method="complete(request)", error=ModelConfigError
)


def known_models() -> list[str]:
    return MODELS.known()


def build_model(context: ModelContext) -> Model:
    """Build a model; a factory that raises is invalid input naming the model."""
    return MODELS.build(context.model_id, context)


class CallTimeout(ModelError):
    """The call ran past the per-prompt timeout."""


def call_with_timeout(call: Callable[[], T], timeout_s: float | None) -> T:
    """``call()`` within ``timeout_s`` seconds of wall-clock time (a plug-in model cannot hang
    the run); its exception is re-raised, ``sys.exit()`` included as an error."""
    if timeout_s is None:
        return call()
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # reported as the prompt's error
            outcome["error"] = exc

    worker = threading.Thread(target=target, daemon=True, name="goldeneval-model")
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise CallTimeout(f"timed out after {timeout_s:g} s")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
