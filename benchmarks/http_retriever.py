"""What measuring over HTTP costs: ``goldeneval.http`` against a local search service that
answers at once, side by side with the same ranking as an in-process Python plug-in.

Both sides run the command a user runs, as a whole process (``goldeneval retrieval ... --workers
8``), on the same generated golden set (``--questions`` questions over the bundled transit
corpus, default 4000), into a fresh store each; both rank with :func:`rank` (term overlap over
an inverted index: microseconds a question), the service in a process of its own (a minimal
asyncio HTTP/1.1 server with keep-alive, so that the service itself costs next to nothing),
the plug-in (``benchmarks.http_retriever:factory``) in goldeneval's.  Each round runs both
sides back to back (alternating which goes first), so that the machine's drifting load bends
both alike; the report is the median of the rounds' wall-time
ratios (the issue's target: at most 1.5), each side's median wall and CPU time (the
``goldeneval`` process tree by ``wait4``, plus the service's CPU while it answered), and the
wall time HTTP adds a question.  Both runs must find the same documents for every question,
or the script exits 1.

The wire alone (issue 44): one thread asks ``--wire-questions`` questions in a row through
:class:`~goldeneval.retrieval.retrievers.http.HTTPRetriever` and through a bare
``http.client`` keep-alive loop (one ``HTTPConnection``, ``request``, ``getresponse``, ``read``,
``json.loads``), against the same service, rounds alternating which goes first; the report is
each side's median wall and CPU time a question (this process's CPU: the client's own work)
and the median of the rounds' ratios (the target: at most 1.0).  Both must find the same ids.

    .venv/bin/python -m benchmarks.http_retriever [--questions 4000] [--rounds 5] [--workers 8] [--wire-questions 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
TRANSIT = REPO / "goldeneval" / "sample" / "transit"
GOLDENEVAL = Path(sys.executable).with_name("goldeneval")
PLUGIN = "benchmarks.http_retriever:factory"


# ------------------------------------------------------------------ the ranking both sides share


@functools.cache
def _index() -> tuple[dict[str, list[int]], list[str]]:
    """term -> the documents holding it, and the document ids (sorted)."""
    ids: list[str] = []
    postings: dict[str, list[int]] = defaultdict(list)
    for position, path in enumerate(sorted((TRANSIT / "corpus").rglob("*.md"))):
        ids.append(path.relative_to(TRANSIT / "corpus").with_suffix("").as_posix())
        for term in set(re.findall(r"[a-z0-9]+", path.read_text(encoding="utf-8").lower())):
            postings[term].append(position)
    return dict(postings), ids


def rank(question: str, limit: int) -> list[str]:
    """Documents by how many distinct terms of the question they hold, ties by id."""
    postings, ids = _index()
    scores: dict[int, int] = defaultdict(int)
    for term in set(re.findall(r"[a-z0-9]+", question.lower())):
        for doc in postings.get(term, ()):
            scores[doc] += 1
    ranked = sorted(scores, key=lambda doc: (-scores[doc], doc))
    return [ids[doc] for doc in ranked[:limit]]


class InProcess:
    def retrieve(self, question: str, limit: int) -> list[str]:
        return rank(question, limit)


def factory(_context: object) -> InProcess:
    """The plug-in side: ``--retriever benchmarks.http_retriever:factory``."""
    _index()
    return InProcess()


# ------------------------------------------------------------------ the service side


class _Service(asyncio.Protocol):
    """The least a keep-alive HTTP/1.1 JSON service can do in Python: requests are parsed only
    as far as their ``Content-Length``, and answered with :func:`rank` at once."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            request = json.loads(self.buffer[end + 4 : end + 4 + length])
            self.buffer = self.buffer[end + 4 + length :]
            body = json.dumps(rank(request["question"], request["limit"])).encode()
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            assert isinstance(self.transport, asyncio.WriteTransport)
            self.transport.write(head + body)


async def _serve(port_file: Path) -> None:
    server = await asyncio.get_running_loop().create_server(_Service, "127.0.0.1", 0)
    port_file.write_text(str(server.sockets[0].getsockname()[1]))
    await server.serve_forever()


def serve(port_file: Path) -> None:
    """Answer on an ephemeral port of 127.0.0.1 (written to ``port_file``) until killed."""
    _index()
    asyncio.run(_serve(port_file))


# ------------------------------------------------------------------ the harness


def write_set(path: Path, n: int) -> Path:
    """``n`` questions: the transit-sample questions over and over, each text made distinct."""
    sample = yaml.safe_load((TRANSIT / "golden.yaml").read_text(encoding="utf-8"))["questions"]
    lines = [json.dumps({"set": {"id": "http-benchmark", "corpus": str(TRANSIT / "corpus")}})]
    for i in range(n):
        base = sample[i % len(sample)]
        text = f"{base['text']} (variant {i // len(sample)})"
        lines.append(json.dumps({"id": f"q{i:06d}", "text": text, "form": base["form"], "expected": base["expected"]}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class Measured:
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    """CPU time of the ``goldeneval`` process tree."""
    service_cpu_s: list[float] = field(default_factory=list)
    """CPU time of the service while it answered that run."""


def _service_cpu_s(pid: int | None) -> float:
    """User and system time of the running service so far (Linux ``/proc``; 0 elsewhere)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_cli(
    set_path: Path, work: Path, retriever: str, options: Sequence[str], workers: int, service: int | None
) -> tuple[float, float, float, Any]:
    """One ``goldeneval retrieval`` into a fresh store: its wall time, the CPU time of its process
    tree (``wait4``) and of the service meanwhile (``/proc``), and its JSON output."""
    store = work / f"{time.monotonic_ns()}.duckdb"
    args = [str(GOLDENEVAL), "retrieval", "--set", str(set_path), "--retriever", retriever, "--store", str(store)]
    args += ["--workers", str(workers), "--no-progress", "--format", "json"]
    for option in options:
        args += ["--option", option]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    output, errors = work / "stdout.json", work / "stderr.txt"
    service_before = _service_cpu_s(service)
    with output.open("wb") as stdout, errors.open("wb") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        wall_s = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    service_cpu_s = _service_cpu_s(service) - service_before
    if process.returncode != 0:
        raise SystemExit(f"{retriever} exited {process.returncode}: {errors.read_text()[-2000:]}")
    return wall_s, usage.ru_utime + usage.ru_stime, service_cpu_s, json.loads(output.read_text())


def _bare_loop(port: int, questions: Sequence[str], limit: int) -> list[list[str]]:
    """The peer: ``http.client`` on one kept-alive connection, as a script would ask."""
    connection = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    found = []
    try:
        for question in questions:
            connection.request("POST", "/search", json.dumps({"question": question, "limit": limit}), headers)
            found.append(json.loads(connection.getresponse().read()))
    finally:
        connection.close()
    return found


def _retriever_loop(port: int, questions: Sequence[str], limit: int) -> list[list[str]]:
    """goldeneval's side: ``goldeneval.http`` built as ``--option url=...`` builds it."""
    from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
    from goldeneval.retrieval.retrievers.http import HTTPRetriever

    context = RetrieverContext(
        corpus=None, cache_dir=Path("unused"), options={"url": f"http://127.0.0.1:{port}/search"}
    )
    retriever = build_retriever("goldeneval.http", context)
    assert isinstance(retriever, HTTPRetriever)
    try:
        return [retriever.retrieve(question, limit) for question in questions]
    finally:
        retriever.close()


def measure_wire(port: int, n: int, rounds: int) -> dict[str, Any]:
    """Per question, one thread: ``goldeneval.http`` against a bare ``http.client`` loop."""
    sample = yaml.safe_load((TRANSIT / "golden.yaml").read_text(encoding="utf-8"))["questions"]
    questions = [f"{sample[i % len(sample)]['text']} (variant {i})" for i in range(n)]
    sides = {"goldeneval.http": _retriever_loop, "http.client": _bare_loop}
    for loop in sides.values():  # warm both (imports, the service's index, the first connection)
        loop(port, questions[:200], 10)
    wall: dict[str, list[float]] = {side: [] for side in sides}
    cpu: dict[str, list[float]] = {side: [] for side in sides}
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    found: dict[str, list[list[str]]] = {}
    for round_number in range(rounds):
        order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
        for side in order:
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            found[side] = sides[side](port, questions, 10)
            wall[side].append((time.perf_counter() - start_wall) / n * 1e6)
            cpu[side].append((time.process_time() - start_cpu) / n * 1e6)
        ratios.append(wall["goldeneval.http"][-1] / wall["http.client"][-1])
        cpu_ratios.append(cpu["goldeneval.http"][-1] / cpu["http.client"][-1])
        if found["goldeneval.http"] != found["http.client"]:
            raise SystemExit("goldeneval.http and the http.client loop found different ids")
    return {
        "questions": n,
        "rounds": rounds,
        "wall_us": {side: statistics.median(values) for side, values in wall.items()},
        "cpu_us": {side: statistics.median(values) for side, values in cpu.items()},
        "wall_ratio": statistics.median(ratios),
        "cpu_ratio": statistics.median(cpu_ratios),
        "round_ratios": ratios,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--wire-questions", type=int, default=5000, help="questions of each wire round (0: none)")
    parser.add_argument("--wire-rounds", type=int, default=7)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON (benchmarks.run's http section)")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    http, plugin = "goldeneval.http", PLUGIN
    measured = {http: Measured(), plugin: Measured()}
    ratios: list[float] = []
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        set_path = write_set(work / "questions.jsonl", args.questions)
        port_file = work / "port"
        server = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.http_retriever", "--serve", str(port_file)], cwd=REPO
        )
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the search service did not start")
                time.sleep(0.05)
            port = int(port_file.read_text())
            wire = measure_wire(port, args.wire_questions, args.wire_rounds) if args.wire_questions else None
            options = {http: [f"url=http://127.0.0.1:{port}/search"], plugin: []}
            services = {http: server.pid, plugin: None}
            for round_number in range(args.rounds):  # each round runs both sides, back to back
                order = [http, plugin] if round_number % 2 == 0 else [plugin, http]
                for side in order:
                    wall_s, cpu_s, service_cpu_s, document = run_cli(
                        set_path, work, side, options[side], args.workers, services[side]
                    )
                    measured[side].wall_s.append(wall_s)
                    measured[side].cpu_s.append(cpu_s)
                    measured[side].service_cpu_s.append(service_cpu_s)
                    found[side] = {q["id"]: q["documents"] for q in document["questions"]}
                    failed = [q["error"] for q in document["questions"] if q["error"]]
                    if failed:
                        raise SystemExit(f"{side}: {len(failed)} errors, e.g. {failed[0]}")
                ratios.append(measured[http].wall_s[-1] / measured[plugin].wall_s[-1])
        finally:
            server.terminate()
            server.wait()
    if found[http] != found[plugin]:
        raise SystemExit("the two sides found different documents")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.questions} questions, --workers {args.workers}, {args.rounds} rounds, load average {load}")
    print("| side | median wall | median CPU, goldeneval | median CPU, service | wall of each round |")
    print("| --- | --- | --- | --- | --- |")
    for side, label in ((http, "goldeneval.http, local service"), (plugin, "in-process plug-in")):
        rounds = ", ".join(f"{s:.2f}" for s in measured[side].wall_s)
        wall, cpu = statistics.median(measured[side].wall_s), statistics.median(measured[side].cpu_s)
        service_cpu = statistics.median(measured[side].service_cpu_s)
        print(f"| {label} | {wall:.2f} s | {cpu:.2f} s | {service_cpu:.2f} s | {rounds} |")
    extra_ms = (statistics.median(measured[http].wall_s) - statistics.median(measured[plugin].wall_s)) * 1000
    total_cpu = {side: [a + b for a, b in zip(m.cpu_s, m.service_cpu_s, strict=True)] for side, m in measured.items()}
    cpu_ratio = statistics.median(total_cpu[http]) / statistics.median(total_cpu[plugin])
    print(
        f"wall ratio http / plug-in, median of the rounds' ratios: {statistics.median(ratios):.2f} "
        f"(each round: {', '.join(f'{r:.2f}' for r in ratios)}; target <= 1.5); CPU ratio (goldeneval and service) "
        f"{cpu_ratio:.2f}; "
        f"HTTP adds {extra_ms / args.questions:.3f} ms of wall time a question"
    )
    print("both sides found the same documents for every question")
    if wire is not None:
        print(
            f"the wire, one thread, {wire['questions']} questions x {wire['rounds']} rounds: goldeneval.http "
            f"{wire['wall_us']['goldeneval.http']:.1f} us wall, {wire['cpu_us']['goldeneval.http']:.1f} us CPU a "
            f"question; http.client loop {wire['wall_us']['http.client']:.1f} us wall, "
            f"{wire['cpu_us']['http.client']:.1f} us CPU; ratio {wire['wall_ratio']:.2f} wall, "
            f"{wire['cpu_ratio']:.2f} CPU (target <= 1.0)"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "questions": args.questions,
                    "workers": args.workers,
                    "rounds": args.rounds,
                    "wall_ratio": statistics.median(ratios),
                    "round_ratios": ratios,
                    "cpu_ratio": cpu_ratio,
                    "extra_ms_a_question": extra_ms / args.questions,
                    "sides": {
                        side: {
                            "wall_s": statistics.median(m.wall_s),
                            "cpu_s": statistics.median(m.cpu_s),
                            "service_cpu_s": statistics.median(m.service_cpu_s),
                        }
                        for side, m in measured.items()
                    },
                    "wire": wire,
                    "command": (
                        f"python -m benchmarks.http_retriever --rounds {args.rounds} --questions {args.questions} "
                        f"--wire-questions {args.wire_questions} --wire-rounds {args.wire_rounds}"
                    ),
                }
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
