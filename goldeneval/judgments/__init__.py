"""The labelling workflow (issue 23): pool, judge, measure agreement, build a golden set.

* :mod:`~goldeneval.judgments.judgments` — the append-only judgments file;
* :mod:`~goldeneval.judgments.pool` — TREC pooling of retrievers and stored runs;
* :mod:`~goldeneval.judgments.suggest` — a model's suggested grades, as its own assessor;
* :mod:`~goldeneval.judgments.page` — the local judging page (its parts in ``page_*``), and
  :mod:`~goldeneval.judgments.page_answers` — the page of people's answer verdicts;
* :mod:`~goldeneval.judgments.answer_judgments` — answer judgments and the graders' agreement;
* :mod:`~goldeneval.judgments.agreement` — progress, grade counts and Cohen's kappa;
* :mod:`~goldeneval.judgments.to_set` — a golden set file from the judgments.
"""

__all__: list[str] = []
