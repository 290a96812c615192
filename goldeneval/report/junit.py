"""A comparison as JUnit XML, the test report CI systems read (GitHub, GitLab, Jenkins, Azure).

It reads a :class:`~goldeneval.report.model.RunComparison` and decides nothing: which
questions fail and whether the gate fails are the comparison's.  One ``<testsuite>`` (inside a
``<testsuites>`` root) holds:

- one ``<testcase>`` per question of the comparison, ``classname`` ``goldeneval.<kind>.<set>``
  (``retrieval``, ``answers`` or ``prompts``; each part reduced to letters, digits, ``_`` and
  ``-``) and ``name`` the question's id, so a question keeps its name from run to run and from
  series to series (a pull request's as main's); the suite's name holds the series.  A question
  newly failing against the earlier run (:attr:`~goldeneval.report.model.Flip.NEWLY_FAILING`) has a ``<failure
  type="newly_failing">`` whose body gives its text and both runs' top documents (privacy
  permitting); a question that errored in the current run has an ``<error>``; a question only
  the earlier run has is ``<skipped>``; every other question passes.
- one ``<testcase name="gate">`` (``classname`` ``goldeneval.<kind>.<set>.regression``, so no
  question id can take its name) for the regression gate:
  ``verdict.gate(current.complete)``; it fails unless the gate passes, with the verdict's
  summary as the message and the gate's decision as the type.

A comparison without a numeric verdict (state ``mismatch`` or ``unknown``,
:attr:`~goldeneval.report.model.RunComparison.informational`) fails no question case:
every question case that would otherwise pass or fail is ``<skipped message="no numeric
verdict (<state>): ...">`` (a newly failing one says so, and its details are in its
``<system-out>``), since without a verdict neither a pass nor a failure is claimed; the gate
case fails as the gate does.  An errored question stays an ``<error>``: it is a fact of the
current run, not a comparison.

The suite's ``<properties>`` hold the verdict, the gate's decision, both run ids and every
measure's before, now and change (and each binary rate's paired test).  No durations are
stored per question: ``time`` is ``0``.  Under ``metadata_only`` no question text, document id,
title or answer appears anywhere in the file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC
from pathlib import Path

from goldeneval.core.gate import GateDecision
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.report import verdict_lines
from goldeneval.report.files import write_whole
from goldeneval.report.model import Flip, QuestionRow, RunComparison, Side
from goldeneval.report.text import document_label, run_label

__all__ = ["GATE_CASE", "junit_xml", "write_junit"]

GATE_CASE = "gate"
"""The ``name`` of the test case of the regression gate."""
_GATE_CLASS = "regression"
"""Appended to the questions' ``classname`` for the gate's case."""

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold (control characters, lone surrogates, U+FFFE/U+FFFF)."""
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def _xml_text(text: str) -> str:
    """``text`` with every character XML cannot hold shown escaped (``\\x1b``): ElementTree
    writes them as they are, and a parser refuses the file."""
    return _NOT_XML.sub(lambda found: repr(found.group())[1:-1], text)


def _name_part(text: str) -> str:
    return _NOT_NAME.sub("_", text).strip("_") or "_"


def _classname(comparison: RunComparison) -> str:
    """``goldeneval.<kind>.<set>``: the same for every series of the set (a pull request's
    ``pr-<n>`` as main's), so a CI's test history follows a question from run to run."""
    return f"goldeneval.{_name_part(comparison.kind)}.{_name_part(comparison.current.set_id)}"


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


def _shows_content(comparison: RunComparison) -> bool:
    return comparison.privacy is PrivacyMode.FULL


def _side_lines(comparison: RunComparison, side: Side | None, who: str) -> list[str]:
    if side is None:
        return [f"{who}: not in this run"]
    if side.status == "error":
        return [f"{who}: ERROR {side.error or ''}".rstrip()]
    marks = ("-" if value is None else ("hit" if value else "miss") for value in side.outcomes)
    parts = [", ".join(f"{name} {mark}" for name, mark in zip(comparison.rates, marks, strict=True))]
    if side.first_relevant is not None:
        parts.append(f"first relevant at rank {side.first_relevant}")
    if side.score is not None:
        parts.append(f"score {side.score:.3f}")
    lines = [f"{who}: " + "; ".join(parts)]
    if _shows_content(comparison):
        if side.documents is not None:
            lines += [f"  {rank}. {document_label(comparison, d)}" for rank, d in enumerate(side.documents, 1)]
            if not side.documents:
                lines.append("  (nothing returned)")
        if side.answer is not None:
            lines.append(f"  answer: {side.answer}")
        if side.reason:
            lines.append(f"  reason: {side.reason}")
    return lines


def _question_body(comparison: RunComparison, row: QuestionRow) -> str:
    lines = [f"question {row.id}"]
    where = ", ".join(part for part in (row.form, row.hard_class) if part)
    if where:
        lines[0] += f" [{where}]"
    if row.flipped:
        lines.append(f"flipped: {', '.join(row.flipped)}")
    if row.text is not None and _shows_content(comparison):
        lines.append(f"text: {row.text}")
    lines += _side_lines(comparison, row.earlier, "before")
    lines += _side_lines(comparison, row.current, "now")
    return "\n".join(lines)


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {key: _xml_text(value) for key, value in attributes.items()})
    if text is not None:
        element.text = _xml_text(text)
    return element


class _Counts:
    def __init__(self) -> None:
        self.tests = self.failures = self.errors = self.skipped = 0


def _question_case(suite: ET.Element, comparison: RunComparison, row: QuestionRow, counts: _Counts) -> None:
    case = _add(suite, "testcase", classname=_classname(comparison), name=row.id, time="0")
    counts.tests += 1
    current = row.current
    state = comparison.verdict.state.value
    if current is not None and current.status == "error":
        counts.errors += 1
        _add(case, "error", _question_body(comparison, row), message=current.error or "error", type="error")
    elif current is None:
        counts.skipped += 1
        _add(case, "skipped", message="not in the current run (only the earlier run has this question)")
    elif comparison.informational:
        counts.skipped += 1
        if row.flip is Flip.NEWLY_FAILING:
            message = f"no numeric verdict ({state}): newly failing for information ({', '.join(row.flipped)})"
            _add(case, "skipped", message=message)
            _add(case, "system-out", _question_body(comparison, row))
        else:
            _add(case, "skipped", message=f"no numeric verdict ({state}): the runs are not comparable")
    elif row.flip is Flip.NEWLY_FAILING:
        counts.failures += 1
        message = f"newly failing against run {comparison.verdict.previous_run_id}: {', '.join(row.flipped)}"
        _add(case, "failure", _question_body(comparison, row), message=message, type=Flip.NEWLY_FAILING.value)


def _gate_case(suite: ET.Element, comparison: RunComparison, counts: _Counts) -> None:
    verdict = comparison.verdict
    decision = verdict.gate(comparison.current.complete)
    case = _add(suite, "testcase", classname=f"{_classname(comparison)}.{_GATE_CLASS}", name=GATE_CASE, time="0")
    counts.tests += 1
    body = "\n".join([verdict.summary, *verdict_lines(verdict), *(f"note: {n}" for n in comparison.notes)])
    if decision is GateDecision.PASS:
        _add(case, "system-out", body)
    else:
        counts.failures += 1
        _add(case, "failure", body, message=verdict.summary, type=decision.value)


def _properties(suite: ET.Element, comparison: RunComparison) -> None:
    c = comparison
    verdict = c.verdict
    values: list[tuple[str, str]] = [
        ("goldeneval.kind", c.kind),
        ("goldeneval.set", c.current.set_id),
        ("goldeneval.series", c.current.model),
        ("goldeneval.current_run", c.current.id),
        ("goldeneval.earlier_run", "" if c.earlier is None else c.earlier.id),
        ("goldeneval.verdict.status", verdict.status.value),
        ("goldeneval.verdict.state", verdict.state.value),
        ("goldeneval.verdict.summary", verdict.summary),
        ("goldeneval.gate", verdict.gate(c.current.complete).value),
        ("goldeneval.informational", str(c.informational).lower()),
        ("goldeneval.privacy", c.privacy.value),
    ]
    if verdict.treatment_change:
        values.append(("goldeneval.treatment_change", verdict.treatment_change))
    for measure in c.measures:
        prefix = f"goldeneval.measure.{measure.name}"
        values += [
            (f"{prefix}.before", _number(measure.earlier)),
            (f"{prefix}.now", _number(measure.current)),
            (f"{prefix}.change", _number(measure.change)),
            (f"{prefix}.gated", str(measure.gated).lower()),
        ]
    for paired in c.paired:
        prefix = f"goldeneval.paired.{paired.rate}"
        values += [
            (f"{prefix}.questions", str(paired.questions)),
            (f"{prefix}.newly_failing", str(len(paired.newly_failing))),
            (f"{prefix}.newly_passing", str(len(paired.newly_passing))),
            (f"{prefix}.mcnemar_p", _number(paired.p_value)),
            (f"{prefix}.bootstrap_95_low", _number(paired.interval[0])),
            (f"{prefix}.bootstrap_95_high", _number(paired.interval[1])),
        ]
    properties = _add(suite, "properties")
    for name, value in values:
        _add(properties, "property", name=name, value=value)


def junit_xml(comparison: RunComparison, *, suite_name: str | None = None) -> bytes:
    """The comparison as a JUnit XML document in UTF-8 bytes, with its XML declaration (bytes,
    since a parser such as lxml refuses a str that declares an encoding): one test suite, a
    test case per question and one for the gate (see the module's description)."""
    c = comparison
    created = c.current.created_at
    if created.tzinfo is not None:
        created = created.astimezone(UTC).replace(tzinfo=None)
    name = suite_name or f"goldeneval {c.kind} {c.current.set_id} {c.current.model}"
    root = ET.Element("testsuites", {"name": _xml_text(name)})
    suite = _add(root, "testsuite", name=name, timestamp=created.isoformat(timespec="seconds"), time="0")
    _properties(suite, c)
    counts = _Counts()
    _gate_case(suite, c, counts)
    for row in c.questions:
        _question_case(suite, c, row, counts)
    summary = "\n".join(
        [
            f"now: {run_label(c.current)}",
            *([] if c.earlier is None else [f"before: {run_label(c.earlier)}"]),
            c.verdict.summary,
            *(f"note: {note}" for note in c.notes),
        ]
    )
    _add(suite, "system-out", summary)
    for element in (root, suite):
        element.set("tests", str(counts.tests))
        element.set("failures", str(counts.failures))
        element.set("errors", str(counts.errors))
        element.set("skipped", str(counts.skipped))
    root.set("time", "0")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode").encode() + b"\n"


def write_junit(comparison: RunComparison, path: Path | str, *, suite_name: str | None = None) -> Path:
    """Write :func:`junit_xml` to ``path`` whole or not at all
    (:func:`goldeneval.report.files.write_whole`); returns the path."""
    return write_whole(Path(path), junit_xml(comparison, suite_name=suite_name))
