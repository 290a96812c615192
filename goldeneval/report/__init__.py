"""Showing what changed: one comparison of two stored runs, and the renderers that read it.

:func:`~goldeneval.report.comparison.build_comparison` computes a
:class:`~goldeneval.report.model.RunComparison` once: the gate's own verdict
(:mod:`goldeneval.history.comparison`), every rate and rank metric with its change, the
slices, the series' trend, and per question both runs' outcomes, top documents and answers,
with the question text and the documents' titles where the set and the corpus are at hand
(:mod:`goldeneval.report.sources`); what it holds is :mod:`goldeneval.report.model`, and
each kind's questions are read by :mod:`goldeneval.report.items`.  The renderers (the
terminal table and JSON of :mod:`goldeneval.report.text`, Markdown, JUnit XML, the
self-contained HTML report, the Dagster check's description) only read it: no renderer
decides anything.

It stands above the kinds (it reads retrieval and answer details alike) and below the doors.
"""
