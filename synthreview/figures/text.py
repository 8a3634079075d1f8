"""User text made inert where it is shown: Streamlit Markdown and plotly labels.

File and candidate names, column names, subject ids, category values and cells come from the
reviewer's files, and each renderer the dashboard uses interprets some markup in them:

- **Streamlit Markdown** (``st.markdown``, ``st.caption``, ``st.info``/``st.warning``/
  ``st.error``, ``st.table`` cells, and the labels of metrics, tabs, expanders, radio and
  segmented-control options, column help) renders ``**bold**``, links, images (which the
  browser fetches), ``:red[...]`` directives, ``:shortcode:`` emoji and ``$...$`` LaTeX, and it
  turns bare ``http://…``, ``www.…`` and ``name@host.org`` into links (GFM autolink literals)
  even when every character is backslash-escaped (checked in Chromium with Streamlit 1.67).
  :func:`markdown_text` backslash-escapes every ASCII punctuation character (CommonMark §2.4)
  and puts an invisible WORD JOINER (U+2060) before each ``:`` and ``.`` and after each ``@``,
  which no autolink pattern crosses.
- **plotly.js** renders ``<b>``, ``<i>``, ``<br>``, ``<span style>`` and ``<a href>`` (a live
  link) in titles, axis titles, tick labels, legends, annotations, table cells and hover
  labels, decodes ``&...;`` entities, and substitutes ``%{...}`` in hover templates.
  :func:`plot_text` writes ``&``, ``<``, ``>`` as entities and ``%`` and ``$`` as numeric
  entities (``&#37;``, ``&#36;``): no tag forms, no template variable or TeX delimiter
  survives, and plotly draws the original characters.

Dataframe cells (``st.dataframe``) are drawn on a canvas as plain text and need neither.
Nothing here imports Streamlit; pages, ``app_state`` and every figure builder call these two
functions, so there is one rule per renderer.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

#: invisible, zero-width, no line break: splits ``http://``, ``www.`` and ``a@b.org`` for the
#: autolink patterns without changing what the reader sees
WORD_JOINER = "\u2060"
_PUNCTUATION = frozenset(string.punctuation)
_PLOT_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "%": "&#37;", "$": "&#36;"}

__all__ = ["WORD_JOINER", "markdown_text", "plot_text", "plot_texts"]


def markdown_text(value: object) -> str:
    """``value`` as text that Streamlit's Markdown shows character for character.

    Every ASCII punctuation character is backslash-escaped, newlines become spaces (a line
    break could start a heading or a list), and a WORD JOINER goes before ``:`` and ``.`` and
    after ``@`` so no bare URL, ``www.`` host or e-mail address turns into a link.

    Parameters
    ----------
    value : object
        Any value; ``str(value)`` is escaped.

    Returns
    -------
    str
        Safe to concatenate into a Markdown string or pass as a widget label.

    Examples
    --------
    >>> markdown_text("**a**")
    '\\\\*\\\\*a\\\\*\\\\*'
    >>> "http://" in markdown_text("http://example.org")
    False
    """
    out = []
    for ch in str(value):
        if ch in "\r\n":
            out.append(" ")
        elif ch in ":.":
            out.append(WORD_JOINER + "\\" + ch)
        elif ch == "@":
            out.append("\\@" + WORD_JOINER)
        elif ch in _PUNCTUATION:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def plot_text(value: object) -> str:
    """``value`` as text that plotly.js draws character for character.

    ``&``, ``<``, ``>``, ``%`` and ``$`` become HTML entities, which plotly decodes for
    display after it has looked for tags, ``%{...}`` template variables and TeX.

    Parameters
    ----------
    value : object
        Any value; ``str(value)`` is escaped.

    Returns
    -------
    str
        Safe in a title, axis title, tick label, legend name, annotation, table cell, hover
        template or ``text``.

    Examples
    --------
    >>> plot_text("<b>x</b> 5%")
    '&lt;b&gt;x&lt;/b&gt; 5&#37;'
    """
    return "".join(_PLOT_ENTITIES.get(ch, ch) for ch in str(value))


def plot_texts(values: Iterable[object]) -> list[str]:
    """:func:`plot_text` of each value (tick labels, category axes, table columns)."""
    return [plot_text(value) for value in values]
