"""The supervised child ends as the interpreter would, less its module teardown: a plug-in's
non-daemon thread is waited for, its atexit handlers run and its output is whole; the exit
code is the command's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from goldeneval.cli import ExitCode
from tests.conftest import CliWorkspace

FINISHING_PLUGIN = textwrap.dedent(
    """
    import atexit
    import sys
    import threading
    import time


    class Answers:
        def retrieve(self, question, limit):
            return ["a"]


    def late_words():
        # After the run, whatever the machine's load: the main thread is stopped when the
        # interpreter (or the supervised child, as it) begins to wait for threads like this one.
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        time.sleep(0.2)
        print("thread: done after the run", flush=False)


    def build(context):
        atexit.register(lambda: sys.stderr.write("atexit: ran\\n"))
        threading.Thread(target=late_words, name="finishing").start()
        return Answers()
    """
)


@pytest.mark.slow  # a real goldeneval process
def test_a_plugins_thread_and_atexit_handler_finish_before_the_child_ends(cli_workspace: CliWorkspace) -> None:
    (cli_workspace.root / "finishing_plugin.py").write_text(FINISHING_PLUGIN)
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(cli_workspace.set_path)]
    command += ["--retriever", "finishing_plugin:build", "--store", str(cli_workspace.store), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(cli_workspace.root)}
    env.pop("GOLDENEVAL_NO_SUPERVISOR", None)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == ExitCode.OK, result.stderr
    assert "Regression verdict: unknown" in result.stdout  # the plug-in declares no provenance
    assert result.stdout.rstrip().endswith("thread: done after the run")  # waited for, and flushed
    assert result.stderr.splitlines()[-1] == "atexit: ran"
    assert "goldeneval: warning" not in result.stderr
