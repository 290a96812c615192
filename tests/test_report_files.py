"""goldeneval.report.files: every file a person is shown is written whole or not at all, and
what already stands at a path that is not a regular file is written through, never replaced."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from goldeneval.report.files import OutputFileError, check_output_path, write_whole


def test_a_missing_folder_is_created_and_no_temporary_is_left(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "summary.md"
    assert write_whole(target, b"one") == target
    assert target.read_bytes() == b"one"
    write_whole(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["summary.md"]


def test_a_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    write_whole(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_fifo_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_whole(fifo, b"through the pipe")
    reader.join(10)
    assert received == [b"through the pipe"]
    assert fifo.is_fifo()


def test_a_full_device_is_an_error_naming_the_path_given() -> None:
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full on this system")
    with pytest.raises(OutputFileError, match=r"^cannot write /dev/full: No space left on device$"):
        write_whole(full, b"x" * 100_000)
    assert full.is_char_device()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: root, "is a folder"),
        (lambda root: (root / "file.txt").joinpath("x.md"), "file.txt is not a folder"),
    ],
)
def test_a_path_no_file_can_be_written_to_is_refused_before_anything_runs(
    tmp_path: Path, make: object, message: str
) -> None:
    (tmp_path / "file.txt").write_text("a file")
    assert callable(make)
    with pytest.raises(OutputFileError, match=message):
        check_output_path(make(tmp_path))
    check_output_path(tmp_path / "missing" / "folder" / "x.md")  # created when written: fine
