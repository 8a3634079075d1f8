"""Text for a terminal: user-supplied strings with their control characters escaped.

File, column, candidate, person and category names reach the command line's output inside
messages. A name holding ``\\r``, ``\\n``, an ANSI escape (``\\x1b[...``) or a bidirectional
override could move the cursor, recolour or rewrite what was printed before it (a candidate
named ``"x\\rRELEASE (pass)"`` would print a decision line over the real one), so every line the
CLI prints goes through :func:`terminal_text`, as the dashboard escapes Markdown
(:mod:`synthreview.figures.text`). Log records and warnings, which may span lines (a
traceback), go through :func:`terminal_block`: every line kept, each escaped, every line after
the first indented, so no text inside them can start a line of its own.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TerminalFormatter", "terminal_block", "terminal_output", "terminal_text"]


def terminal_text(text: object) -> str:
    """``str(text)`` with every character that is not printable written as its Python escape.

    Control characters (C0, DEL, C1), format characters (bidirectional overrides, zero-width
    joiners), line and paragraph separators and spaces other than ``" "`` are shown as ``\\r``,
    ``\\n``, ``\\x1b``, ``\\u202e`` and so on; every printable character is kept as it is.

    >>> terminal_text("cand\\rRELEASE (pass)")
    'cand\\\\rRELEASE (pass)'
    >>> terminal_text("ß ünïcode ✓")
    'ß ünïcode ✓'
    """
    shown = str(text)
    if shown.isprintable():
        return shown
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in shown)


def terminal_block(text: object, *, indent: str = "    ") -> str:
    """``text`` over several lines: each line :func:`terminal_text`, the later ones indented.

    >>> print(terminal_block("candidate x\\nRELEASE (pass)\\r"))
    candidate x
        RELEASE (pass)\\r
    """
    first, *rest = str(text).split("\n")
    return "\n".join([terminal_text(first), *(indent + terminal_text(line) for line in rest)])


class TerminalFormatter(logging.Formatter):
    """A :class:`logging.Formatter` whose output is a :func:`terminal_block`."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as :class:`logging.Formatter` writes it, escaped line by line."""
        return terminal_block(super().format(record))


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    return terminal_block(f"warning: {category.__name__}: {message}") + "\n"


@contextmanager
def terminal_output() -> Iterator[None]:
    """Within it, warnings and (when nothing else handles them) log records print escaped.

    Warnings are formatted by :func:`terminal_block` (a warning recorded by a caller's
    ``warnings.catch_warnings(record=True)`` is recorded as before). Records of the
    ``synthreview`` loggers get a :class:`TerminalFormatter` handler on standard error only when
    the root logger has no handler of its own (the command line), instead of Python's unescaped
    last-resort output; an application that configured logging keeps its own.
    """
    previous = warnings.formatwarning
    warnings.formatwarning = _format_warning
    logger = logging.getLogger("synthreview")
    handler = None
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()  # standard error, looked up when it writes
        handler.setLevel(logging.WARNING)
        handler.setFormatter(TerminalFormatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    try:
        yield
    finally:
        warnings.formatwarning = previous
        if handler is not None:
            logger.removeHandler(handler)
