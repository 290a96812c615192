"""The calls a run makes to a model (issue 24): response cache, circuit breaker, usage.

:class:`ManagedModel` wraps the model (and the judge) a run builds
(:func:`goldeneval.prompts.pipeline.build_spec_model` and ``grading_choice``, so prompt runs
and answer runs alike) and decides, once, for every call:

1. *the response cache* (:mod:`goldeneval.prompts.cache`): a deterministic request (the model
   gives :meth:`CacheableModel.cache_request`; ``goldeneval.openai`` at temperature 0) to a
   model whose revision is immutable is answered from the cache when it holds the answer, and
   the answer is stored when it does not.  A mutable alias is never cached: the name may serve
   another model tomorrow and the cache would answer for the old one (ADR-215).  The cache is
   off with ``--no-cache`` and under ``metadata_only`` privacy (an answer may quote the
   question, and nothing of the question may be persisted);
2. *the circuit breaker* (:mod:`goldeneval.prompts.breaker`): after N consecutive failures the
   endpoint is not called again in this run;
3. *usage* (:mod:`goldeneval.prompts.usage`): what the server reported, and its cost.

A model that is neither cacheable nor reports usage (``goldeneval.extractive``, a plug-in) is
still guarded by the breaker; the rest changes nothing for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from goldeneval.core.provenance import Provenance
from goldeneval.prompts.breaker import CircuitBreaker
from goldeneval.prompts.cache import CachedResponse, ResponseCache, response_key
from goldeneval.prompts.models import ChatRequest, Model, call_with_timeout
from goldeneval.prompts.openai_chat import MUTABLE_ALIAS
from goldeneval.prompts.usage import Prices, Usage, UsageMeter, UsageTotals

__all__ = ["CacheableModel", "ManagedModel", "UsageReportingModel", "call_notices"]


@runtime_checkable
class CacheableModel(Protocol):
    """A model whose answers may be cached.  One that never caches for a reason of its own
    (a temperature above 0) may say so in an ``uncached_because`` attribute, which the run
    output shows as the reason the cache is off."""

    def cache_request(self, request: ChatRequest) -> str | None:
        """The full request as it would be sent, or None when its answer is not deterministic."""
        ...


@runtime_checkable
class UsageReportingModel(Protocol):
    def complete_with_usage(self, request: ChatRequest) -> tuple[str, Usage | None]:
        """The answer and the usage the server reported with it."""
        ...


def _immutable(provenance: Provenance) -> str | None:
    revision = provenance.model_revision
    if revision is None or revision.endswith(MUTABLE_ALIAS):
        return None
    return revision


class ManagedModel:
    """A model with the run's call policy around it; a :class:`~goldeneval.prompts.models.Model`
    itself.  ``cache_dir`` None: no response cache (``--no-cache``, ``metadata_only``)."""

    def __init__(
        self,
        inner: Model,
        provenance: Provenance,
        *,
        model_id: str,
        cache_dir: Path | None,
        max_consecutive_failures: int,
        cache_off_reason: str | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.inner = inner
        self.timeout_s = timeout_s
        """A call past it is a failure here too (the breaker counts it), not only the prompt's error."""
        self.model_id = model_id
        self.revision = _immutable(provenance)
        self.pipeline_identity = provenance.pipeline_identity
        endpoint = getattr(inner, "endpoint", None)
        self.breaker = CircuitBreaker(
            max_consecutive_failures, endpoint if isinstance(endpoint, str) else f"model {model_id!r}"
        )
        prices = getattr(inner, "prices", None)
        self.meter = UsageMeter(prices if isinstance(prices, Prices) else None)
        self.cacheable = isinstance(inner, CacheableModel)
        self.cache: ResponseCache | None = None
        self.cache_off_reason = cache_off_reason
        if self.cacheable and cache_off_reason is None:
            own_reason = getattr(inner, "uncached_because", None)
            if isinstance(own_reason, str):
                self.cache_off_reason = own_reason
            elif self.revision is None:
                self.cache_off_reason = "the model name is a mutable alias; declare its revision to cache"
            elif cache_dir is not None:
                self.cache = ResponseCache(cache_dir)

    def _key(self, request: ChatRequest) -> str | None:
        if self.cache is None or self.revision is None:
            return None
        sent = self.inner.cache_request(request)  # type: ignore[attr-defined]
        return None if sent is None else response_key(self.revision, self.pipeline_identity, sent)

    def _call(self, request: ChatRequest) -> tuple[str, Usage | None]:
        if isinstance(self.inner, UsageReportingModel):
            return self.inner.complete_with_usage(request)
        return self.inner.complete(request), None

    def complete(self, request: ChatRequest) -> str:
        key = self._key(request)
        if key is not None and self.cache is not None:
            cached = self.cache.get(key)
            if cached is not None:
                self.meter.cache_hit()
                return cached.text
        self.breaker.before_call()
        try:
            # Bounded here as well as by the evaluator: a call that runs past the timeout is a
            # failure the breaker counts now, and its late answer is dropped, never a success.
            text, usage = call_with_timeout(lambda: self._call(request), self.timeout_s)
        except BaseException as exc:  # recorded, then the evaluator's to report
            self.meter.sent(None)  # sent, and failed: it still counts as a call made
            self.breaker.failure(exc)
            raise
        self.breaker.success()
        self.meter.sent(usage)
        if key is not None and self.cache is not None and isinstance(text, str):
            self.cache.put(key, CachedResponse(text, usage))
        return text

    def totals(self) -> UsageTotals:
        """The run's calls so far: sent, cached, tokens and cost (for the run's details)."""
        return self.meter.totals()

    def notices(self, role: str = "model") -> tuple[str, ...]:
        """What the run output says about these calls: one line of usage (for a model that
        reports usage or could be cached) and one when the breaker opened."""
        lines: list[str] = []
        if self.cacheable or isinstance(self.inner, UsageReportingModel):
            line = f"{role} calls: {self.totals().describe()}"
            if self.cache_off_reason is not None:
                line += f"; response cache off ({self.cache_off_reason})"
            lines.append(line)
        opened = self.breaker.describe()
        if opened is not None:
            lines.append(f"{role} {opened}")
        return tuple(lines)

    def __getattr__(self, name: str) -> Any:
        """What else a door reads of the model (``attempts``, ``url``) is the inner model's."""
        if name == "inner":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)


def call_notices(model: object, role: str = "model") -> tuple[str, ...]:
    """The notices of a run's model (or judge), if it is managed; none otherwise."""
    return model.notices(role) if isinstance(model, ManagedModel) else ()
