"""The one Jinja2 environment the HTML release report is rendered with.

Templates live in ``synthreview/release/templates/`` (package data). Autoescaping is on for
every template and every string, so a value that came from a reviewer's files (file, candidate
and column names, cells, reasons, comments) reaches the page as text, never as markup; no
template marks user text ``|safe``. ``StrictUndefined`` makes a key a template needs and the
record lacks an error (:class:`jinja2.UndefinedError`), never a blank cell.

The filters only format numbers; they return plain strings, which autoescaping then escapes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from synthreview.figures.explain import rule_reading
from synthreview.judgement.verdicts import DECISION_STYLE, VerdictStyle, style

#: a p value below this is marked as a significant difference (glucose tables)
ALPHA = 0.05


def fmt(value: object) -> str:
    """A table cell: 4 significant digits for floats, ``–`` for a missing value.

    A list reads ``a, b``, a mapping ``key = value, ...`` (each value formatted the same way).
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else "–"
    if isinstance(value, Mapping):
        return ", ".join(f"{key} = {fmt(v)}" for key, v in value.items()) or "–"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value) or "–"
    return str(value)


def share(value: object) -> str:
    """A share as a percentage with one decimal (``0.05`` → ``5.0%``); ``–`` when missing."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:.1%}"


def num(value: object) -> str:
    """Three significant digits; ``n/a`` for a missing or non-finite value (glucose tables)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "n/a"
    return f"{value:.3g}"


def significant(value: object) -> bool:
    """Whether ``value`` is a finite p value below :data:`ALPHA`."""
    return (
        not isinstance(value, bool)
        and isinstance(value, int | float)
        and math.isfinite(value)
        and value < ALPHA
    )


def decision_style(outcome: str) -> VerdictStyle:
    """The Overview's label and colours of a decision; an unknown outcome is an error."""
    if outcome not in DECISION_STYLE:
        raise ValueError(
            f"decision outcome must be one of {sorted(DECISION_STYLE)}; got {outcome!r} instead"
        )
    return DECISION_STYLE[outcome]


ENVIRONMENT = Environment(
    loader=PackageLoader("synthreview.release", "templates"),
    autoescape=select_autoescape(("html",), default_for_string=True, default=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
ENVIRONMENT.filters.update(fmt=fmt, share=share, num=num)
ENVIRONMENT.tests.update(significant=significant)
# rule_reading: a rule's value, judged value, line and verdict, written as every page writes them
ENVIRONMENT.globals.update(
    verdict_style=style, decision_style=decision_style, rule_reading=rule_reading
)


def render(template: str, **context: object) -> str:
    """Render ``templates/<template>`` with ``context``.

    Raises
    ------
    jinja2.UndefinedError
        A key the template reads is missing from ``context``.
    """
    return ENVIRONMENT.get_template(template).render(**context)
