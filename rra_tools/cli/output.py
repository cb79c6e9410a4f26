"""``click.echo`` for the commands that may run without click (the fast path of ``rra validate``,
:mod:`.main`): importing click is 11 ms of a 60 ms ``rra validate``."""

from __future__ import annotations

import codecs
import io
import re
import sys

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import TextIO

__all__ = ["echo", "plain_streams"]

# click's strip_ansi pattern (click/_compat.py of click 8.5), applied where click.echo applies it.
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")


def plain_streams() -> bool:
    """Whether standard output and error are text files that ``click.echo`` writes to as they
    are: an ASCII one is replaced by click with a UTF-8 writer, and a replaced stream (a test
    runner's, a notebook's) may be anything. :func:`echo` without click is exact only here."""
    for stream in (sys.stdout, sys.stderr):
        if type(stream) is not io.TextIOWrapper:
            return False
        try:
            if codecs.lookup(stream.encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True


def echo(message: str, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """``click.echo(message, err=err, nl=nl, color=color)``. Without click loaded (only when
    :func:`plain_streams` holds), the same: the line end, escapes stripped unless colour is
    wanted (a terminal when ``color`` is None), written and flushed."""
    if "click" in sys.modules:
        import click

        click.echo(message, err=err, nl=nl, color=color)
        return
    stream = sys.stderr if err else sys.stdout
    out = message + "\n" if nl else message
    if not out:
        stream.flush()
        return
    if not (color if color is not None else _isatty(stream)):
        out = _ANSI.sub("", out)
    stream.write(out)
    stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except Exception:  # noqa: BLE001  # as click's isatty, exactly: a stream that cannot say is no terminal
        return False
