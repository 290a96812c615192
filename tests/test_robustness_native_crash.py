"""Defect 8: a native crash inside a plug-in exits 128 + N (the README's rule for a signal)
and always says so in one line: the signal, and that it ended inside the run's work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import CliWorkspace

CRASHING_PLUGIN = textwrap.dedent(
    """
    import ctypes
    import os


    class Segfaults:
        def retrieve(self, question, limit):
            ctypes.string_at(0)  # reads address 0: SIGSEGV in native code


    class Aborts:
        def retrieve(self, question, limit):
            os.abort()  # what a failed assertion in a C library does: SIGABRT


    def segfaults(context):
        return Segfaults()


    def aborts(context):
        return Aborts()
    """
)


@pytest.mark.slow  # a real goldeneval process
@pytest.mark.parametrize(("factory", "signum"), [("segfaults", signal.SIGSEGV), ("aborts", signal.SIGABRT)])
def test_a_native_crash_in_a_plugin_exits_128_plus_the_signal_with_one_line(
    cli_workspace: CliWorkspace, factory: str, signum: signal.Signals
) -> None:
    (cli_workspace.root / "crashing_plugin.py").write_text(CRASHING_PLUGIN)
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(cli_workspace.set_path)]
    command += ["--retriever", f"crashing_plugin:{factory}", "--store", str(cli_workspace.store), "--no-progress"]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONFAULTHANDLER"}
    env["PYTHONPATH"] = str(cli_workspace.root)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 128 + signum
    assert result.stderr == (
        f"goldeneval: error: goldeneval was ended by signal {int(signum)} ({signum.name}) inside the run's work, "
        "before the command finished (a native crash in a plug-in, or a signal sent to it); "
        "nothing partial was stored\n"
    )
    assert not cli_workspace.store.exists()
