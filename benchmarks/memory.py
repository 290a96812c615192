"""The ``memory`` section of ``benchmarks.run`` (issue 26): what a run holds against its set.

Generated sets (:func:`benchmarks.zero_retriever.write_set`) at 100,000 and 1,000,000
questions, each run as a user runs it: ``goldeneval retrieval`` with string ids in (the
``shape=generated`` retriever builds each ranking of 100 chunk ids when asked, so it holds
nothing in advance) and a stored run out, a whole process measured from outside.

* **The set's own size in memory**: the peak RSS of a Python process that loads the set with
  goldeneval's loader (``load_golden_set``), less that of one that only imports the loader.
  Reported beside it, **what the set keeps**: that process's RSS once the set is loaded and
  the collector has run, less the importing one's: the loader's peak holds the parse's garbage
  too, which the set does not keep (the run pays that peak as well, as it loads the set).  An
  upper bound: memory the parse freed but the allocator kept is still resident (for 100,000
  questions, about 16 MiB more than the live objects ``tracemalloc`` counts).
* **Target: the run at 100,000 within 1.5x of the set's own size**: the run's peak RSS less
  that of a process importing what the run imports, against the set's own size.
* **Target: 1,000,000 x 100 through the real path within 2 GB**: the run's peak RSS.
* **Target: 1,000,000 x 100 from Python string ids within 2 GB end to end** (issue 44): a
  process that holds a run as Python lists of string ids (:func:`python_id_run`: the zero-cost
  retriever's rankings, as document ids) and codes and scores it with the columnar core
  (``columnar.encode``, then ``columnar.score``), its peak RSS; beside it, its peer: a process
  that only builds the same lists (what the ids themselves cost), and the ratio of the two.

The functions of ``benchmarks.run`` that measure a process are imported when the section runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["RUN_LIMIT_BYTES", "SET_RATIO", "memory_targets", "python_id_run", "render_memory", "section_memory"]

SET_RATIO = 1.5
"""The run at 100,000 questions within this many times the set's own size in memory."""
RUN_LIMIT_BYTES = 2 * 10**9
"""1,000,000 x 100 through the real path within 2 GB (and from Python string ids, end to end)."""
PYTHON_IDS_FROM = 100_000
"""Sizes from which the run from Python string ids is measured too."""
_RSS_NOW = (
    "gc.collect(); "
    "print([int(line.split()[1]) * 1024 for line in open('/proc/self/status') if line.startswith('VmRSS:')][0])"
)
"""Prints the process's resident set (bytes) now, after a collection."""
LOAD_SET = (
    "import gc, sys; from pathlib import Path; from goldeneval.retrieval.golden import load_golden_set; "
    "loaded = load_golden_set(Path(sys.argv[1])); " + _RSS_NOW
)
"""Loads the set, and prints its RSS (bytes) once the collector has run, the set still held."""
LOADER_IMPORTS = "import gc, goldeneval.retrieval.golden; " + _RSS_NOW
WRITE_SET = (
    "import sys; from pathlib import Path; from benchmarks.zero_retriever import write_set; "
    "write_set(Path(sys.argv[1]), int(sys.argv[2]))"
)
PYTHON_IDS_BUILT = (
    "import sys; from goldeneval.retrieval import columnar; from benchmarks.memory import python_id_run; "
    "rankings, judged = python_id_run(int(sys.argv[1]))"
)
"""Builds a run of Python string ids and stops: the peer, what the ids cost (imports included)."""
PYTHON_IDS_SCORED = (
    PYTHON_IDS_BUILT + "; coded = columnar.encode(rankings, judged); "
    "scores = columnar.score(coded.rankings, coded.judgements, depth_limit=10); "
    "print(len(coded.vocabulary), scores.means())"
)
"""Builds the same run, codes it from its Python string ids and scores it."""
RUN_IMPORTS = (
    "import goldeneval.cli.retrieval, goldeneval.retrieval.pipeline, goldeneval.store, benchmarks.zero_retriever"
)


def python_id_run(n: int, depth: int = 100) -> tuple[list[list[str]], list[list[str]]]:
    """``n`` rankings of ``depth`` document ids, as Python lists of strings, and each question's
    judged documents: :mod:`benchmarks.zero_retriever`'s rankings (its distractors, the expected
    document at a rank that cycles with the question), document ids rather than chunk ids.  The
    distractors are shared string objects, the expected ids made afresh (as a plug-in's are)."""
    from benchmarks.zero_retriever import DISTRACTORS, HIT_CYCLE

    pool = [f"other{j}" for j in range(DISTRACTORS)]
    pool = pool * (1 + (depth + DISTRACTORS - 1) // DISTRACTORS)
    rankings: list[list[str]] = []
    for i in range(n):
        start = (i * 31) % DISTRACTORS
        ids = pool[start : start + depth]
        position = i % HIT_CYCLE
        if position < min(10, depth):
            ids[position] = f"doc{i}"
        rankings.append(ids)
    return rankings, [[f"doc{i}"] for i in range(n)]


def section_memory(options: dict[str, Any], work: Path) -> dict[str, Any]:
    from benchmarks.measure import REPO, ZERO_RETRIEVER, checked, clean_env, goldeneval_command, measure, shown

    timeout = options["timeout_s"]
    env = clean_env(GOLDENEVAL_TABLES=work / "tables")

    def run(argv: list[str], tag: str) -> Any:
        log = work / f"{tag}.log"
        return checked(measure(argv, env=env, cwd=REPO, log=log, timeout_s=timeout), log)

    # The baselines first, and every set written by a process of its own: Linux gives a child
    # the peak RSS of the process that started it as a floor of its own (``ru_maxrss`` survives
    # exec), so this process must stay as small as it started.
    loader_imports = run([sys.executable, "-c", LOADER_IMPORTS], "loader-imports").peak_rss_bytes
    loader_imports_now = _printed_bytes(work / "loader-imports.log")
    run_imports = run([sys.executable, "-c", RUN_IMPORTS], "run-imports").peak_rss_bytes
    sizes: dict[str, Any] = {}
    for n in options["memory_questions"]:
        set_path = work / f"set-{n}.jsonl"
        run([sys.executable, "-c", WRITE_SET, str(set_path), str(n)], f"write-{n}")
        command = [goldeneval_command(), "retrieval", "--set", str(set_path), "--retriever", ZERO_RETRIEVER]
        command += ["--option", "shape=generated", "--no-progress", "--store", str(work / f"run-{n}.duckdb")]
        command += ["--cache-dir", str(work / "cache")]
        the_run = run(command, f"run-{n}")
        loaded = run([sys.executable, "-c", LOAD_SET, str(set_path)], f"load-{n}")
        sizes[str(n)] = {
            "run_peak_rss_bytes": the_run.peak_rss_bytes,
            "run_wall_s": the_run.wall_s,
            "run_cpu_s": the_run.user_s + the_run.system_s,
            "loader_peak_rss_bytes": loaded.peak_rss_bytes,
            "set_kept_bytes": _printed_bytes(work / f"load-{n}.log") - loader_imports_now,
            "set_file_bytes": set_path.stat().st_size,
            "command": " ".join(map(shown, command)),
        }
        (work / f"run-{n}.duckdb").unlink()
        set_path.unlink()
        if n >= PYTHON_IDS_FROM:
            built = run([sys.executable, "-c", PYTHON_IDS_BUILT, str(n)], f"python-ids-built-{n}")
            scored = run([sys.executable, "-c", PYTHON_IDS_SCORED, str(n)], f"python-ids-scored-{n}")
            sizes[str(n)]["python_ids"] = {
                "built_peak_rss_bytes": built.peak_rss_bytes,
                "scored_peak_rss_bytes": scored.peak_rss_bytes,
                "scored_wall_s": scored.wall_s,
                "built_wall_s": built.wall_s,
                "ratio": scored.peak_rss_bytes / max(built.peak_rss_bytes, 1),
                "command": f"python -c '{PYTHON_IDS_SCORED}' {n}",
            }
    for size in sizes.values():
        size["set_in_memory_bytes"] = size["loader_peak_rss_bytes"] - loader_imports
        size["run_beyond_imports_bytes"] = size["run_peak_rss_bytes"] - run_imports
        size["ratio_to_set"] = size["run_beyond_imports_bytes"] / max(size["set_in_memory_bytes"], 1)
        size["ratio_to_kept"] = size["run_beyond_imports_bytes"] / max(size["set_kept_bytes"], 1)
    return {"loader_imports_rss_bytes": loader_imports, "run_imports_rss_bytes": run_imports, "sizes": sizes}


def _printed_bytes(log: Path) -> int:
    """The byte count a :data:`LOAD_SET` or :data:`LOADER_IMPORTS` process printed last."""
    return int(log.read_text(encoding="utf-8").split()[-1])


def render_memory(section: dict[str, Any]) -> list[str]:
    from benchmarks.measure import mib, secs

    rows = [
        "| questions | set file | the set in memory (loader process less its imports) | what the set keeps "
        "| run peak RSS | run beyond its imports | run / set | run / what the set keeps | run wall | run CPU |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, size in section["sizes"].items():
        rows.append(
            f"| {int(n):,} | {mib(size['set_file_bytes'])} | {mib(size['set_in_memory_bytes'])} "
            f"| {_kept(size)} | {mib(size['run_peak_rss_bytes'])} | {mib(size['run_beyond_imports_bytes'])} "
            f"| {size['ratio_to_set']:.2f}x | {_kept_ratio(size)} | {secs(size['run_wall_s'])} "
            f"| {secs(size['run_cpu_s'])} |"
        )
    first = next(iter(section["sizes"].values()))
    python_rows = [
        f"| {int(n):,} x 100 | {mib(ids['built_peak_rss_bytes'])} | {mib(ids['scored_peak_rss_bytes'])} "
        f"| {ids['ratio']:.2f}x | {secs(ids['built_wall_s'])} | {secs(ids['scored_wall_s'])} |"
        for n, size in section["sizes"].items()
        if (ids := size.get("python_ids"))
    ]
    python_ids = []
    if python_rows:
        python_ids = [
            "",
            "From Python string ids, end to end (issue 44): a process that builds the run as Python lists of string "
            "ids (`benchmarks.memory.python_id_run`: the zero-cost retriever's rankings as document ids, its "
            "distractors shared string objects) and codes and scores it with the columnar core "
            "(`columnar.encode`, then `columnar.score`); its peer: a process that only builds the same lists. "
            "Peak RSS of each, imports included. The shape measured: 997 distinct distractor ids, each one "
            "string object shared by every ranking that holds it (as a retriever returning its own id strings "
            "hands them over), and each question's expected id a string of its own. A plug-in that parses fresh "
            "strings for every answer (JSON from a service) holds one object per returned id: its lists alone "
            "then take several GB at this size, before goldeneval codes anything.",
            "",
            "| run | peer: the Python ids alone | coded and scored | ratio | peer wall | wall |",
            "| --- | --- | --- | --- | --- | --- |",
            *python_rows,
        ]
    return [
        "`goldeneval retrieval` on generated sets, string ids in (`benchmarks.zero_retriever` with "
        "`shape=generated`: each ranking of 100 chunk ids built when asked, nothing held in advance) and a stored run "
        "out, a whole process each. The set in memory: the peak RSS of a process loading the set with "
        f"`load_golden_set`, less one importing the loader ({mib(section['loader_imports_rss_bytes'])}); the run "
        f"beyond its imports: less a process importing what the run imports ({mib(section['run_imports_rss_bytes'])}). "
        "What the set keeps: the loading process's RSS once the set is loaded and the collector has run, less "
        "the importing one's (the loader's peak also holds the parse's garbage, which the run pays too; an upper "
        "bound, as memory the parse freed but the allocator kept is still resident).",
        "",
        *rows,
        "",
        f"Command: `{first['command']}`",
        *python_ids,
    ]


def _kept(size: dict[str, Any]) -> str:
    from benchmarks.measure import mib

    return mib(size["set_kept_bytes"]) if "set_kept_bytes" in size else "-"  # "-": measured before it was


def _kept_ratio(size: dict[str, Any]) -> str:
    return f"{size['ratio_to_kept']:.2f}x" if "ratio_to_kept" in size else "-"


def memory_targets(section: dict[str, Any]) -> list[str]:
    from benchmarks.measure import mib, yes

    lines = []
    sizes = section["sizes"]
    if "100000" in sizes:
        size = sizes["100000"]
        measured = (
            f"{mib(size['run_beyond_imports_bytes'])} beyond the run's imports against the loader's peak, "
            f"{mib(size['set_in_memory_bytes'])}: {size['ratio_to_set']:.2f}x"
        )
        met = yes(size["ratio_to_set"] <= SET_RATIO)
        if "ratio_to_kept" in size:  # the target does not say which of the two it means: both, plainly
            measured += f"; against what the set keeps, {_kept(size)}: {size['ratio_to_kept']:.2f}x"
            met = f"{met} against the loader's peak; {yes(size['ratio_to_kept'] <= SET_RATIO)} against what it keeps"
        lines.append(
            f"| memory at 100,000 questions within {SET_RATIO:g}x the set's own size in memory | {measured} | {met} |"
        )
    if "1000000" in sizes:
        peak = sizes["1000000"]["run_peak_rss_bytes"]
        lines.append(
            f"| 1,000,000 x 100 through the real path (string ids in, stored run out) within 2 GB "
            f"| {peak / 1e9:.2f} GB ({mib(peak)}) peak RSS | {yes(peak <= RUN_LIMIT_BYTES)} |"
        )
        ids = sizes["1000000"].get("python_ids")
        if ids:
            scored, built = ids["scored_peak_rss_bytes"], ids["built_peak_rss_bytes"]
            lines.append(
                f"| 1,000,000 x 100 from Python string ids (coded and scored) within 2 GB end to end "
                f"| {scored / 1e9:.2f} GB ({mib(scored)}) peak RSS; the ids alone {mib(built)}: {ids['ratio']:.2f}x "
                f"| {yes(scored <= RUN_LIMIT_BYTES)} |"
            )
    return lines
