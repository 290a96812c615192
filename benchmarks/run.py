"""The benchmark suite of issue 11: one command regenerates ``benchmarks/RESULTS.md`` and
``benchmarks/results.json``.

    .venv/bin/python -m benchmarks.run                       # every section, full sizes
    .venv/bin/python -m benchmarks.run --only overhead,dagster
    .venv/bin/python -m benchmarks.run --quick --out /tmp/bench   # tiny sizes (the test)

Sections, each run in a process of its own (so its peak RSS is its own), every goldeneval
command run as a whole process (``goldeneval retrieval``, start-up included), its wall time
and peak RSS (the largest process of its tree, from ``wait4``) measured from outside:

``startup``
    ``goldeneval --help``, a warm 81-question lexical run and ``goldeneval runs``, each paired in
    every round with a Python process importing only what that command cannot do without
    (``benchmarks/startup.py``).
``engine``
    ``benchmarks.engine`` at 10k / 100k / 1M questions: goldeneval's columnar core against a
    numpy floor, pytrec-eval and ranx (its first-call JIT reported apart); a peer whose whole run
    would exceed the machine's memory share is measured in chunks of 100k questions (each built,
    scored and discarded; times summed), one whose time would exceed the budget is skipped.
``overhead``
    ``goldeneval retrieval`` with a zero-cost in-memory retriever (``benchmarks.zero_retriever``)
    on generated sets of 10 questions (the start-up cost) and 1k / 10k / 100k questions, into an
    empty store (a first, baseline run) and again into that store (a run compared with it, as
    every nightly run is): framework time per question, and time and peak RSS against
    question count.  In rounds, each running every size once: a cost per question is a
    difference between two sizes, so both are measured minutes apart, at the same speed of a
    machine whose speed drifts; the median over rounds is reported, with the range.
``scifact``
    ``goldeneval retrieval --retriever goldeneval.lexical`` on SciFact (BEIR folder) against a
    bm25s plus pytrec-eval script (``benchmarks/bm25s_bare.py``: retrieve, write a TREC run,
    score it with the metrics goldeneval reports) on the same 300 queries, both as whole
    processes, cold (no index cached) and warm (index cached); whether both return the same
    documents and the same metrics; and issue 26's target (warm within 1.5x).
``dense``
    ``goldeneval retrieval --retriever goldeneval.dense`` cold (empty cache: every chunk
    encoded) and warm (the same cache), counting the embeddings the cache holds after each.
``memory``
    ``goldeneval retrieval`` at 100k and 1M generated questions, string ids in and a stored run out,
    against the set's own size in memory (``benchmarks/memory.py``).
``command``
    ``goldeneval.command`` against a bare pipe loop over the same Perl program, one question at a
    time, and as ``goldeneval retrieval`` asks it (``benchmarks/command_retriever.py``).
``report_html``
    ``goldeneval.report.html.write_report`` on synthetic comparisons of 10k / 100k questions against
    ``comparison_json`` + ``json.dumps`` of the same comparison (time, file size), and the report's
    first paint in headless Chromium against a blank page (``benchmarks/report_html.py``).
``answer_calibration``
    The answer graders (``deterministic``, the previous default's token F1, and ``semantic``
    with the ``dense`` extra) against the labelled calibration set of issue 42: accuracy and
    precision / recall of "correct", per case class (``benchmarks/answer_calibration.py``).
``pooling``
    ``goldeneval pool`` of 10k questions x 3 zero-cost retrievers at depth 20 (new file, and again)
    against peers in the same run: the retrievers alone, the retrievers and a plain pooling
    loop, and a bare plain loop without goldeneval (``benchmarks/pooling.py``).
``judge_page``
    ``goldeneval judge`` on a 500,000-pair judgments file: start-up, the sizes of its answers,
    and first paint in headless Chromium against a blank page and a 5-pair page
    (``benchmarks/judge_page.py``).
``dagster``
    The README's main command (``pipelines.main``: the ``nightly_evaluation`` job per partition,
    then the regression checks) against ``goldeneval retrieval`` for the same partitions, cold
    and warm; what each warm build took from the cache; the cache files a warm run wrote; and
    Dagster's own floor (``benchmarks/dagster_floor.py``: two empty one-asset jobs) and the job's
    Parquet tables written again by pyarrow alone (``benchmarks/tables_floor.py``).

The header states the machine, versions, thread settings and the load average around each
section (the machine may be shared: a load above its core count means contention).  Every
ratio is computed from two measurements of the same run of this command.  Nothing here is a
test: numbers are reported, never asserted.  ``--only`` re-measures some sections and keeps the
others from the existing ``results.json`` (each section keeps its own date).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.answer_calibration import render_answer_calibration, section_answer_calibration
from benchmarks.command_retriever import command_targets, render_command, section_command
from benchmarks.judge_page import render as render_judge_page
from benchmarks.judge_page import section_judge_page
from benchmarks.measure import (
    REPO,
    SAMPLE_SET,
    ZERO_RETRIEVER,
    CommandFailed,
    checked,
    clean_env,
    goldeneval_command,
    measure,
    median,
    mib,
    ratio,
    secs,
    yes,
)
from benchmarks.memory import memory_targets, render_memory, section_memory
from benchmarks.pooling import render_pooling, section_pooling
from benchmarks.report_html import render_report_html, section_report_html
from benchmarks.startup import render_startup, section_startup, startup_targets

BENCHMARKS = REPO / "benchmarks"
DEFAULT_DATA = REPO.parent / "shared" / "datasets" / "scifact"
SECTIONS = (
    "startup",
    "engine",
    "overhead",
    "scifact",
    "dense",
    "dagster",
    "paths",
    "memory",
    "http",
    "command",
    "report_html",
    "answer_calibration",
    "pooling",
    "judge_page",
)
QUICK_SECTIONS = ("engine", "overhead")
THREAD_ENV = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "RAYON_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
)
PACKAGES = (
    "goldeneval",
    "numpy",
    "pyarrow",
    "duckdb",
    "dagster",
    "bm25s",
    "PyStemmer",
    "pytrec-eval-terrier",
    "ranx",
    "numba",
    "torch",
    "sentence-transformers",
    "scipy",
)
LARGE_REPEAT_LIMIT = 100_000
"""Question counts above this are measured in the first round of the overhead section only
(minutes each).  Up to 100,000 every round measures them: a single run on a shared 2-core
machine varies by a second."""
STARTUP_QUESTIONS = 10
"""The smallest set of the overhead section, whose time stands for the start-up cost.  (Not 1: a
1-question run compared with an earlier one fails in scipy's bootstrap, which needs two.)"""


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


# --------------------------------------------------------------------------------------------
# Header: machine, versions, threads
# --------------------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_revision() -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()

    changed = [line for line in git("status", "--porcelain", "--untracked-files=no").splitlines() if line.strip()]
    return {"commit": git("rev-parse", "HEAD") or "unknown", "changed_tracked_files": len(changed)}


def header() -> dict[str, Any]:
    from importlib.metadata import version

    versions = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            versions[package] = version(package)
        except Exception:
            versions[package] = "absent"
    threads: dict[str, Any] = {name: os.environ.get(name, "unset") for name in THREAD_ENV}
    try:
        import torch

        threads["torch.get_num_threads()"] = torch.get_num_threads()
    except ImportError:
        threads["torch.get_num_threads()"] = "torch absent"
    try:
        import numba

        threads["numba.config.NUMBA_NUM_THREADS"] = getattr(numba.config, "NUMBA_NUM_THREADS", "unknown")
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

        threads["blas"] = [
            f"{pool.get('internal_api')} {pool.get('num_threads')} threads" for pool in threadpool_info()
        ] or "none loaded"
    except ImportError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "memory_gib": round(memory / 2**30, 1),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "git": git_revision(),
        "versions": versions,
        "threads": threads,
    }


# --------------------------------------------------------------------------------------------
# Section: scoring engines
# --------------------------------------------------------------------------------------------


def section_engine(options: dict[str, Any], work: Path) -> dict[str, Any]:
    out = work / "engine.json"
    command = [
        sys.executable,
        "-m",
        "benchmarks.engine",
        "--sizes",
        ",".join(str(n) for n in options["engine_sizes"]),
        "--peers",
        options["engine_peers"],
        "--memory-share",
        str(options["memory_share"]),
        "--max-seconds",
        str(options["engine_max_seconds"]),
        "--json",
        str(out),
    ]
    log = work / "engine.log"
    result = checked(measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=options["timeout_s"]), log)
    report = json.loads(out.read_text())
    return {
        "command": result.command,
        "wall_s": result.wall_s,
        "report": report,
        "table": log.read_text(encoding="utf-8"),
    }


# --------------------------------------------------------------------------------------------
# Section: framework overhead and growth with question count
# --------------------------------------------------------------------------------------------


def _zero_run(set_path: Path, store: Path, cache: Path, timing: Path, log: Path, timeout_s: float) -> dict[str, Any]:
    timing.unlink(missing_ok=True)
    command = [
        goldeneval_command(),
        "retrieval",
        "--set",
        str(set_path),
        "--retriever",
        ZERO_RETRIEVER,
        "--option",
        f"timing={timing}",
        "--no-progress",
        "--store",
        str(store),
        "--cache-dir",
        str(cache),
    ]
    env = clean_env(GOLDENEVAL_TABLES=store.parent / "tables")
    result = checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=timeout_s), log)
    factory = json.loads(timing.read_text())
    return {**asdict(result), "retriever_factory_s": factory["factory_s"]}


REFERENCE_WORKLOAD = """
import time
start = time.perf_counter()
ids = [f"document-{i}#0" for i in range(2_000)]
codes = {}
for _ in range(500):
    for doc in ids:
        codes.setdefault(doc, len(codes))
    rows = [(doc, len(doc), doc.split("#")[0]) for doc in ids]
    rows.sort(key=lambda row: row[2])
print(time.perf_counter() - start)
"""
"""A fixed pure-Python workload (dictionary probes, small objects, a sort: what goldeneval's
per-question work is made of), timed in a fresh interpreter at the start of every round of the
overhead section: how fast the machine was then.  On a shared virtual machine that speed drifts
by a third within an hour, which moves every absolute time with it."""


def _reference_run(log: Path, timeout_s: float) -> float | None:
    """Seconds the reference workload took, by its own clock (interpreter start-up excluded);
    None when it failed (the round is measured all the same: the reference only describes it)."""
    command = [sys.executable, "-c", REFERENCE_WORKLOAD]
    try:
        checked(measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=timeout_s), log)
        return float(log.read_text(encoding="utf-8").split()[-1])
    except (CommandFailed, ValueError, IndexError) as exc:
        print(f"overhead: the reference workload failed: {str(exc).splitlines()[0] if str(exc) else exc!r}")
        return None


def section_overhead(options: dict[str, Any], work: Path) -> dict[str, Any]:
    """Every size, baseline then compared, once per round; the rounds one after the other.

    Interleaving keeps the sizes of one round minutes apart, so a marginal cost (a difference
    between two sizes) is taken from runs made at the same machine speed; each round's marginal
    is computed on its own and the headline is the median over rounds (min and max reported)."""
    from benchmarks.zero_retriever import write_set

    sizes = sorted({STARTUP_QUESTIONS, *options["questions"]})
    sets = {}
    for n in sizes:
        (work / f"n{n}").mkdir()
        sets[n] = write_set(work / f"n{n}" / "set.jsonl", n)
    rounds: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for r in range(options["overhead_rounds"]):
        reference_s = _reference_run(work / f"reference-{r}.log", options["timeout_s"])
        rows: list[dict[str, Any]] = []
        for n in sizes:
            if r > 0 and n > LARGE_REPEAT_LIMIT:
                continue  # minutes each: measured in the first round only
            if any(failure["run"] == "baseline" and failure["questions"] <= n for failure in failed):
                break  # a size whose first run failed, and every larger one, are not tried again
            folder = work / f"n{n}"
            store, cache, timing = folder / f"round-{r}.duckdb", folder / "cache", folder / "timing.json"
            try:
                baseline = _zero_run(sets[n], store, cache, timing, folder / f"baseline-{r}.log", options["timeout_s"])
            except CommandFailed as exc:
                failed.append({"questions": n, "round": r, "run": "baseline", "error": str(exc).split("\n", 1)[0]})
                print(f"overhead: round {r + 1}, {n:,} questions failed: {failed[-1]['error']}", flush=True)
                break
            row: dict[str, Any] = {"questions": n, "baseline": baseline, "compared": []}
            try:
                compared = _zero_run(sets[n], store, cache, timing, folder / f"compared-{r}.log", options["timeout_s"])
            except CommandFailed as exc:
                failed.append({"questions": n, "round": r, "run": "compared", "error": str(exc).split("\n", 1)[0]})
                print(f"overhead: round {r + 1}, {n:,} questions, compared run failed: {failed[-1]['error']}")
            else:
                row |= {
                    "compared": [compared],
                    "compared_wall_s": compared["wall_s"],
                    "compared_cpu_s": compared["user_s"] + compared["system_s"],
                    "compared_factory_s": compared["retriever_factory_s"],
                    "compared_peak_rss_bytes": compared["peak_rss_bytes"],
                }
            rows.append(row | {"store_bytes": store.stat().st_size})
            shown = f"{row['compared_wall_s']:.2f} s" if row["compared"] else "failed"
            print(
                f"overhead: round {r + 1}, {n:,} questions: baseline {baseline['wall_s']:.2f} s, compared {shown}",
                flush=True,
            )
        if len(rows) >= 2:
            rounds.append({"reference_s": reference_s, "rows": rows, "derived": overhead_derived(rows)})
    if not rounds:
        raise CommandFailed(failed[0]["error"] if failed else "fewer than two sizes measured")
    return {
        "rounds": rounds,
        "rows": overhead_rows(rounds),
        "failed": failed,
        "derived": overhead_across_rounds(rounds),
        "command": rounds[0]["rows"][-1]["baseline"]["command"],
    }


def overhead_rows(rounds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per size for the table: the median run over the rounds that measured it."""
    by_n: dict[int, list[dict[str, Any]]] = {}
    for measured in rounds:
        for size_row in measured["rows"]:
            by_n.setdefault(size_row["questions"], []).append(size_row)
    rows = []
    for n, measured_rows in sorted(by_n.items()):
        baselines = [measured["baseline"] for measured in measured_rows]
        compared = [run for measured in measured_rows for run in measured["compared"]]
        row: dict[str, Any] = {
            "questions": n,
            "rounds": len(measured_rows),
            "baseline": sorted(baselines, key=lambda run: run["wall_s"])[len(baselines) // 2],
            "compared": compared,
            "store_bytes": max(measured["store_bytes"] for measured in measured_rows),
        }
        if compared:
            row |= {
                "compared_wall_s": median([run["wall_s"] for run in compared]),
                "compared_cpu_s": median([run["user_s"] + run["system_s"] for run in compared]),
                "compared_factory_s": median([run["retriever_factory_s"] for run in compared]),
                "compared_peak_rss_bytes": max(run["peak_rss_bytes"] for run in compared),
            }
        rows.append(row)
    return rows


def overhead_across_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each round's :func:`overhead_derived`, combined: every per-question cost is the median
    over the rounds that measured it, with the range of the reference workload's times (the
    machine's speed during the section).

    The headline is taken over one interval for every round: between the two largest sizes
    that every round measured (a size over :data:`LARGE_REPEAT_LIMIT`, measured in the first
    round only, or one that failed in a round, is left out of it), each round's value computed
    from its own runs; ``per_round_us`` keeps those values, ``spread`` their min and max."""
    derived_rounds = [measured["derived"] for measured in rounds]

    def combined(values: list[Any]) -> Any:
        if all(isinstance(value, dict) for value in values):
            keys = dict.fromkeys(key for value in values for key in value)
            return {key: combined([value[key] for value in values if key in value]) for key in keys}
        if all(isinstance(value, float) for value in values):
            return median(values)
        return values[0]  # sizes and interval labels ("1000->10000"): one meaning in every round

    result: dict[str, Any] = combined(derived_rounds)
    headline: dict[str, Any] = {}
    spread: dict[str, dict[str, float]] = {}
    per_round: dict[str, list[float]] = {}
    for kind, label in (("baseline", "between"), ("compared", "between_compared")):
        costs = [{clock: _costs(measured["rows"], kind, clock) for clock in CLOCKS} for measured in rounds]
        common = sorted(set.intersection(*(set(cost["wall"]) for cost in costs)))
        if len(common) < 2:
            continue
        a, b = (common[-2], common[-1]) if len(common) >= 3 else (common[0], common[-1])
        headline[label] = f"{a}->{b}"
        for clock in CLOCKS:
            values = [(cost[clock][b] - cost[clock][a]) / (b - a) * 1e6 for cost in costs]
            headline[f"{kind}_{clock}"] = median(values)
            spread[f"{kind}_{clock}"] = {"min": min(values), "max": max(values)}
            per_round[f"{kind}_{clock}"] = values
    result["headline_marginal_us"] = headline
    result["rounds"] = len(rounds)
    result["spread"] = spread
    result["per_round_us"] = per_round
    references = [measured["reference_s"] for measured in rounds if measured.get("reference_s") is not None]
    if references:
        result["reference_s"] = {"min": min(references), "median": median(references), "max": max(references)}
    return result


CLOCKS = ("wall", "cpu")


def _costs(rows: list[dict[str, Any]], kind: str, clock: str) -> dict[int, float]:
    """Seconds of goldeneval's own work at each size of one round's ``kind`` runs (``baseline``
    or ``compared``): wall time, or CPU time (user + system, the whole process tree), with the
    retriever's own time (its factory's precomputation) subtracted.  A size whose compared run
    failed has no compared cost."""
    costs = {}
    for row in rows:
        if kind == "baseline":
            run = row["baseline"]
            spent = run["wall_s"] if clock == "wall" else run["user_s"] + run["system_s"]
            costs[row["questions"]] = float(spent - run["retriever_factory_s"])
        elif row["compared"]:
            spent = row["compared_wall_s"] if clock == "wall" else row["compared_cpu_s"]
            costs[row["questions"]] = float(spent - row["compared_factory_s"])
    return costs


def overhead_derived(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-question framework cost (:func:`_costs`, in wall time and in CPU time, which
    contention from other processes does not inflate): marginal between consecutive sizes, and
    beyond the smallest set's (the start-up's) cost.  A size whose compared run failed counts
    for the baseline runs only."""
    derived: dict[str, Any] = {"startup_questions": min(row["questions"] for row in rows)}
    headline: dict[str, Any] = {}
    for kind in ("baseline", "compared"):
        sizes = sorted(_costs(rows, kind, "wall"))
        if len(sizes) < 2:
            continue
        between = f"{sizes[-2]}->{sizes[-1]}" if len(sizes) >= 3 else f"{sizes[0]}->{sizes[-1]}"
        headline["between" if kind == "baseline" else "between_compared"] = between
        for clock in CLOCKS:
            cost = _costs(rows, kind, clock)
            start = cost[sizes[0]]
            beyond = {str(n): (cost[n] - start) / (n - sizes[0]) * 1e6 for n in sizes[1:]}
            marginal = {f"{a}->{b}": (cost[b] - cost[a]) / (b - a) * 1e6 for a, b in itertools.pairwise(sizes[1:])}
            derived[f"{kind}_{clock}"] = {"startup_s": start, "beyond_startup_us": beyond, "marginal_us": marginal}
            headline[f"{kind}_{clock}"] = marginal[between] if len(sizes) >= 3 else beyond[str(sizes[-1])]
    derived["headline_marginal_us"] = headline
    return derived


# --------------------------------------------------------------------------------------------
# Section: SciFact lexical, goldeneval retrieval against bm25s plus pytrec-eval
# --------------------------------------------------------------------------------------------

SCIFACT_TARGET_RATIO = 1.5
DAGSTER_TARGET_RATIO = 1.5
"""Issue 26: the README's main command within this many times the CLI for the same partitions."""
"""Issue 26: a warm run within 1.5x of bm25s plus pytrec-eval, both whole processes."""

METRIC_TOLERANCE = 1e-9


def _lexical_run(data: Path, store: Path, cache: Path, log: Path, timeout_s: float) -> dict[str, Any]:
    command = [
        goldeneval_command(),
        "retrieval",
        "--set",
        str(data),
        "--retriever",
        "goldeneval.lexical",
        "--no-progress",
        "--format",
        "json",
        "--store",
        str(store),
        "--cache-dir",
        str(cache),
    ]
    env = clean_env(GOLDENEVAL_TABLES=store.parent / "tables")
    result = checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=timeout_s), log)
    text = log.read_text(encoding="utf-8")
    document = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return {
        **asdict(result),
        "run_id": document["run"]["id"],
        "questions": document["run"]["questions"],
        "metrics": document["measurement"]["metrics"],
    }


def peer_metric_key(metric: dict[str, Any]) -> str:
    """The peer's key for one of goldeneval's reported metrics: the trec_eval measure goldeneval
    says it equals (its ``trec_eval`` field), except MRR@k, which is ``recip_rank`` on the run
    cut at k and which ``bm25s_bare.py`` names ``recip_rank_<k>``."""
    kind, _, k = metric["name"].partition("@")
    return f"recip_rank_{k}" if kind == "mrr" else str(metric["trec_eval"])


def metric_differences(ours: list[dict[str, Any]], peer: dict[str, float]) -> dict[str, float | None]:
    """Per goldeneval metric, its absolute difference from the peer's value (None: the peer has none)."""
    found: dict[str, float | None] = {}
    for metric in ours:
        theirs = peer.get(peer_metric_key(metric))
        found[metric["name"]] = None if theirs is None else abs(metric["value"] - theirs)
    return found


def _bare_run(data: Path, run_file: Path, index_dir: Path, log: Path, timeout_s: float) -> dict[str, Any]:
    command = [
        sys.executable,
        str(BENCHMARKS / "bm25s_bare.py"),
        str(data),
        "--run",
        str(run_file),
        "--index-dir",
        str(index_dir),
    ]
    result = checked(measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=timeout_s), log)
    lines = log.read_text(encoding="utf-8").strip().splitlines()
    return {**asdict(result), **json.loads(lines[-1])}


def read_trec(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 6:
            ranked.setdefault(parts[0], []).append((int(parts[3]), parts[2]))
    return {query: [doc for _, doc in sorted(pairs)] for query, pairs in ranked.items()}


def section_scifact(options: dict[str, Any], work: Path) -> dict[str, Any]:
    data = Path(options["data"])
    if not (data / "corpus.jsonl").is_file():
        return {"skipped": f"SciFact not found at {data} (pass --data DIR, a BEIR folder)"}
    timeout = options["timeout_s"]
    repeats = max(options["repeats"], 1)
    ours_cache, bare_index = work / "ours-cache", work / "bare-index"
    # Cold, then warm, alternating the two so that a burst of load hits both alike.
    ours_cold = _lexical_run(data, work / "cold" / "results.duckdb", ours_cache, work / "ours-cold.log", timeout)
    bare_cold = _bare_run(data, work / "bare-cold.trec", bare_index, work / "bare-cold.log", timeout)
    ours_warm, bare_warm = [], []
    for i in range(repeats):
        store = work / f"warm-{i}" / "results.duckdb"
        ours_warm.append(_lexical_run(data, store, ours_cache, work / f"ours-warm-{i}.log", timeout))
        bare_warm.append(_bare_run(data, work / "bare-warm.trec", bare_index, work / f"bare-warm-{i}.log", timeout))
    if ours_cold["questions"] != bare_cold["queries"]:
        raise CommandFailed(f"goldeneval scored {ours_cold['questions']} queries, bare bm25s {bare_cold['queries']}")
    # Same documents?  goldeneval's stored run as a TREC run file, against the peer's.
    exported = work / "ours.trec"
    log = work / "export.log"
    checked(
        measure(
            [
                goldeneval_command(),
                "export-run",
                ours_cold["run_id"],
                "--trec",
                str(exported),
                "--store",
                str(work / "cold" / "results.duckdb"),
            ],
            env=clean_env(),
            cwd=REPO,
            log=log,
            timeout_s=timeout,
        ),
        log,
    )
    ours_ranked, bare_ranked = read_trec(exported), read_trec(work / "bare-cold.trec")
    same_top10 = sum(ours_ranked.get(q, [])[:10] == docs[:10] for q, docs in bare_ranked.items())
    same_top100 = sum(set(ours_ranked.get(q, [])[:100]) == set(docs[:100]) for q, docs in bare_ranked.items())
    warm_ratio = median([r["wall_s"] for r in ours_warm]) / median([r["wall_s"] for r in bare_warm])
    return {
        "data": str(data),
        "queries": bare_cold["queries"],
        "documents": bare_cold["documents"],
        "goldeneval_cold": ours_cold,
        "goldeneval_warm": ours_warm,
        "bare_cold": bare_cold,
        "bare_warm": bare_warm,
        "goldeneval_warm_wall_s": median([r["wall_s"] for r in ours_warm]),
        "bare_warm_wall_s": median([r["wall_s"] for r in bare_warm]),
        "goldeneval_warm_cpu_s": median([r["user_s"] + r["system_s"] for r in ours_warm]),
        "bare_warm_cpu_s": median([r["user_s"] + r["system_s"] for r in bare_warm]),
        "warm_ratio": warm_ratio,
        "target_ratio": SCIFACT_TARGET_RATIO,
        "target_met": warm_ratio <= SCIFACT_TARGET_RATIO,
        "metric_differences": metric_differences(ours_cold["metrics"], bare_cold["metrics"]),
        "same_top10_queries": same_top10,
        "same_top100_set_queries": same_top100,
        "compared_queries": len(bare_ranked),
    }


# --------------------------------------------------------------------------------------------
# Section: dense, cold and warm cache
# --------------------------------------------------------------------------------------------


def cache_state(cache: Path) -> dict[str, Any]:
    """Embeddings held by the cache (rows of its Parquet files) and every file's mtime."""
    import pyarrow.parquet as pq

    rows = 0
    for file in sorted((cache / "embeddings").glob("*.parquet")):
        rows += pq.ParquetFile(file).metadata.num_rows
    files = {str(p.relative_to(cache)): p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    return {"embeddings": rows, "files": files}


def written_since(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    old = before["files"]
    return sorted(name for name, mtime in after["files"].items() if old.get(name) != mtime)


def _dense_set(options: dict[str, Any]) -> tuple[str, str] | None:
    """(argument of --set, label) for the dense section, None when its data is absent."""
    if options["dense_set"] == "scifact":
        data = Path(options["data"])
        return (str(data), f"SciFact ({data.name})") if (data / "corpus.jsonl").is_file() else None
    return options["dense_set"], options["dense_set"]


def section_dense(options: dict[str, Any], work: Path) -> dict[str, Any]:
    chosen = _dense_set(options)
    if chosen is None:
        return {"skipped": f"SciFact not found at {options['data']} (pass --data DIR or --dense-set transit-sample)"}
    set_arg, label = chosen
    cache = work / "cache"
    cache.mkdir()
    runs = []
    for i in range(1 + max(options["repeats"], 1)):
        before = cache_state(cache)
        store = work / f"run-{i}" / "results.duckdb"
        command = [
            goldeneval_command(),
            "retrieval",
            "--set",
            set_arg,
            "--retriever",
            "goldeneval.dense",
            "--no-progress",
            "--store",
            str(store),
            "--cache-dir",
            str(cache),
        ]
        log = work / f"run-{i}.log"
        env = clean_env(GOLDENEVAL_TABLES=store.parent / "tables")
        result = checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=options["timeout_s"]), log)
        after = cache_state(cache)
        runs.append(
            {
                **asdict(result),
                "cache": "cold" if i == 0 else "warm",
                "embeddings_before": before["embeddings"],
                "embeddings_after": after["embeddings"],
                "cache_files_written": written_since(before, after),
            }
        )
        print(f"dense: {runs[-1]['cache']} {result.wall_s:.1f} s")
    warm = runs[1:]
    return {
        "set": label,
        "runs": runs,
        "cold_wall_s": runs[0]["wall_s"],
        "warm_wall_s": median([r["wall_s"] for r in warm]),
        "command": runs[0]["command"],
    }


# --------------------------------------------------------------------------------------------
# Section: the Dagster job against the CLI
# --------------------------------------------------------------------------------------------


def _suite_file(folder: Path, sets: list[str], retrievers: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "sets": sets,
        "retrievers": retrievers,
        "storage": {"store": "store/results.duckdb", "tables": "store/tables", "cache": "cache"},
    }
    path = folder / "goldeneval.yaml"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def _dagster_workloads(options: dict[str, Any], work: Path) -> list[dict[str, Any]]:
    from benchmarks.zero_retriever import write_set

    sample_retrievers = {"lexical": {"id": "goldeneval.lexical"}}
    if not options["quick"]:
        sample_retrievers["dense"] = {"id": "goldeneval.dense"}
    workloads: list[dict[str, Any]] = [
        {
            "label": f"{SAMPLE_SET} x {', '.join(sample_retrievers)}",
            "sets": [SAMPLE_SET],
            "retrievers": sample_retrievers,
        }
    ]
    for zero_n in options["dagster_questions"]:  # the job's own cost, then what each question adds
        zero_set = write_set(work / f"zero-set-{zero_n}.jsonl", zero_n, set_id=f"zero-cost-{zero_n}")
        workloads.append(
            {
                "label": f"{zero_n:,}-question generated set x zero-cost retriever",
                "sets": [str(zero_set)],
                "retrievers": {"zero": {"id": ZERO_RETRIEVER}},
                "questions": zero_n,
            }
        )
    return workloads


def section_dagster(options: dict[str, Any], work: Path) -> dict[str, Any]:
    timeout = options["timeout_s"]
    rounds = 1 + max(options["repeats"], 1)  # cold, then warm
    workloads = []
    for index, workload in enumerate(_dagster_workloads(options, work)):
        folder = work / f"workload-{index}"
        suite = _suite_file(folder / "dagster", workload["sets"], workload["retrievers"])
        home = folder / "dagster" / "home"
        cli_store, cli_cache = folder / "cli" / "results.duckdb", folder / "cli" / "cache"
        cli_cache.mkdir(parents=True)
        dagster_cache = folder / "dagster" / "cache"
        dagster_cache.mkdir(parents=True)
        runs = []
        for i in range(rounds):
            cache = "cold" if i == 0 else "warm"
            cli = []
            for set_ref in workload["sets"]:
                for name, entry in workload["retrievers"].items():
                    command = [
                        goldeneval_command(),
                        "retrieval",
                        "--set",
                        set_ref,
                        "--retriever",
                        entry["id"],
                        "--name",
                        name,
                        "--no-progress",
                        "--store",
                        str(cli_store),
                        "--cache-dir",
                        str(cli_cache),
                    ]
                    log = folder / "cli" / f"{i}-{name}.log"
                    env = clean_env(GOLDENEVAL_TABLES=folder / "cli" / "tables")
                    cli.append(asdict(checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=timeout), log)))
            before = cache_state(dagster_cache)
            counts = folder / "dagster" / f"counts-{i}.json"
            log = folder / "dagster" / f"run-{i}.log"
            env = clean_env(DAGSTER_HOME=home, GOLDENEVAL_CONFIG=suite)
            command = [sys.executable, "-m", "benchmarks.dagster_nightly", "--counts", str(counts)]
            dagster = checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=timeout), log)
            record = json.loads(counts.read_text())
            if record["exit_status"] != 0:
                raise CommandFailed(f"pipelines.main exited {record['exit_status']}:\n{record['summary']}")
            after = cache_state(dagster_cache)
            log = folder / "floor" / f"run-{i}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            env = clean_env(DAGSTER_HOME=folder / "floor" / "home")  # cold, then warm, as the job's
            command = [sys.executable, "-m", "benchmarks.dagster_floor"]
            floor = checked(measure(command, env=env, cwd=REPO, log=log, timeout_s=timeout), log)
            tables_floor = _tables_floor(folder, i, timeout)
            runs.append(
                {
                    "cache": cache,
                    "cli": cli,
                    "cli_wall_s": sum(r["wall_s"] for r in cli),
                    "cli_peak_rss_bytes": max(r["peak_rss_bytes"] for r in cli),
                    "dagster": asdict(dagster),
                    "dagster_floor": asdict(floor),
                    "tables_floor": tables_floor,
                    "dagster_import_s": record["import_s"],
                    "dagster_run_s": record["run_s"],
                    "builds": record["builds"],
                    "summary": record["summary"],
                    "dagster_cache_files_written": written_since(before, after),
                    "dagster_embeddings_after": after["embeddings"],
                }
            )
            print(
                f"dagster: {workload['label']}: {cache}: CLI {runs[-1]['cli_wall_s']:.1f} s, "
                f"Dagster {dagster.wall_s:.1f} s (its floor {floor.wall_s:.1f} s, "
                f"its tables written alone {tables_floor['write_s']:.1f} s)",
                flush=True,
            )
        workloads.append(
            {
                "label": workload["label"],
                "partitions": len(workload["sets"]) * len(workload["retrievers"]),
                "questions": workload.get("questions"),
                "runs": runs,
            }
        )
    return {"workloads": workloads}


def _tables_floor(folder: Path, index: int, timeout: float) -> dict[str, Any]:
    """What pyarrow takes to write again the Parquet tables the job of round ``index`` wrote
    (``benchmarks/tables_floor.py``, a process of its own): the seconds of its writes alone."""
    out = folder / "tables-floor" / f"run-{index}.json"
    log = out.with_suffix(".log")
    out.parent.mkdir(parents=True, exist_ok=True)
    tables = folder / "dagster" / "store" / "tables"  # the suite file's storage.tables
    command = [sys.executable, "-m", "benchmarks.tables_floor", "--tables", str(tables), "--json", str(out)]
    checked(measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=timeout), log)
    record: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return record


# --------------------------------------------------------------------------------------------
# Section: the paths a user takes (issue 26): both plug-in shapes, --format json
# --------------------------------------------------------------------------------------------

PATH_VARIANTS = (
    ("precomputed", "table"),
    ("plain", "table"),
    ("precomputed", "json"),
)
"""(plug-in shape, output format): the benchmark retriever's precomputed tuples with a batch
method, the README's minimal plug-in (a fresh list, no batch method), and the JSON output."""


def _path_run(
    set_path: Path, folder: Path, shape: str, output_format: str, tag: str, timeout_s: float
) -> dict[str, Any]:
    store, timing = folder / f"{tag}.duckdb", folder / f"{tag}-timing.json"
    command = [
        goldeneval_command(),
        "retrieval",
        "--set",
        str(set_path),
        "--retriever",
        ZERO_RETRIEVER,
        "--option",
        f"shape={shape}",
        "--option",
        f"timing={timing}",
        "--no-progress",
        "--store",
        str(store),
        "--cache-dir",
        str(folder / "cache"),
        "--format",
        output_format,
    ]
    log = folder / f"{tag}.log"
    result = checked(
        measure(command, env=clean_env(GOLDENEVAL_TABLES=folder / "tables"), cwd=REPO, log=log, timeout_s=timeout_s),
        log,
    )
    factory_s = json.loads(timing.read_text())["factory_s"]
    log.unlink()  # a JSON run's output is tens of MB
    store.unlink()
    return {**asdict(result), "framework_cpu_s": result.user_s + result.system_s - factory_s}


def section_paths(options: dict[str, Any], work: Path) -> dict[str, Any]:
    """Each variant at a small and a large question count, the rounds one after the other;
    the framework's CPU a question is the difference between the two sizes (start-up and the
    retriever's own precomputation taken out), the median over the rounds."""
    from benchmarks.zero_retriever import write_set

    small, large = 1_000, options["paths_questions"]
    sets = {n: write_set(work / f"set-{n}.jsonl", n) for n in (small, large)}
    rounds: list[dict[str, Any]] = []
    for r in range(options["overhead_rounds"]):
        row: dict[str, Any] = {}
        for shape, output_format in PATH_VARIANTS:
            name = f"{shape}/{output_format}"
            runs = {
                n: _path_run(
                    sets[n], work, shape, output_format, f"r{r}-{shape}-{output_format}-{n}", options["timeout_s"]
                )
                for n in (small, large)
            }
            row[name] = {
                "marginal_cpu_us": (runs[large]["framework_cpu_s"] - runs[small]["framework_cpu_s"])
                / (large - small)
                * 1e6,
                "peak_rss_bytes": runs[large]["peak_rss_bytes"],
                "small_peak_rss_bytes": runs[small]["peak_rss_bytes"],
                "large_wall_s": runs[large]["wall_s"],
                "command": runs[large]["command"],
            }
            print(f"paths: round {r + 1}, {name}: {row[name]['marginal_cpu_us']:.1f} us a question", flush=True)
        rounds.append(row)
    names = [f"{shape}/{output_format}" for shape, output_format in PATH_VARIANTS]
    summary = {
        name: {
            "marginal_cpu_us": median([row[name]["marginal_cpu_us"] for row in rounds]),
            "marginal_cpu_us_range": [
                min(row[name]["marginal_cpu_us"] for row in rounds),
                max(row[name]["marginal_cpu_us"] for row in rounds),
            ],
            "peak_rss_bytes": median([row[name]["peak_rss_bytes"] for row in rounds]),
            "small_peak_rss_bytes": median([row[name]["small_peak_rss_bytes"] for row in rounds]),
            "large_wall_s": median([row[name]["large_wall_s"] for row in rounds]),
            "command": rounds[0][name]["command"],
        }
        for name in names
    }
    return {"small": small, "large": large, "rounds": rounds, "summary": summary}


def section_http(options: dict[str, Any], work: Path) -> dict[str, Any]:
    """``goldeneval.http`` against a local service that answers at once, paired with an
    in-process plug-in calling the same function, and one question at a time against a bare
    ``http.client`` keep-alive loop (``benchmarks/http_retriever.py``)."""
    out, log = work / "http.json", work / "http.log"
    command = [sys.executable, "-m", "benchmarks.http_retriever", "--rounds", str(max(options["overhead_rounds"], 3))]
    command += ["--json", str(out)]
    checked(measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=options["timeout_s"]), log)
    document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return document


SECTION_FUNCTIONS: dict[str, Callable[[dict[str, Any], Path], dict[str, Any]]] = {
    "startup": section_startup,
    "memory": section_memory,
    "engine": section_engine,
    "overhead": section_overhead,
    "scifact": section_scifact,
    "dense": section_dense,
    "dagster": section_dagster,
    "paths": section_paths,
    "http": section_http,
    "command": section_command,
    "report_html": section_report_html,
    "answer_calibration": section_answer_calibration,
    "pooling": section_pooling,
    "judge_page": section_judge_page,
}


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


ENGINE_COLUMNS = (
    ("numpy floor", "numpy floor"),
    ("columnar, to cutoff", "goldeneval (columnar core)"),
    ("columnar, full depth", "goldeneval, full depth"),
    ("per-question", "goldeneval per-question path"),
    ("pytrec-eval", "pytrec-eval"),
    ("ranx", "ranx"),
)
GOLDENEVAL_ENGINE = "columnar, to cutoff"


def _engine_cell(engine: dict[str, Any]) -> str:
    if engine.get("skipped"):
        return str(engine["skipped"])
    extras = []
    if engine.get("build_s") is not None:
        extras.append(f"+{secs(engine['build_s'])} build")
    if engine.get("jit_s") is not None:
        extras.append(f"+{secs(engine['jit_s'])} first-call JIT")
    if engine.get("note"):
        extras.append(str(engine["note"]))
    return secs(engine.get("median_s")) + (f" ({', '.join(extras)})" if extras else "")


def render_engine(section: dict[str, Any]) -> list[str]:
    report = section["report"]
    sizes = report["sizes"]
    present = [(key, title) for key, title in ENGINE_COLUMNS if any(key in s["engines"] for s in sizes.values())]
    lines = [
        f"Synthetic runs of N questions x {report['depth']} ranked ids, 1-3 relevant each; metrics "
        f"{', '.join(report['metrics'])}; median of 3 evaluations; building each engine's input "
        "(goldeneval: Arrow dictionary encoding of string ids; peers: their dicts) reported apart, "
        "as is ranx's first-call JIT compilation. A peer whose whole run would need more than the "
        "machine's memory share (pytrec-eval and ranx at 1M) is measured in chunks, each chunk's "
        "input built, scored and discarded, build and scoring times summed over the chunks "
        "(both peers score each question independently); goldeneval and the numpy floor score the "
        "whole run at once. Every peer's per-question values are checked against goldeneval's. "
        "Peak RSS: a fresh process that generates the run "
        "and scores it with goldeneval (interpreter and inputs included).",
        "",
        "| N | " + " | ".join(title for _, title in present) + " | goldeneval peak RSS |",
        "| --- " * (len(present) + 2) + "|",
    ]
    for n, size in sizes.items():
        cells = [_engine_cell(size["engines"][key]) if key in size["engines"] else "-" for key, _ in present]
        lines.append(f"| {int(n):,} | " + " | ".join(cells) + f" | {mib(size['columnar_peak_rss_bytes'])} |")
    lines += [
        "",
        "Ratios, each from the same run (scoring only; with the input build in brackets):",
        "",
        "| N | goldeneval / numpy floor | pytrec-eval / goldeneval | ranx / goldeneval | "
        "largest difference of a mean from goldeneval's |",
        "| --- | --- | --- | --- | --- |",
    ]
    for n, size in sizes.items():
        engines = size["engines"]
        ours = engines[GOLDENEVAL_ENGINE]
        ours_total = (ours.get("median_s") or 0) + (ours.get("build_s") or 0)

        def peer(
            name: str, engines: dict[str, Any] = engines, ours: dict[str, Any] = ours, total: float = ours_total
        ) -> str:
            engine = engines.get(name)
            if engine is None:
                return "not run"
            if engine.get("skipped"):
                return "skipped"
            theirs_total = (engine.get("median_s") or 0) + (engine.get("build_s") or 0)
            return f"{ratio(engine.get('median_s'), ours.get('median_s'))} ({ratio(theirs_total, total)})"

        deviation = size["max_mean_difference_vs_columnar"]
        worst = max((v for k, v in deviation.items() if v is not None and k != "numpy floor"), default=None)
        lines.append(
            f"| {int(n):,} | {ratio(ours.get('median_s'), engines['numpy floor'].get('median_s'))} | "
            f"{peer('pytrec-eval')} | {peer('ranx')} | {'-' if worst is None else f'{worst:.1e}'} |"
        )
    lines += ["", f"Command: `{section['command']}`"]
    return lines


def _between(key: str) -> str:
    a, b = key.split("->")
    return f"{int(a):,} to {int(b):,} questions"


def headline_text(head: Mapping[str, Any], spread: Mapping[str, Any] | None = None) -> str:
    def shown(key: str) -> str:
        if not spread or key not in spread:
            return f"{head[key]:.0f} us"
        return f"{head[key]:.0f} us ({spread[key]['min']:.0f}-{spread[key]['max']:.0f})"

    parts = []
    for kind, between in (("baseline", "between"), ("compared", "between_compared")):
        if between in head:
            parts.append(
                f"{kind} runs, {_between(head[between])}: wall {shown(f'{kind}_wall')}, CPU {shown(f'{kind}_cpu')}"
            )
    return "; ".join(parts)


def render_overhead(section: dict[str, Any]) -> list[str]:
    rows, derived = section["rows"], section["derived"]
    rounds = derived.get("rounds")
    startup = rows[0]
    if rounds is None:  # measured before the section ran in rounds
        method = " (each the median of the repeats). "
    else:
        method = (
            f". {rounds} {'round' if rounds == 1 else 'rounds'}, one after the other, each running every size "
            f"(up to {LARGE_REPEAT_LIMIT:,} questions; larger sets in the first round only), baseline then "
            "compared, so that the sizes a cost per question is taken from were measured minutes apart, "
            "at the same machine speed; each cost computed in each round, then the median over the rounds. "
            "Times in the table: the median run. "
        )
    lines = [
        "`goldeneval retrieval` as a whole process (supervisor and child, start-up included) with "
        f"`{ZERO_RETRIEVER}`: every answer precomputed when the retriever is built, 100 chunk ids "
        "a question, so the time is goldeneval's (loading the set, calling the retriever, collapsing "
        "and scoring, the store write, the verdict, the report). *baseline*: into an empty store; "
        "*compared*: into the store holding that baseline, so the verdict (McNemar, bootstrap) runs, "
        f"as in every nightly run{method}Per question beyond start-up = (cost at N - "
        f"cost at {derived['startup_questions']}) / (N - {derived['startup_questions']}), the retriever's "
        "own time (building its answers) subtracted; in wall time and in CPU time (user + system of the "
        "process tree, which other processes on the machine do not inflate).",
        "",
        "| questions | wall, baseline | wall, compared | CPU, compared | peak RSS | per question beyond start-up, "
        "wall (baseline / compared) | per question beyond start-up, CPU (compared) | retriever's own time "
        "| store file |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def us(key: str, n: str) -> str:
        value = derived.get(key, {}).get("beyond_startup_us", {}).get(n)
        return "-" if value is None else f"{value:.0f} us"

    for row in rows:
        n = str(row["questions"])
        if row["questions"] == derived["startup_questions"]:
            wall = cpu = "(start-up)"
        else:
            wall, cpu = f"{us('baseline_wall', n)} / {us('compared_wall', n)}", us("compared_cpu", n)
        peak = max(row["baseline"]["peak_rss_bytes"], row.get("compared_peak_rss_bytes") or 0)
        lines.append(
            f"| {row['questions']:,} | {secs(row['baseline']['wall_s'])} | {secs(row.get('compared_wall_s'))} | "
            f"{secs(row.get('compared_cpu_s'))} | {mib(peak)} | {wall} | {cpu} "
            f"| {secs(row.get('compared_factory_s', row['baseline']['retriever_factory_s']))} "
            f"| {row['store_bytes'] / 1e6:.1f} MB |"
        )
    for failure in section.get("failed", []):
        lines.append(
            f"| {failure['questions']:,} | round {failure.get('round', 0) + 1}: {failure['run']} run failed: "
            f"{failure['error'][-300:]} |" + " |" * 7
        )
    head = derived["headline_marginal_us"]
    lines += [
        "",
        f"Start-up ({startup['questions']} questions): {secs(startup['baseline']['wall_s'])} baseline, "
        f"{secs(startup.get('compared_wall_s'))} compared. **Framework cost per question** (difference of "
        "costs between two sizes / difference of questions"
        + ("; the median over the rounds, their range in parentheses): " if (rounds or 1) > 1 else "): ")
        + f"{headline_text(head, derived.get('spread') if (rounds or 1) > 1 else None)}.",
    ]
    marginals = derived.get("compared_wall", {}).get("marginal_us", {})
    if len(marginals) > 1:
        cpu_marginals = derived["compared_cpu"]["marginal_us"]
        lines.append(
            "Marginal cost per question between consecutive sizes (compared, wall / CPU): "
            + ", ".join(f"{k.replace('->', '-')}: {v:.0f} / {cpu_marginals[k]:.0f} us" for k, v in marginals.items())
            + "; equal when the cost grows linearly with the question count."
        )
    if len(section.get("rounds", ())) > 1:
        lines += ["", *_round_lines(section["rounds"], derived)]
    lines += ["", f"Command: `{section['command']}`"]
    return lines


def _round_lines(rounds: list[dict[str, Any]], derived: Mapping[str, Any]) -> list[str]:
    """The rounds one by one, with the reference workload's time at the start of each: how fast
    the machine was.  (It drifts within seconds too, which no reference timed apart can follow:
    hence the median over rounds.)"""
    reference = derived.get("reference_s")
    speed = (
        "could not be timed"
        if reference is None
        else f"took {reference['min']:.3f}-{reference['max']:.3f} s (median {reference['median']:.3f} s)"
    )
    lines = [
        f"The machine's speed during the section: a fixed pure-Python workload (`REFERENCE_WORKLOAD` in "
        f"`benchmarks/run.py`) timed at the start of each round {speed}. Per round "
        f"(between {_between(derived['headline_marginal_us'].get('between', '0->0'))}):",
        "",
        "| round | reference workload | baseline, wall per question | compared, wall per question |",
        "| --- | --- | --- | --- |",
    ]
    per_round = derived.get("per_round_us", {})
    for i, measured in enumerate(rounds, 1):
        cells = [
            f"{per_round[key][i - 1]:.0f} us" if key in per_round else "-" for key in ("baseline_wall", "compared_wall")
        ]
        reference_s = measured.get("reference_s")
        shown = "-" if reference_s is None else f"{reference_s:.3f} s"
        lines.append(f"| {i} | {shown} | {cells[0]} | {cells[1]} |")
    return lines


def render_scifact(section: dict[str, Any]) -> list[str]:
    if section.get("skipped"):
        return [f"Skipped: {section['skipped']}."]
    oc, bc = section["goldeneval_cold"], section["bare_cold"]
    ow, bw = section["goldeneval_warm_wall_s"], section["bare_warm_wall_s"]
    bare_warm_in = median([r["in_process_s"] for r in section["bare_warm"]])

    def cpu(run: dict[str, Any]) -> float:
        return float(run["user_s"] + run["system_s"])

    differences = section["metric_differences"]
    compared = [d for d in differences.values() if d is not None]
    agreeing = sum(d <= METRIC_TOLERANCE for d in compared)
    verdict = "met" if section["target_met"] else "not met"
    lines = [
        f"{section['queries']} test queries over {section['documents']:,} documents, top 100 each. goldeneval: "
        "`goldeneval retrieval --retriever goldeneval.lexical` (loads the BEIR folder, one `retrieve` "
        "call a question, scores, stores, reports). Peer: `benchmarks/bm25s_bare.py`, bm25s plus pytrec-eval as "
        "a user would write it by hand: the same analyser and BM25 parameters, all queries in one batch, a TREC "
        "run file written, the qrels read and the run scored by pytrec-eval with the metrics goldeneval reports "
        "by default. Both whole processes; warm = index cached (median of "
        f"{len(section['goldeneval_warm'])}); CPU = user + system.",
        "",
        "| | goldeneval retrieval | bm25s plus pytrec-eval | ratio | goldeneval CPU | peer CPU "
        "| goldeneval peak RSS | peer peak RSS |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| cold (index built) | {secs(oc['wall_s'])} | {secs(bc['wall_s'])} | {ratio(oc['wall_s'], bc['wall_s'])} "
        f"| {secs(cpu(oc))} | {secs(cpu(bc))} | {mib(oc['peak_rss_bytes'])} | {mib(bc['peak_rss_bytes'])} |",
        f"| warm (index cached) | {secs(ow)} | {secs(bw)} | {ratio(ow, bw)} "
        f"| {secs(section['goldeneval_warm_cpu_s'])} | {secs(section['bare_warm_cpu_s'])} "
        f"| {mib(max(r['peak_rss_bytes'] for r in section['goldeneval_warm']))} "
        f"| {mib(max(r['peak_rss_bytes'] for r in section['bare_warm']))} |",
        f"| target (issue 26): warm within {section['target_ratio']:g}x | | | {section['warm_ratio']:.2f}x: "
        f"{verdict} | | | | |",
        "",
        f"Inside the peer's process (warm): {secs(bare_warm_in)}, of which retrieval of all queries "
        f"{secs(median([r['retrieve_s'] for r in section['bare_warm']]))} and pytrec-eval "
        f"{secs(median([r['evaluate_s'] for r in section['bare_warm']]))}; the rest of its wall time is "
        "interpreter start-up and imports. Same documents: identical top 10 for "
        f"{section['same_top10_queries']} of {section['compared_queries']} queries, the same top-100 set for "
        f"{section['same_top100_set_queries']}. Same metrics: {agreeing} of {len(differences)} of goldeneval's "
        f"means equal pytrec-eval's to {METRIC_TOLERANCE:g}"
        + ("" if len(compared) == len(differences) else f" ({len(differences) - len(compared)} without a peer)")
        + ".",
    ]
    return lines


def render_dense(section: dict[str, Any]) -> list[str]:
    if section.get("skipped"):
        return [f"Skipped: {section['skipped']}."]
    runs = section["runs"]
    lines = [
        f"`goldeneval retrieval --retriever goldeneval.dense` (all-MiniLM-L6-v2) on {section['set']}, a whole "
        "process each, with a fresh store; the first with an empty cache, then again with the same cache.",
        "",
        "| run | cache | wall | peak RSS | embeddings in the cache after | cache files written |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, run in enumerate(runs):
        written = run["cache_files_written"]
        lines.append(
            f"| {i + 1} | {run['cache']} | {secs(run['wall_s'])} | {mib(run['peak_rss_bytes'])} | "
            f"{run['embeddings_after']} (before: {run['embeddings_before']}) | {len(written)} |"
        )
    lines += [
        "",
        f"Warm / cold: {ratio(section['warm_wall_s'], section['cold_wall_s'])} "
        f"({secs(section['warm_wall_s'])} median warm against {secs(section['cold_wall_s'])} cold).",
        "",
        f"Command: `{section['command']}`",
    ]
    return lines


def _builds(builds: list[dict[str, Any]]) -> str:
    parts = []
    for build in builds:
        facts = []
        if "lexical_index_loaded_from_cache" in build:
            facts.append("index from cache" if build["lexical_index_loaded_from_cache"] else "index built")
        if "chunks_encoded" in build:
            facts.append(f"{build['chunks_encoded']} chunks encoded, {build['chunks_from_cache']} from cache")
        parts.append(f"{build['retriever_id']}: {', '.join(facts) or 'built'}")
    return "; ".join(parts)


def render_dagster(section: dict[str, Any]) -> list[str]:
    lines = [
        "The README's main command, `python -m pipelines.main` (the `nightly_evaluation` job once per "
        "partition, then the sensor's `regression_check` runs and the summary), in one process with a "
        "fresh `DAGSTER_HOME`, store and cache (`benchmarks/dagster_nightly.py`, which also records what "
        "each retriever build took from the cache), against `goldeneval retrieval` once per partition "
        "(a process each; their sum) with a store and cache of its own. Then both again on their now "
        "warm caches and stores.",
        "",
        "Beside them, Dagster's floor (`benchmarks/dagster_floor.py`): a process that imports dagster, opens "
        "an instance in a `DAGSTER_HOME` of its own (fresh in the cold round) and, with the collector tuned "
        "as the README's command tunes it, runs two jobs of one asset that does nothing, one after the "
        "other, as that command runs the nightly job and then the regression check for a partition. The "
        "command cannot take less; on a generated set it also asks, scores and stores the questions the "
        "CLI does, and it writes the golden set, rankings and hits tables the CLI does not write. Those "
        "writes, timed apart (`benchmarks/tables_floor.py`: a process that takes the files the job just "
        "wrote and times writing them again through the job's own writer, `write_partition_file`, the "
        "rankings table a row group at a time, as the job hands it over, each read when the writer asks "
        "and the reading not timed), are what pyarrow takes however fast the tables are built. So the "
        "floor, plus what the questions cost the CLI (the per-question line below), plus those writes is "
        "a lower bound for the job: where that bound is more than "
        f"{DAGSTER_TARGET_RATIO:g}x the CLI's whole run, the job as it is run (two Dagster runs a partition: "
        "the regression check is a run of its own, as its sensor starts it in a deployment) cannot meet "
        "that target while it writes these tables with this writer, however fast its assets build them.",
        "",
        "| partitions | run | CLI, all partitions | Dagster, whole process | Dagster / CLI | Dagster: imports "
        "/ the rest (definitions, jobs, summary) | Dagster's floor (floor / CLI) | its tables written again, "
        "pyarrow alone | Dagster peak RSS | CLI peak RSS | what the retriever builds did (Dagster) "
        "| cache files the Dagster run wrote |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for workload in section["workloads"]:
        for run in workload["runs"]:
            dagster = run["dagster"]
            written = run["dagster_cache_files_written"]
            lines.append(
                f"| {workload['label']} ({workload['partitions']}) | {run['cache']} | {secs(run['cli_wall_s'])} | "
                f"{secs(dagster['wall_s'])} | {ratio(dagster['wall_s'], run['cli_wall_s'])} | "
                f"{secs(run['dagster_import_s'])} / {secs(run['dagster_run_s'])} | {_floor(run)} "
                f"| {_tables_written(run)} | {mib(dagster['peak_rss_bytes'])} | {mib(run['cli_peak_rss_bytes'])} "
                f"| {_builds(run['builds'])} | {len(written)} |"
            )
    added = dagster_per_question(section)
    if added is not None:
        lines += [
            "",
            f"What a question adds, between the generated sets of {added['small']:,} and {added['large']:,} "
            f"questions (median wall of each size's runs): Dagster {added['dagster_us']:.0f} us, the CLI "
            f"{added['cli_us']:.0f} us: {added['ratio']:.2f}x (the job also writes the golden set, rankings and "
            f"hits tables as Parquet, which the CLI does not). Extended to no questions, the same lines give "
            f"Dagster {secs(added['dagster_fixed_s'])} and the CLI {secs(added['cli_fixed_s'])}: what each "
            "costs whatever the set's size.",
        ]
    return lines


def _floor(run: Mapping[str, Any]) -> str:
    floor = run.get("dagster_floor")
    if floor is None:  # measured before the floor was
        return "-"
    return f"{secs(floor['wall_s'])} ({ratio(floor['wall_s'], run['cli_wall_s'])})"


def _tables_written(run: Mapping[str, Any]) -> str:
    tables = run.get("tables_floor")
    if tables is None:  # measured before the tables' writes were
        return "-"
    return f"{secs(tables['write_s'])} ({ratio(tables['write_s'], run['cli_wall_s'])})"


def dagster_per_question(section: Mapping[str, Any]) -> dict[str, Any] | None:
    """Wall time a question adds to the Dagster job and to the CLI, from the smallest and the
    largest generated set (medians of their runs); ``None`` with fewer than two sizes, or
    where a side took no longer on the larger set."""
    sized = sorted((w for w in section.get("workloads", []) if w.get("questions")), key=lambda w: w["questions"])
    if len(sized) < 2 or sized[0]["questions"] == sized[-1]["questions"]:
        return None
    small, large = sized[0], sized[-1]

    def median_wall(workload: Mapping[str, Any], side: str) -> float:
        walls = [r["dagster"]["wall_s"] if side == "dagster" else r["cli_wall_s"] for r in workload["runs"]]
        return float(statistics.median(walls))

    between = large["questions"] - small["questions"]
    per = {side: (median_wall(large, side) - median_wall(small, side)) / between for side in ("dagster", "cli")}
    if min(per.values()) <= 0:  # the sizes too close for the noise: no cost a question to speak of
        return None
    return {
        "small": small["questions"],
        "large": large["questions"],
        "dagster_us": per["dagster"] * 1e6,
        "cli_us": per["cli"] * 1e6,
        "ratio": per["dagster"] / per["cli"],
        "dagster_fixed_s": median_wall(small, "dagster") - per["dagster"] * small["questions"],
        "cli_fixed_s": median_wall(small, "cli") - per["cli"] * small["questions"],
    }


PATH_LABELS = {
    "precomputed/table": "benchmark retriever (precomputed tuples, batch method)",
    "plain/table": "plain plug-in (README's minimal contract: a fresh list, no batch method)",
    "precomputed/json": "benchmark retriever, --format json",
}


def render_paths(section: dict[str, Any]) -> list[str]:
    summary = section["summary"]
    lines = [
        f"`goldeneval retrieval` with `benchmarks.zero_retriever` at {section['small']:,} and {section['large']:,} "
        f"questions (depth 100); a variant's framework cost is the CPU difference between the two sizes divided by "
        f"the questions between them, the retriever's own precomputation (its factory's time) taken out; the "
        f"median over {len(section['rounds'])} rounds (range in parentheses). Peak RSS: the largest "
        "process of the large run's tree.",
        "",
        "| variant | CPU a question | peak RSS, large | wall, large |",
        "| --- | --- | --- | --- |",
    ]
    for name, row in summary.items():
        low, high = row["marginal_cpu_us_range"]
        lines.append(
            f"| {PATH_LABELS.get(name, name)} | {row['marginal_cpu_us']:.1f} us ({low:.1f} to {high:.1f}) "
            f"| {mib(row['peak_rss_bytes'])} | {secs(row['large_wall_s'])} |"
        )
    lines += ["", f"Command (large, plain): `{summary['plain/table']['command']}`"]
    return lines


def render_http(section: dict[str, Any]) -> list[str]:
    sides = section["sides"]
    rows = [
        "| side | median wall | median CPU, goldeneval | median CPU, service |",
        "| --- | --- | --- | --- |",
    ]
    for side, label in (("goldeneval.http", "goldeneval.http, local service"), (None, "in-process plug-in")):
        found = sides[side] if side else next(v for k, v in sides.items() if k != "goldeneval.http")
        rows.append(f"| {label} | {secs(found['wall_s'])} | {secs(found['cpu_s'])} | {secs(found['service_cpu_s'])} |")
    return [
        f"`goldeneval retrieval --workers {section['workers']}` over a generated {section['questions']:,}-question "
        "set, each side a whole process into a fresh store. Both sides rank with the same function: "
        "`goldeneval.http` against a keep-alive asyncio HTTP/1.1 service on 127.0.0.1 that answers at once, and "
        "`benchmarks.http_retriever:factory` in-process; each round runs both back to back, the ratio is the "
        "median of the rounds' wall-time ratios; CPU is the goldeneval process tree plus the service.",
        "",
        *rows,
        "",
        f"Wall ratio {section['wall_ratio']:.2f} (rounds: {', '.join(f'{r:.2f}' for r in section['round_ratios'])}); "
        f"CPU ratio {section['cpu_ratio']:.2f}; HTTP adds {section['extra_ms_a_question']:.3f} ms of wall time a "
        f"question. Command: `{section['command']}`.",
        *render_http_wire(section.get("wire")),
    ]


def render_http_wire(wire: dict[str, Any] | None) -> list[str]:
    """The wire alone (issue 44): ``goldeneval.http`` against a bare ``http.client`` keep-alive loop."""
    if not wire:
        return []
    rows = [
        f"| {label} | {wire['wall_us'][side]:.1f} us | {wire['cpu_us'][side]:.1f} us |"
        for side, label in (("goldeneval.http", "`goldeneval.http` (h11)"), ("http.client", "bare `http.client` loop"))
    ]
    return [
        "",
        f"The wire alone (issue 44): one thread asks {wire['questions']:,} questions in a row of the same service "
        f"through `goldeneval.http` and through a bare `http.client` keep-alive loop (`request`, `getresponse`, "
        f"`read`, `json.loads`), {wire['rounds']} rounds alternating which goes first; per question, medians; CPU "
        "is the asking process's own.",
        "",
        "| side | wall a question | CPU a question |",
        "| --- | --- | --- |",
        *rows,
        "",
        f"Ratio goldeneval.http / http.client, median of the rounds: {wire['wall_ratio']:.2f} wall, "
        f"{wire['cpu_ratio']:.2f} CPU (rounds, wall: {', '.join(f'{r:.2f}' for r in wire['round_ratios'])}).",
    ]


JSON_CONSTANT_BYTES = 16 * 2**20
"""How much more ``--format json`` may add to a run's peak RSS at the large size than at the
small one and still count as constant: a block of decompressed codes, the documents of 65,536
of them and a chunk of 256 records, not a list of every question's documents (56 MiB at 50,000
questions of 100 documents before it was streamed)."""


def _paths_targets(section: Mapping[str, Any]) -> list[str]:
    summary = section["summary"]
    tuple_us = summary["precomputed/table"]["marginal_cpu_us"]
    plain_us = summary["plain/table"]["marginal_cpu_us"]
    json_extra = summary["precomputed/json"]["marginal_cpu_us"] - tuple_us
    json_rss = summary["precomputed/json"]["peak_rss_bytes"] - summary["precomputed/table"]["peak_rss_bytes"]
    json_small_rss = (
        summary["precomputed/json"]["small_peak_rss_bytes"] - summary["precomputed/table"]["small_peak_rss_bytes"]
    )
    n, small = section["large"], section["small"]
    return [
        f"| a plain plug-in within 1.3x the benchmark retriever's framework cost | {plain_us:.1f} us against "
        f"{tuple_us:.1f} us a question: {plain_us / tuple_us:.2f}x | {yes(plain_us <= 1.3 * tuple_us)} |",
        f"| at most 40 us of CPU a question for both shapes | {tuple_us:.1f} us, {plain_us:.1f} us "
        f"| {yes(max(tuple_us, plain_us) <= 40)} |",
        f"| `--format json` at most 30 us a question | {json_extra:.1f} us a question beyond the table output "
        f"| {yes(json_extra <= 30)} |",
        f"| `--format json` in constant memory beyond the run (what it adds to the table output's peak RSS grows "
        f"by at most {mib(JSON_CONSTANT_BYTES)} from {small:,} to {n:,} questions) | {json_rss / 2**20:+.1f} MiB at "
        f"{n:,} questions, {json_small_rss / 2**20:+.1f} MiB at {small:,} "
        f"| {yes(json_rss - json_small_rss <= JSON_CONSTANT_BYTES)} |",
    ]


def _dagster_target_row(workload: Mapping[str, Any], added: Mapping[str, Any] | None) -> str:
    """The target row of one workload: the job against the CLI in every run and, where the floor
    was measured, a lower bound for the job: Dagster's floor, plus, on a generated set, what its
    questions cost the CLI (the job asks, scores and stores the same questions, and more), plus,
    where they were timed, pyarrow's writes of the tables the job wrote.  The target holds for
    every run or not at all: a run whose bound is over it is a run no change inside goldeneval
    brings under it."""
    runs = workload["runs"]
    shown = ", ".join(f"{r['cache']} {ratio(r['dagster']['wall_s'], r['cli_wall_s'])}" for r in runs)
    verdict = yes(max(r["dagster"]["wall_s"] / r["cli_wall_s"] for r in runs) <= DAGSTER_TARGET_RATIO)
    floors = [r for r in runs if "dagster_floor" in r]
    if floors:
        questions = workload.get("questions")
        questions_s = added["cli_us"] * 1e-6 * questions if added is not None and questions else 0.0
        tables = all("tables_floor" in r for r in floors)
        parts = [f"what {questions:,} questions cost the CLI"] if questions_s else []
        parts += ["writing its tables"] if tables else []
        what = "Dagster's floor " + (f"plus {' plus '.join(parts)}" if parts else "alone")
        bounds = [
            (r["dagster_floor"]["wall_s"] + questions_s + (r["tables_floor"]["write_s"] if tables else 0.0))
            / r["cli_wall_s"]
            for r in floors
        ]
        shown += f"; {what} / CLI: " + ", ".join(f"{r['cache']} {b:.2f}x" for r, b in zip(floors, bounds, strict=True))
        over = sum(b > DAGSTER_TARGET_RATIO for b in bounds)
        if over:
            verdict += f": in {over} of {len(floors)} runs {what} is already above the target"
    return (
        f"| the Dagster job within {DAGSTER_TARGET_RATIO:g}x the CLI, same partitions ({workload['label']}) "
        f"| Dagster / CLI wall: {shown} | {verdict} |"
    )


def targets(results: Mapping[str, Any]) -> list[str]:
    """The issue's done-when conditions, read off this run's numbers."""
    lines = ["| target | measured | met |", "| --- | --- | --- |"]
    startup = results.get("startup")
    if startup and "summary" in startup:
        lines += startup_targets(startup)
    scifact = results.get("scifact")
    if scifact and "warm_ratio" in scifact:
        lines.append(
            f"| a warm SciFact lexical run within {scifact['target_ratio']:g}x bm25s plus pytrec-eval (wall) "
            f"| {scifact['warm_ratio']:.2f}x | {yes(scifact['target_met'])} |"
        )
    engine = results.get("engine")
    if engine and "report" in engine:
        for n, size in engine["report"]["sizes"].items():
            if int(n) < 100_000:
                continue
            engines = size["engines"]
            ours = engines[GOLDENEVAL_ENGINE].get("median_s")
            floor = engines["numpy floor"].get("median_s")
            lines.append(
                f"| scoring within 1.5x of numpy, {int(n):,} | {ratio(ours, floor)} "
                f"| {yes(ours and floor and ours <= 1.5 * floor)} |"
            )
            for peer in ("pytrec-eval", "ranx"):
                theirs = engines.get(peer)
                if theirs is None:
                    lines.append(f"| ahead of {peer}, {int(n):,} | not run | - |")
                elif theirs.get("skipped"):
                    lines.append(f"| ahead of {peer}, {int(n):,} | {theirs['skipped']} | not measured |")
                else:
                    median_s = theirs.get("median_s")
                    chunked = f" (in {theirs['chunks']} chunks)" if theirs.get("chunks") else ""
                    lines.append(
                        f"| ahead of {peer}, {int(n):,} | {secs(ours)} against {secs(median_s)}{chunked} "
                        f"| {yes(ours and median_s and ours < median_s)} |"
                    )
            if int(n) == 1_000_000:
                peak = size["columnar_peak_rss_bytes"]
                lines.append(f"| 1M within 2 GB | {peak / 1e9:.2f} GB ({mib(peak)}) peak RSS | {yes(peak <= 2e9)} |")
                built = engines[GOLDENEVAL_ENGINE].get("build_s")
                peer_built = (engines.get("pytrec-eval") or {}).get("build_s")
                lines.append(
                    "| encoding from Python string ids within 2x pytrec-eval's input building, 1,000,000 "
                    f"| {secs(built)} against {secs(peer_built)}: {ratio(built, peer_built)} "
                    f"| {yes(built and peer_built and built <= 2 * peer_built)} |"
                )
    overhead = results.get("overhead")
    if overhead and "derived" in overhead:
        head = overhead["derived"]["headline_marginal_us"]
        walls = [head[key] for key in ("baseline_wall", "compared_wall") if key in head]
        for failure in overhead.get("failed", []):
            lines.append(
                f"| framework overhead under 50 us a question, {failure['questions']:,} questions "
                f"| round {failure.get('round', 0) + 1}: {failure['run']} run failed: {failure['error'][-200:]} | no |"
            )
        rounds = overhead["derived"].get("rounds", 1)
        rounds_note = f"; median of {rounds} rounds, range in parentheses" if rounds > 1 else ""
        lines.append(
            f"| framework overhead under 50 us a question (wall{rounds_note}) "
            f"| {headline_text(head, overhead['derived'].get('spread') if rounds > 1 else None)} "
            f"| {yes(walls and max(walls) < 50)} |"
        )
        marginals = overhead["derived"].get("compared_cpu", {}).get("marginal_us", {})
        if marginals:
            lines.append(
                "| cost linear in the question count (CPU per question between consecutive sizes, compared) | "
                + ", ".join(f"{k.replace('->', '-')}: {v:.0f} us" for k, v in marginals.items())
                + " | reported |"
            )
    dense = results.get("dense")
    if dense and "runs" in dense:
        warm = dense["runs"][1:]
        added = sum(r["embeddings_after"] - r["embeddings_before"] for r in warm)
        written = sum(len(r["cache_files_written"]) for r in warm)
        lines.append(
            f"| warm dense run encodes nothing the cache holds ({dense['set']}) | {added} embeddings added, "
            f"{written} cache files written; {secs(dense['warm_wall_s'])} against {secs(dense['cold_wall_s'])} "
            f"cold | {yes(not added and not written)} |"
        )
    paths = results.get("paths")
    if paths and "summary" in paths:
        lines += _paths_targets(paths)
    memory = results.get("memory")
    if memory and "sizes" in memory:
        lines += memory_targets(memory)
    http = results.get("http")
    if http and "wall_ratio" in http:
        lines.append(
            f"| `goldeneval.http` at most 1.5x a Python plug-in calling the same function, --workers "
            f"{http['workers']} | {http['wall_ratio']:.2f}x wall, {http['cpu_ratio']:.2f}x CPU "
            f"| {yes(http['wall_ratio'] <= 1.5)} |"
        )
        wire = http.get("wire")
        if wire:
            lines.append(
                "| `goldeneval.http` a question at or below a bare `http.client` keep-alive loop against the same "
                f"service (issue 44) | {wire['wall_us']['goldeneval.http']:.1f} us against "
                f"{wire['wall_us']['http.client']:.1f} us wall ({wire['wall_ratio']:.2f}x), "
                f"{wire['cpu_ratio']:.2f}x CPU | {yes(wire['wall_ratio'] <= 1.0 and wire['cpu_ratio'] <= 1.0)} |"
            )
    command = results.get("command")
    if command and "difference_us" in command:
        lines += command_targets(command)
    dagster = results.get("dagster")
    if dagster and "workloads" in dagster:
        added = dagster_per_question(dagster)
        lines += [_dagster_target_row(workload, added) for workload in dagster["workloads"]]
        if added is not None:
            lines.append(
                f"| what a question adds to the Dagster job against the CLI ({added['small']:,} to "
                f"{added['large']:,} generated questions, wall) | {added['dagster_us']:.0f} us against "
                f"{added['cli_us']:.0f} us: {added['ratio']:.2f}x | reported |"
            )
        for workload in dagster["workloads"]:
            warm = [r for r in workload["runs"] if r["cache"] == "warm"]
            if not warm:
                continue
            rebuilt = [
                b
                for r in warm
                for b in r["builds"]
                if b.get("lexical_index_loaded_from_cache") is False or b.get("chunks_encoded", 0) > 0
            ]
            written = sum(len(r["dagster_cache_files_written"]) for r in warm)
            lines.append(
                f"| warm Dagster rerun does no work the cache holds ({workload['label']}) | {len(rebuilt)} builds "
                f"rebuilt an index or encoded a chunk; {written} cache files written "
                f"| {yes(not rebuilt and not written)} |"
            )
    return lines


def revision(git: Mapping[str, Any] | None) -> str:
    if not git:
        return "not recorded"
    return f"`{git['commit'][:12]}` ({git['changed_tracked_files']})"


def render(results: Mapping[str, Any]) -> str:
    head = results["header"]
    sections = results["sections"]
    versions = head["versions"]
    lines = [
        "# goldeneval benchmark results",
        "",
        "Generated by `.venv/bin/python -m benchmarks.run` (every section; `--only engine,overhead,...` for "
        "some; `--help` for sizes); the numbers behind every table are in [`results.json`](results.json). "
        "Do not edit by hand: rerun it. Every ratio compares two measurements of the same run; timings "
        "are reported, never asserted.",
        "",
        "## Machine",
        "",
        f"- {head['cpu']}, {head['cpu_count']} CPUs ({head['cpus_usable']} usable), {head['memory_gib']} GiB memory, "
        f"{head['platform']}",
        f"- Python {head['python']}; goldeneval at commit `{head['git']['commit'][:12]}`"
        + (
            f" with {head['git']['changed_tracked_files']} changed tracked files"
            if head["git"]["changed_tracked_files"]
            else ""
        ),
        "- " + ", ".join(f"{name} {v}" for name, v in versions.items() if name != "python"),
        "- threads: " + ", ".join(f"{name}={value}" for name, value in head["threads"].items()),
        "- ranx runs numba kernels on all cores; numpy, pytrec-eval and goldeneval's scoring are single-threaded.",
        "",
        "Sections are measured one by one (`--only`), not always on the machine above: each row names its CPU.",
        "",
        "| section | measured (UTC) | CPU | at commit (changed tracked files) | wall "
        "| peak RSS (largest process of the section) | load average before / after |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in SECTIONS:
        section = sections.get(name)
        if section is None:
            continue
        meta = section["meta"]
        lines.append(
            f"| {name} | {meta['started']} | {meta.get('cpu', 'not recorded')} | {revision(meta.get('git'))} "
            f"| {secs(meta['wall_s'])} "
            f"| {mib(meta['peak_rss_bytes'])} | "
            f"{' '.join(map(str, meta['load_before']))} / {' '.join(map(str, meta['load_after']))} |"
        )
    lines += [
        "",
        f"A load average above {head['cpu_count']} (the CPU count) means other processes competed for the "
        "CPUs during that section: its absolute times are then upper bounds, while its ratios (both sides "
        "measured in the same section, interleaved where cheap) are less affected.",
        "",
        "## Targets (issues 11 and 26)",
        "",
        *targets({name: s.get("data", {}) for name, s in sections.items()}),
    ]
    renderers: tuple[tuple[str, str, Callable[[dict[str, Any]], list[str]]], ...] = (
        ("startup", "Start-up: each command against the import of what it cannot do without", render_startup),
        ("engine", "Scoring engines", render_engine),
        ("overhead", "Framework overhead, and time and memory against question count", render_overhead),
        ("scifact", "SciFact lexical: goldeneval retrieval against bm25s plus pytrec-eval", render_scifact),
        ("dense", "Dense retrieval: cold and warm cache", render_dense),
        ("dagster", "The Dagster job against the CLI", render_dagster),
        ("paths", "The paths a user takes: both plug-in shapes and --format json", render_paths),
        ("memory", "Memory: a run against its set, and 1,000,000 questions through the real path", render_memory),
        ("http", "goldeneval.http against an in-process plug-in and a bare http.client loop", render_http),
        ("command", "goldeneval.command against a bare pipe loop (issue 44)", render_command),
        ("report_html", "The HTML report at 10,000 and 100,000 questions", render_report_html),
        ("answer_calibration", "Answer graders against a labelled calibration set", render_answer_calibration),
        ("pooling", "Pooling: goldeneval pool against a plain pooling loop (issue 40)", render_pooling),
        ("judge_page", "The judging page on 500,000 pooled pairs (issue 40)", render_judge_page),
    )
    for name, title, renderer in renderers:
        section = sections.get(name)
        if section is None:
            continue
        lines += ["", f"## {title}", ""]
        if section.get("error"):
            lines.append(f"Failed: `{section['error'][:500]}`")
        else:
            lines += renderer(section["data"])
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def sizes(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part.strip()]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Run the benchmark suite; write RESULTS.md and results.json.",
    )
    parser.add_argument("--out", type=Path, default=BENCHMARKS, help="folder for RESULTS.md and results.json")
    parser.add_argument("--only", help=f"comma-separated sections ({', '.join(SECTIONS)}); others are kept")
    parser.add_argument("--quick", action="store_true", help=f"tiny sizes; sections {', '.join(QUICK_SECTIONS)}")
    parser.add_argument("--engine-sizes", type=sizes, help="default 10000,100000,1000000 (quick: 1000,3000)")
    parser.add_argument(
        "--engine-peers", help="benchmarks.engine --peers (default pytrec-eval,ranx; quick: pytrec-eval)"
    )
    parser.add_argument(
        "--memory-share",
        type=float,
        default=0.5,
        help="skip a peer expected to need more than this share of the machine's memory (default 0.5: it is shared; "
        "pytrec-eval at 1M was OOM-killed at 0.75)",
    )
    parser.add_argument("--engine-max-seconds", type=float, default=900.0, help="skip a peer expected to take longer")
    parser.add_argument("--questions", type=sizes, help="question counts (default 1000,10000,100000; quick: 100,300)")
    parser.add_argument(
        "--dagster-questions", type=sizes, help="generated sets of the Dagster section (default 10000,100000)"
    )
    parser.add_argument(
        "--paths-questions", type=int, help="large set of the paths section (default 50000; quick: 5000)"
    )
    parser.add_argument(
        "--memory-questions", type=sizes, help="set sizes of the memory section (default 100000,1000000)"
    )
    parser.add_argument("--repeats", type=int, help="warm reruns and repeats of cheap runs (default 2; quick: 1)")
    parser.add_argument(
        "--overhead-rounds",
        type=int,
        help="rounds of the overhead section, each every size once, baseline and compared (default 5; quick: 1)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="SciFact as a BEIR folder")
    parser.add_argument(
        "--dense-set", default=SAMPLE_SET, help=f"set of the dense section: {SAMPLE_SET} or scifact (slow on 2 CPUs)"
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds any one command may take")
    parser.add_argument("--keep-temp", action="store_true", help="keep every section's work folder (logs, stores)")
    parser.add_argument("--section", choices=("header", *SECTIONS), help=argparse.SUPPRESS)
    parser.add_argument("--options", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--section-out", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def resolve(args: argparse.Namespace) -> dict[str, Any]:
    quick = bool(args.quick)
    return {
        "quick": quick,
        "engine_sizes": args.engine_sizes or ([1000, 3000] if quick else [10_000, 100_000, 1_000_000]),
        "engine_peers": args.engine_peers or ("pytrec-eval" if quick else "pytrec-eval,ranx"),
        "memory_share": args.memory_share,
        "engine_max_seconds": args.engine_max_seconds,
        "questions": args.questions or ([100, 300] if quick else [1000, 10_000, 100_000]),
        "dagster_questions": args.dagster_questions or ([100] if quick else [10_000, 100_000]),
        "paths_questions": args.paths_questions or (5_000 if quick else 50_000),
        "memory_questions": args.memory_questions or ([20_000] if quick else [100_000, 1_000_000]),
        "report_sizes": [1_000] if quick else [10_000, 100_000],
        "report_rounds": 1 if quick else 3,
        "pooling_questions": 500 if quick else 10_000,
        "judge_page_questions": 500 if quick else 25_000,
        "repeats": args.repeats if args.repeats is not None else (1 if quick else 2),
        "overhead_rounds": max(args.overhead_rounds if args.overhead_rounds is not None else (1 if quick else 5), 1),
        "data": str(args.data),
        "dense_set": args.dense_set,
        "timeout_s": args.timeout,
        "keep_temp": bool(args.keep_temp),
    }


def run_section_here(name: str, options: dict[str, Any], out: Path) -> None:
    """Child mode: one section in this process, its result as JSON in ``out``."""
    if name == "header":
        out.write_text(json.dumps({"data": header()}), encoding="utf-8")
        return
    work = Path(tempfile.mkdtemp(prefix=f"goldeneval-bench-{name}-"))
    try:
        document: dict[str, Any] = {"data": SECTION_FUNCTIONS[name](options, work)}
    except CommandFailed as exc:
        document = {"error": str(exc), "data": {}}
    finally:
        if options["keep_temp"]:
            print(f"{name}: work folder kept at {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    out.write_text(json.dumps(document, indent=2), encoding="utf-8")


def run_section(name: str, options: dict[str, Any], logs: Path) -> dict[str, Any]:
    """One section in a child process: its result, its wall time, peak RSS and load around it."""
    option_file = logs / "options.json"
    option_file.write_text(json.dumps(options), encoding="utf-8")
    out = logs / f"{name}.json"
    log = logs / f"{name}.log"
    command = [
        sys.executable,
        "-m",
        "benchmarks.run",
        "--section",
        name,
        "--options",
        str(option_file),
        "--section-out",
        str(out),
    ]
    started = datetime.now(UTC)
    before = load_average()
    result = measure(command, env=clean_env(), cwd=REPO, log=log, timeout_s=options["timeout_s"] * 4)
    after = load_average()
    document: dict[str, Any]
    if result.ok and out.exists():
        document = json.loads(out.read_text(encoding="utf-8"))
    else:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        document = {"error": f"section process failed (exit status {result.exit_status}): {tail}", "data": {}}
    document["meta"] = {
        "started": f"{started:%Y-%m-%d %H:%M}",
        "cpu": cpu_model(),
        "wall_s": result.wall_s,
        "peak_rss_bytes": result.peak_rss_bytes,
        "load_before": before,
        "load_after": after,
        "git": git_revision(),
        "options": options,
    }
    return document


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.section:
        options = json.loads(args.options.read_text(encoding="utf-8"))
        run_section_here(args.section, options, args.section_out)
        return 0
    options = resolve(args)
    selected = (
        [s.strip() for s in args.only.split(",")] if args.only else list(QUICK_SECTIONS if args.quick else SECTIONS)
    )
    unknown = [s for s in selected if s not in SECTIONS]
    if unknown:
        print(f"unknown section(s): {', '.join(unknown)}; choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / "results.json"
    results: dict[str, Any] = {"sections": {}}
    if args.only and json_path.exists():
        results = json.loads(json_path.read_text(encoding="utf-8"))
    failed = []
    with tempfile.TemporaryDirectory(prefix="goldeneval-bench-logs-") as temporary:
        logs = Path(temporary)
        results["header"] = run_section("header", options, logs)["data"]
        for name in selected:
            print(f"{name}: running (log: {logs / (name + '.log')})", flush=True)
            document = run_section(name, options, logs)
            results["sections"][name] = document
            if document.get("error"):
                failed.append(name)
                print(f"{name}: failed: {document['error'][:2000]}", file=sys.stderr, flush=True)
            else:
                print(f"{name}: done in {document['meta']['wall_s']:.1f} s", flush=True)
            results["generated"] = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
            json_path.write_text(json.dumps(results, indent=2), encoding="utf-8")
            (args.out / "RESULTS.md").write_text(render(results), encoding="utf-8")
    print(f"wrote {args.out / 'RESULTS.md'} and {json_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
