"""Topics files: the question text of each query id of a TREC qrels file.

Four layouts, told apart by their content (not their suffix):

* **TREC topic files** of the classic tracks (ad hoc, Robust, Web), where each ``<top>``
  holds ``<num> Number: 301``, ``<title> ...``, ``<desc> Description: ...`` and ``<narr>
  Narrative: ...``, without closing tags.  The fields are ``num``, ``title``, ``desc`` and
  ``narr`` (their labels such as ``Description:`` removed); the text is ``title`` unless a
  field is chosen.
* **XML topic files** of the later tracks (``<topics><topic number="1"><query>...``): the id
  is the topic's ``number`` (or ``id``) attribute, the fields its child elements; the text is
  ``query`` (else ``title``) unless a field is chosen.  Read by the standard library's XML
  parser.
* **JSONL**, one object per line with the id under ``_id``, ``id``, ``qid`` or ``query_id``
  (BEIR's ``queries.jsonl`` is one); the text is ``text`` (else ``title``) unless a field is
  chosen.
* **TSV**, ``<id> TAB <text>`` per line (MS MARCO's ``queries.tsv``).  A first line whose
  first cell is ``qid``, ``id``, ``query_id``, ``query-id`` or ``num`` is a header naming the
  columns, and a field may then be chosen by name.

A topic listed twice, an empty text and a chosen field a topic lacks are errors naming the
file and the line or topic.  White space inside a text (a title broken over lines) is
joined into single spaces.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from goldeneval.core.errors import GoldenSetError
from goldeneval.core.set_files import read_text

__all__ = ["TOPIC_ID_KEYS", "read_topics"]

TOPIC_ID_KEYS = ("_id", "id", "qid", "query_id", "query-id", "num", "number")
"""Where a JSONL object or a TSV header names a topic's id."""

_CLASSIC_LABELS = {"num": "Number:", "title": "Topic:", "desc": "Description:", "narr": "Narrative:"}
_CLASSIC_FIELD = re.compile(r"<([a-z]+)>", re.IGNORECASE)
_CLOSING = re.compile(r"</[a-z]+>", re.IGNORECASE)
"""A closing tag (``</title>``, ``</top>``), which some classic files add and none needs."""
_TOP = re.compile(r"<top>", re.IGNORECASE)


def read_topics(path: Path, field: str | None = None) -> dict[str, str]:
    """Topic id -> text of a topics file (module doc); ``field`` chooses the text."""
    if not path.is_file():
        raise GoldenSetError(path, "topics file not found")
    text = read_text(path, GoldenSetError).removeprefix("\ufeff")  # a byte-order mark is not text
    start = text.lstrip()[:4096].lower()
    if "<top>" in start:
        topics = _classic(path, text, field or "title")
    elif start.startswith("<"):
        topics = _xml(path, text, field)
    elif start.startswith("{"):
        topics = _jsonl(path, text, field)
    else:
        topics = _tsv(path, text, field)
    if not topics:
        raise GoldenSetError(path, "no topics in this file")
    return topics


def _clean(value: str) -> str:
    return " ".join(value.split())


class _Topics(dict[str, str]):
    """Topic id -> text, refusing a repeated id or an empty text."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def put(self, topic_id: str, text: str, where: str) -> None:
        topic_id, text = topic_id.strip(), _clean(text)
        if not topic_id:
            raise GoldenSetError(self.path, f"{where}: the topic id is empty")
        if topic_id in self:
            raise GoldenSetError(self.path, f"{where}: topic {topic_id!r} is listed twice")
        if not text:
            raise GoldenSetError(self.path, f"{where}: topic {topic_id!r} has no text")
        self[topic_id] = text


def _classic(path: Path, text: str, field: str) -> dict[str, str]:
    topics = _Topics(path)
    # each topic runs from its <top> to the next (a missing </top> does not join two topics);
    # closing tags are dropped, so <num>301</num> is the id 301
    for number, block in enumerate(_TOP.split(text)[1:], start=1):
        parts = _CLASSIC_FIELD.split(_CLOSING.sub(" ", block))
        fields: dict[str, str] = {}
        for name, value in zip(parts[1::2], parts[2::2], strict=True):
            name = name.lower()
            value = value.strip()
            label = _CLASSIC_LABELS.get(name)
            if label and value.lower().startswith(label.lower()):
                value = value[len(label) :]
            fields[name] = value.strip()
        where = f"topic #{number}"
        if "num" not in fields:
            raise GoldenSetError(path, f"{where}: no <num> field")
        if field not in fields:
            raise GoldenSetError(path, f"{where} ({fields['num']!r}): no <{field}> field")
        topics.put(fields["num"], fields[field], f"{where} ({fields['num']!r})")
    return topics


def _xml(path: Path, text: str, field: str | None) -> dict[str, str]:
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise GoldenSetError(path, f"not a TREC topic file nor well-formed XML: {exc}") from None
    topics = _Topics(path)
    for element_ in root.iter():  # names without their XML namespace: {uri}topic is a topic
        element_.tag = element_.tag.rpartition("}")[2] if isinstance(element_.tag, str) else element_.tag
    for number, topic in enumerate(root.iter("topic"), start=1):
        topic_id = topic.get("number") or topic.get("id")
        where = f"topic #{number}"
        if not topic_id:
            raise GoldenSetError(path, f"{where}: no 'number' or 'id' attribute")
        names = [field] if field else ["query", "title"]
        element = next((found for name in names if (found := topic.find(name)) is not None), None)
        if element is None:
            raise GoldenSetError(path, f"{where} ({topic_id!r}): no <{names[0]}> element")
        topics.put(topic_id, "".join(element.itertext()), f"{where} ({topic_id!r})")
    return topics


def _jsonl(path: Path, text: str, field: str | None) -> dict[str, str]:
    topics = _Topics(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenSetError(path, f"{where}: not valid JSON ({exc.msg})") from None
        if not isinstance(item, dict):
            raise GoldenSetError(path, f"{where}: expected a JSON object")
        key = next((key for key in TOPIC_ID_KEYS if key in item), None)
        if key is None or not isinstance(item[key], str | int):
            raise GoldenSetError(path, f"{where}: no topic id (one of {', '.join(TOPIC_ID_KEYS)})")
        names = [field] if field else ["text", "title"]
        name = next((name for name in names if name in item), names[0])
        value = item.get(name)
        if not isinstance(value, str):
            raise GoldenSetError(path, f"{where} (id {str(item[key])!r}): field {name!r}: missing or not a string")
        topics.put(str(item[key]), value, where)
    return topics


def _tsv(path: Path, text: str, field: str | None) -> dict[str, str]:
    topics = _Topics(path)
    rows = list(enumerate(csv.reader(text.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE), start=1))
    rows = [(lineno, row) for lineno, row in rows if row and any(cell.strip() for cell in row)]
    column = 1
    if rows and rows[0][1][0].strip().lower() in TOPIC_ID_KEYS:
        header = [cell.strip().lower() for cell in rows[0][1]]
        rows = rows[1:]
        if field is not None:
            if field.lower() not in header:
                raise GoldenSetError(path, f"line 1: no column {field!r} in the header ({', '.join(header)})")
            column = header.index(field.lower())
    elif field is not None:
        raise GoldenSetError(path, f"--topic-field {field!r}: a TSV topics file needs a header line naming it")
    for lineno, row in rows:
        if len(row) <= column:
            raise GoldenSetError(path, f"line {lineno}: expected <id> TAB <text>, found {len(row)} column(s)")
        topics.put(row[0], row[column], f"line {lineno}")
    return topics
