"""The bare peer of the pooling benchmark (issue 40): a plain Python pooling loop, no goldeneval.

It reads the generated set file with :mod:`json`, makes each question's three rankings as
:func:`benchmarks.pooling.factory` does (``doc{(31 i + shift + j) mod 997}``, j < depth), pools
them in a dict of pairs and writes one ``json.dumps`` line a pair, the lines ``goldeneval pool``
writes.  It imports nothing of goldeneval (nor numpy, pydantic): the least a pooling command
can cost in CPU and memory.

    python -m benchmarks.pooling_bare SET.jsonl OUT.jsonl DEPTH
"""

from __future__ import annotations

import json
import sys

SHIFTS = (0, 7, 14)
"""As :data:`benchmarks.pooling.SHIFTS` (kept apart: this module imports nothing of the project)."""
DOCUMENTS = 997
LABEL = "benchmarks.pooling:factory?depth={depth}&shift={shift}"


def main(argv: list[str]) -> None:
    set_path, out_path, depth_text = argv
    depth = int(depth_text)
    questions: list[tuple[str, str]] = []
    with open(set_path, encoding="utf-8") as handle:
        next(handle)  # the set's own line
        for line in handle:
            item = json.loads(line)
            questions.append((item["id"], item["text"]))
    rankings = []
    for shift in SHIFTS:
        label = LABEL.format(depth=depth, shift=shift)
        ranked = {qid: [f"doc{(i * 31 + shift + j) % DOCUMENTS}" for j in range(depth)] for i, (qid, _) in
                  enumerate(questions)}  # fmt: skip
        rankings.append((label, ranked))
    found: dict[tuple[str, str], list[dict[str, object]]] = {}
    for label, ranked in rankings:
        for qid, documents in ranked.items():
            for rank, document in enumerate(documents, start=1):
                found.setdefault((qid, document), []).append({"source": label, "rank": rank})
    texts = dict(questions)
    with open(out_path, "w", encoding="utf-8") as out:
        for (qid, document), sources in found.items():
            record = {"question": qid, "document": document, "grade": None, "assessor": None, "judged_at": None,
                      "sources": sources, "question_text": texts[qid]}  # fmt: skip
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
