"""How every file a person is shown is written: whole or not at all, where it was asked for.

The Markdown summary, the JUnit XML and the HTML report all go through :func:`write_whole`:
a regular file (or a new one) is written to a temporary file beside it, synced and moved over
it with :func:`os.replace`, so a reader sees the old file or the whole new one and a failed write
leaves no half file; its folder is created when missing.  Anything else that already stands at
the path (``/dev/stdout``, a FIFO, a symbolic link, a device) is written through, never
replaced: ``--summary-md /dev/stdout`` prints, and a CI container's ``/dev`` stays as it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = ["OutputFileError", "check_output_path", "write_whole"]


class OutputFileError(OSError):
    """An output file that cannot be written, naming the path the user gave."""


def _replaceable(path: Path) -> bool:
    """Whether ``path`` is absent or a regular file (not a link, a device, a FIFO)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return True
    return stat.S_ISREG(mode)


def check_output_path(path: Path) -> None:
    """Refuse, before anything runs, a path no file can be written to: a folder, or one below
    a file.  A missing folder is fine (it is created when the file is written)."""
    if path.is_dir():
        raise OutputFileError(f"{path} is a folder")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputFileError(f"{path}: {parent} is not a folder")
            if not os.access(parent, os.W_OK | os.X_OK) and not path.exists():
                raise OutputFileError(f"{path}: the folder {parent} is not writable")
            return


def write_whole(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (see the module); returns ``path``.

    Raises :class:`OutputFileError` naming ``path`` when it cannot be written."""
    try:
        if not _replaceable(path):
            with open(path, "wb") as through:  # a device, a FIFO, a link: written through
                through.write(data)
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
