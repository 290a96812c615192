"""Answer evaluation (ADR-060): golden prompt sets, assertions, models, graders, quality routing.

A prompt run is another kind of run specification (:class:`goldeneval.answers.spec.PromptRunSpec`)
through the same verbs as a retrieval run: it is evaluated here (no store), recorded with
:func:`goldeneval.retrieval.pipeline.record` and judged with :func:`goldeneval.retrieval.pipeline.judge` — the
same store, comparison states, thresholds, gate, privacy modes and retention.

This package's ``__init__`` imports nothing, so that :mod:`goldeneval.retrieval.details` can read the
typed prompt details (:mod:`goldeneval.answers.details`) without an import cycle.
"""
