"""The judgments file as the judging page holds it (:class:`PoolView`): read once, then only
what was appended since."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from goldeneval.judgments.judgments import JudgmentLine, Source, parse_line

__all__ = ["PoolView"]


class PoolView:
    """The judgments file as the page needs it, held in memory: the questions in pool order,
    each question's documents, their sources, this assessor's grades and the models'
    suggestions, with this assessor's judged count per question.  :meth:`refresh` reads only
    the lines appended since the last read (this page's grades, a re-pool, another assessor),
    so no request reads the whole file again; a file that shrank (replaced) is read anew."""

    def __init__(self, path: Path, assessor: str) -> None:
        self.path = path
        self.assessor = assessor
        self._reset()

    def _reset(self) -> None:
        self.offset = 0
        self.lineno = 0
        self.order: list[str] = []
        self.documents: dict[str, list[str]] = {}
        self.sources: dict[tuple[str, str], tuple[Source, ...]] = {}
        self.texts: dict[str, str] = {}
        self.mine: dict[tuple[str, str], int] = {}
        self.judged: dict[str, int] = {}
        self.suggested: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.warnings: list[str] = []
        self._names: dict[str, str] = {}

    @property
    def pairs(self) -> int:
        return len(self.sources)

    def refresh(self) -> None:
        """Read what was appended since the last call (complete lines only)."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size < self.offset:
            self._reset()
        if size == self.offset:
            return
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # a line being written (or torn): read once it is whole
                self.offset += len(raw)
                self.lineno += 1
                line = parse_line(self.path, self.lineno, raw, self.warnings)
                if line is not None:
                    self._take(line)

    def _take(self, line: JudgmentLine) -> None:
        question = self._names.setdefault(line.question, line.question)
        pair = (question, self._names.setdefault(line.document, line.document))
        if pair not in self.sources:
            if question not in self.documents:
                self.order.append(question)
                self.documents[question] = []
                self.judged[question] = 0
            self.documents[question].append(pair[1])
            self.sources[pair] = ()
        if line.question_text is not None:
            self.texts[question] = line.question_text
        if line.assessor is None:
            self.sources[pair] = line.sources
        elif line.assessor == self.assessor:
            if line.grade is None:
                if self.mine.pop(pair, None) is not None:
                    self.judged[question] -= 1
            else:
                if pair not in self.mine:
                    self.judged[question] += 1
                self.mine[pair] = line.grade
        elif line.suggestion is not None and line.grade is not None:
            self.suggested.setdefault(pair, {})[line.assessor] = {
                "assessor": line.assessor,
                "grade": line.grade,
                "spread": line.suggestion.spread,
                "samples": len(line.suggestion.scores),
                "unstable": line.suggestion.unstable,
            }
        elif line.grade is None and pair in self.suggested:
            self.suggested[pair].pop(line.assessor, None)
