"""Answer evaluation (ADR-060): golden prompt sets, assertions, models, graders, quality routing.

A prompt run is another kind of run (:class:`goldeneval.prompts.spec.PromptRunSpec`) through
the same door as a retrieval run: it is evaluated here (no store), recorded with
:func:`goldeneval.history.door.record` and judged with :func:`goldeneval.history.door.judge` — the
same store, comparison states, thresholds, gate, privacy modes and retention.  Its stored
details are read back through :mod:`goldeneval.core.kinds`.  Answers over a retriever's
documents compose both kinds and live above them, in :mod:`goldeneval.answers`.
"""
