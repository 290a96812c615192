"""Reading a whole UTF-8 text file, every failure one line naming the file; and whether a string
is text UTF-8 can hold.

Light on purpose (the standard library and :mod:`goldeneval.core.errors` only): the suite
file is read through it when the CLI starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from goldeneval.core.errors import GoldenEvalError


def read_utf8(path: Path, error: Callable[[str], GoldenEvalError], not_found: str) -> str:
    """The file's text.  A missing file is ``error("<path>: <not_found>")``, in the caller's
    words (what the file is, how to make one); bytes that are not UTF-8 and any other read
    failure are worded here, the same for every file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: {not_found}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not valid UTF-8 (byte offset {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror}") from None


def is_unicode_text(text: str) -> bool:
    """Whether ``text`` is Unicode text, so UTF-8 can hold it: not when it holds a lone
    surrogate, which Python lets a decoder or a JSON escape such as ``"\\ud83d"`` make, and
    which no file, store or JSON output can then write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
