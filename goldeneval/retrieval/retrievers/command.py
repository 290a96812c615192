"""``goldeneval.command``: measure a search program in any language over JSON lines.

``--option command="php search.php"`` starts the program (split as a POSIX shell would, run
without a shell, with goldeneval's environment and current folder) and keeps it running.
For each question goldeneval writes one line to its standard input,
``{"id": 7, "question": "...", "limit": 100}``, and reads one line from its standard output,
``{"id": 7, "ids": ["doc-3", "doc-1"]}`` (best first), or ``{"id": 7, "error": "..."}`` for a
question the program cannot answer.  Its standard error is goldeneval's.  The program must
flush each answer line, write nothing else on standard output, and exit when its standard
input closes.

A question whose program exits or is killed, writes a line that is not such an answer, answers
another id, or gives no answer within ``timeout_s`` (30 s) is that question's error; the program
is then stopped (its whole process group) and a fresh one answers the next question.  An
answer whose ``ids`` are not a list of strings is also that question's error, but the program,
still in step, keeps running.

``--workers N``: each program answers one question at a time, and up to N run at once (one per
question in flight, started when first needed and reused), so a program never sees two
questions interleaved.  ``processes=K`` caps them at K: ``processes=1`` makes every question
wait its turn for one program (for a program that cannot run twice, or one too large to).

Every program is ended when the retriever is closed (:meth:`CommandRetriever.close`), when it is
garbage-collected after the run, and at interpreter exit (on an exception and on Ctrl-C too):
its standard input is closed, then its process group gets SIGTERM after a second and SIGKILL
after another, and it is waited for, so none is left behind, not even as a zombie.  A program
outlives goldeneval only if goldeneval is killed (SIGKILL) and it ignores the end of its input.
POSIX only (``poll``, process groups).

Provenance: the pipeline identity is the command line and a digest of the files it names (so
editing ``search.php`` is a new variant); corpus and model revisions are those declared by the
options ``corpus_revision`` and ``model_revision``, unknown otherwise.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from types import TracebackType
from typing import Any

from goldeneval.core.errors import RetrieverError, one_line
from goldeneval.core.provenance import Provenance, canonical_text
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision, option_label
from goldeneval.retrieval.retrievers.external import (
    REVISION_OPTIONS,
    SearchError,
    bounded_identity,
    describe_json,
    refuse_secret,
    string_ids,
)
from goldeneval.retrieval.retrievers.options import check_known_options, float_option, int_option, str_option
from goldeneval.retrieval.retrievers.revisions import declared_revisions

__all__ = ["COMMAND_OPTIONS", "CommandRetriever", "build"]

RETRIEVER_ID = "goldeneval.command"
COMMAND_OPTIONS = ("command", "timeout_s", "processes", *REVISION_OPTIONS)
DEFAULT_TIMEOUT_S = 30.0
MAX_LINE_BYTES = 16 * 1024 * 1024
STOP_GRACE_S = 1.0
"""How long a program has to exit after its input closes, and again after SIGTERM."""
_READ_SIZE = 65536
INHERITED_ENVIRONMENT_HINT = (
    "the program inherits goldeneval's environment: let it read the secret from an environment variable"
)


class _OutOfStep(Exception):
    """The program cannot answer the next question as it is: it is stopped and replaced."""


class _Program:
    """One running copy of the command, used by one thread at a time."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
            process_group=0,  # its own process group: stopped whole, children included
        )
        if self.process.stdin is None or self.process.stdout is None:  # pragma: no cover - PIPE was given
            raise RuntimeError("subprocess.Popen gave no pipes")
        self._in = self.process.stdin.fileno()
        self._out = self.process.stdout.fileno()
        os.set_blocking(self._in, False)
        self._readable = select.poll()
        self._readable.register(self._out, select.POLLIN)
        self._writable = select.poll()
        self._writable.register(self._in, select.POLLOUT)
        self._buffer = bytearray()

    def ask(self, request_id: int, question: str, limit: int, deadline: float) -> Any:
        """The program's answer to one question, as parsed JSON with the right id."""
        # json.dumps of {"id": ..., "question": ..., "limit": ...}, byte for byte, the text alone encoded
        data = f'{{"id": {request_id:d}, "question": {json.dumps(question)}, "limit": {limit:d}}}\n'.encode()
        try:
            written = os.write(self._in, data)  # the usual case: the whole line at once
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, ConnectionResetError):
            raise _OutOfStep(f"the program {self._ended()} before reading its question") from None
        if written < len(data):
            self._write(data[written:], deadline)
        raw = self._read_line(deadline)
        while not raw.strip():  # a blank line is no answer; wait for the next
            raw = self._read_line(deadline)
        try:  # an object line is UTF-8 (what json.loads would detect), decoded here at once
            answer = json.loads(raw.decode("utf-8") if raw[:1] == b"{" else raw)
        except ValueError:
            raise _OutOfStep(f"the program wrote a line that is not JSON: {_shown(raw)!r}") from None
        if type(answer) is not dict or "id" not in answer:
            raise _OutOfStep(f'the program wrote {describe_json(answer)}, not {{"id": {request_id}, "ids": [...]}}')
        answered = answer["id"]
        if type(answered) is not int or answered != request_id:
            raise _OutOfStep(f"the program answered id {one_line(repr(answered), 40)}, not {request_id}")
        return answer

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._in, view) :]
            except BlockingIOError:
                self._wait(self._writable, deadline, "to read its question")
            except (BrokenPipeError, ConnectionResetError):
                raise _OutOfStep(f"the program {self._ended()} before reading its question") from None

    def _read_line(self, deadline: float) -> bytes:
        if not self._buffer:  # the usual case: the answer arrives as one whole line
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._readable.poll(max(1, int(remaining * 1000))):
                self._wait(self._readable, deadline, "to answer")  # times out, or waits on
            chunk = os.read(self._out, _READ_SIZE)
            if not chunk:
                raise _OutOfStep(f"the program {self._ended()} before answering")
            end = chunk.find(b"\n")
            if end == len(chunk) - 1:
                return chunk[:end]
            self._buffer += chunk
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > MAX_LINE_BYTES:
                raise _OutOfStep(f"the program's answer line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
            self._wait(self._readable, deadline, "to answer")
            chunk = os.read(self._out, _READ_SIZE)
            if not chunk:
                raise _OutOfStep(f"the program {self._ended()} before answering")
            self._buffer += chunk

    @staticmethod
    def _wait(poller: select.poll, deadline: float, doing: str) -> None:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Hung(doing)
            if poller.poll(max(1, int(remaining * 1000))):
                return

    def _ended(self) -> str:
        """How the program ended: ``exited with status 3``, ``was killed by signal 9 (SIGKILL)``."""
        try:
            code = self.process.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            return "closed its output"
        if code < 0:
            with suppress(ValueError):
                return f"was killed by signal {-code} ({signal.Signals(-code).name})"
            return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def kill(self) -> None:
        """Stop the program's process group at once and reap it.  Touches no pipe, so that it is
        safe while another thread is asking this program (it then reads the end of the output)."""
        _signal_group(self.process, signal.SIGKILL)
        self.process.wait()

    def close_input(self) -> None:
        """Close the program's standard input: the polite way to ask it to exit."""
        with suppress(OSError):
            if self.process.stdin is not None:
                self.process.stdin.close()

    def release(self) -> None:
        """Close both pipes; only by the thread using the program, or when none is."""
        self.close_input()
        with suppress(OSError):
            if self.process.stdout is not None:
                self.process.stdout.close()


def _shown(raw: bytes) -> str:
    """The start of a line the program wrote, as an error message quotes it."""
    return one_line(raw[:200].decode("utf-8", "replace"), 100)


class _Hung(_OutOfStep):
    def __init__(self, doing: str) -> None:
        super().__init__(doing)
        self.doing = doing


def _signal_group(process: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)  # the group outlives its leader while a child of it runs
    with suppress(ProcessLookupError):
        if process.returncode is None:
            process.send_signal(signum)


def stop_programs(programs: Sequence[_Program], grace_s: float = STOP_GRACE_S) -> None:
    """End ``programs`` politely, then surely: their input is closed; after ``grace_s`` each
    process group gets SIGTERM, after another ``grace_s`` SIGKILL; each program is waited for
    (no zombie).  A group is signalled even when its program exited: it may have left children."""
    for program in programs:
        program.close_input()
    _wait_for(programs, grace_s)
    for program in programs:
        _signal_group(program.process, signal.SIGTERM)
    _wait_for(programs, grace_s)
    for program in programs:
        program.kill()
        program.release()


def _wait_for(programs: Sequence[_Program], grace_s: float) -> None:
    deadline = time.monotonic() + grace_s
    for program in programs:
        with suppress(subprocess.TimeoutExpired):
            program.process.wait(timeout=max(0.0, deadline - time.monotonic()))


class _Programs:
    """The running programs: idle ones to reuse, at most ``limit`` in all (None: no cap).

    Holds no reference to its retriever, so that a finalizer can end the programs after it.
    """

    def __init__(self, argv: Sequence[str], limit: int | None, timeout_s: float) -> None:
        self.argv = tuple(argv)
        self.limit = limit
        self.timeout_s = timeout_s
        self._idle: list[_Program] = []
        self._live: list[_Program] = []
        self._starting = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiting = 0
        """Threads waiting in :meth:`checkout` for a program to be freed (none: no notify)."""
        self._closed = False

    def checkout(self, deadline: float) -> _Program:
        """An idle program, else a new one when the cap allows, else the next one freed."""
        with self._lock:  # the usual case: the program the last question used
            if self._idle and not self._closed:
                return self._idle.pop()
        with self._cond:
            while True:
                if self._closed:
                    raise SearchError("the retriever was closed")
                if self._idle:
                    return self._idle.pop()
                if self.limit is None or len(self._live) + self._starting < self.limit:
                    self._starting += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SearchError(
                        f"no program was free within {self.timeout_s:g} s (option timeout_s; processes={self.limit})"
                    )
                self._waiting += 1
                try:
                    self._cond.wait(remaining)
                finally:
                    self._waiting -= 1
        try:
            program = self.start()
        finally:
            with self._cond:
                self._starting -= 1
                self._cond.notify()
        with self._cond:
            if not self._closed:
                self._live.append(program)
                return program
        program.kill()
        program.release()
        raise SearchError("the retriever was closed")

    def start(self) -> _Program:
        try:
            return _Program(self.argv)
        except OSError as exc:
            raise SearchError(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None

    def adopt(self, program: _Program) -> None:
        """Keep a program started outside :meth:`checkout` as an idle one."""
        with self._cond:
            self._live.append(program)
            self._idle.append(program)

    def checkin(self, program: _Program) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(program)
                if self._waiting:
                    self._cond.notify()
                return
        program.kill()
        program.release()

    def discard(self, program: _Program) -> None:
        """Stop a program that is out of step; the next question starts a fresh one."""
        program.kill()
        program.release()
        with self._cond:
            if program in self._live:
                self._live.remove(program)
            self._cond.notify()

    def close(self) -> None:
        """End every program: the idle ones politely (:func:`stop_programs`), those a thread is
        still asking (a hung call the run gave up on) at once; that thread then stops asking."""
        with self._cond:
            self._closed = True
            idle, busy = list(self._idle), [program for program in self._live if program not in self._idle]
            self._live.clear()
            self._idle.clear()
            self._cond.notify_all()
        for program in busy:
            program.kill()
        stop_programs(idle)

    def pids(self) -> list[int]:
        with self._cond:
            return [program.process.pid for program in self._live]


class CommandRetriever:
    """A search program answering one JSON line per question (module docstring)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        processes: int | None = None,
        revisions: dict[str, str | None] | None = None,
    ) -> None:
        if not argv:
            raise RetrieverError(f"retriever {RETRIEVER_ID!r}: the command is empty")
        self.argv = tuple(argv)
        self.timeout_s = timeout_s
        self.revisions = dict(revisions or {})
        self._programs = _Programs(self.argv, processes, timeout_s)
        self._finalizer = weakref.finalize(self, self._programs.close)  # also at interpreter exit
        self._ids = itertools.count(1)
        """Request ids; ``next`` on it is one atomic step under the GIL, so threads share it unlocked."""
        try:
            self._programs.adopt(self._programs.start())  # a command that cannot start fails the build
        except SearchError as exc:
            self._finalizer()
            raise RetrieverError(f"retriever {RETRIEVER_ID!r}: {exc}") from None

    def retrieve(self, question: str, limit: int) -> list[str]:
        deadline = time.monotonic() + self.timeout_s
        request_id = next(self._ids)
        program = self._programs.checkout(deadline)
        try:
            answer = program.ask(request_id, question, limit, deadline)
        except _Hung as exc:
            self._programs.discard(program)
            raise SearchError(
                f"the program took longer than {self.timeout_s:g} s (option timeout_s) {exc.doing}; "
                "it was stopped, a fresh one answers the next question"
            ) from None
        except _OutOfStep as exc:
            self._programs.discard(program)
            raise SearchError(f"{exc}; a fresh program answers the next question") from None
        except BaseException:  # Ctrl-C mid-question: its answer may still come, out of step
            self._programs.discard(program)
            raise
        self._programs.checkin(program)
        if "ids" not in answer and isinstance(answer.get("error"), str):
            raise SearchError(f"the program says: {one_line(answer['error'])}")
        ids = answer.get("ids")
        if not isinstance(ids, list):
            raise SearchError(f'the answer\'s "ids" is {describe_json(ids)}, not a list of ids')
        return string_ids(ids, lambda i: f"ids[{i}]")

    def provenance(self) -> Provenance:
        identity = f"{RETRIEVER_ID}/{shlex.join(self.argv)}"
        files = _named_files(self.argv)
        if files:
            digest = hashlib.sha256(canonical_text(files).encode("utf-8")).hexdigest()[:16]
            identity += f" files:sha256:{digest}"
        return Provenance(
            corpus_revision=self.revisions.get("corpus_revision"),
            model_revision=self.revisions.get("model_revision"),
            pipeline_identity=bounded_identity(identity),
            execution_revision=execution_revision(),
        )

    def running_pids(self) -> list[int]:
        """The process ids of the programs running now (for tests and diagnostics)."""
        return self._programs.pids()

    def close(self) -> None:
        """End every program (see the module docstring); the retriever answers nothing after."""
        self._finalizer()

    def __enter__(self) -> CommandRetriever:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _named_files(argv: Sequence[str]) -> list[list[str]]:
    """``[argument, sha256]`` of each argument naming a file (the program itself when given as a path)."""
    named: list[list[str]] = []
    for position, argument in enumerate(argv):
        if position == 0 and "/" not in argument:
            continue  # found on PATH: an interpreter or a tool, not the search code
        path = Path(argument)
        with suppress(OSError):
            if path.is_file():
                named.append([argument, hashlib.sha256(path.read_bytes()).hexdigest()])
    return named


def _argv(command: str, label: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise RetrieverError(f"{label}: cannot split {command!r}: {exc}") from None
    if not argv:
        raise RetrieverError(f"{label}: must not be empty")
    program = argv[0]
    if "/" in program:
        if not (Path(program).is_file() and os.access(program, os.X_OK)):
            raise RetrieverError(f"{label}: {program} is not an executable file")
    elif shutil.which(program) is None:
        raise RetrieverError(f"{label}: {program!r} is not found on PATH")
    return argv


def build(context: RetrieverContext) -> CommandRetriever:
    """Entry-point factory for ``goldeneval.command``; option ``command`` is required."""
    check_known_options(context, RETRIEVER_ID, COMMAND_OPTIONS)
    for name, value in context.options.items():
        refuse_secret(value, option_label(name, RETRIEVER_ID), INHERITED_ENVIRONMENT_HINT)
    command = str_option(context, "command", retriever_id=RETRIEVER_ID)
    if command is None:
        raise RetrieverError(
            f'retriever {RETRIEVER_ID!r} needs option command=..., e.g. --option command="php search.php"'
        )
    argv = _argv(command, option_label("command", RETRIEVER_ID))
    return CommandRetriever(
        argv,
        timeout_s=float_option(
            context, "timeout_s", DEFAULT_TIMEOUT_S, minimum=0.001, maximum=86400, retriever_id=RETRIEVER_ID
        ),
        processes=int_option(context, "processes", minimum=1, retriever_id=RETRIEVER_ID),
        revisions=declared_revisions(context, RETRIEVER_ID),
    )
