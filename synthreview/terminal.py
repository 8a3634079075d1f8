"""Text for a terminal: user-supplied strings with their control characters escaped.

File, column, candidate, person and category names reach the command line's output inside
messages. A name holding ``\\r``, ``\\n``, an ANSI escape (``\\x1b[...``) or a bidirectional
override could move the cursor, recolour or rewrite what was printed before it (a candidate
named ``"x\\rRELEASE (pass)"`` would print a decision line over the real one), so every line the
CLI prints goes through :func:`terminal_text`, as the dashboard escapes Markdown
(:mod:`synthreview.figures.text`).
"""

from __future__ import annotations

__all__ = ["terminal_text"]


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
