"""Words for numbers: registry-driven help texts, readable number formats, the glossary table.

Every metric the dashboard shows is explained where it appears from its
:class:`~synthreview.metrics.info.MetricInfo` (label, one-line meaning, direction, what the
holdout value means, the paper section), so a page never writes its own explanation and a
tooltip cannot drift from the glossary. No Streamlit here: pages pass these strings to ``help=``.
"""

from __future__ import annotations

import math
from numbers import Real

import pandas as pd

from synthreview.metrics.info import MetricInfo
from synthreview.metrics.registry import REGISTRY, get

#: shown instead of a missing number; the reason goes next to it or into the caption
MISSING = "–"


def direction_text(info: MetricInfo) -> str:
    """``"higher is better"``, ``"lower is better"`` or ``"closest to 0.5 is best"``."""
    if info.direction == "closest":
        return f"closest to {info.ideal:g} is best"
    return f"{info.direction} is better"


def range_text(info: MetricInfo) -> str:
    """``"0 to 1"``, ``"0 or more"``."""
    lo, hi = info.range
    if math.isinf(hi) and math.isinf(lo):
        return "any value"
    if math.isinf(hi):
        return f"{lo:g} or more"
    if math.isinf(lo):
        return f"at most {hi:g}"
    return f"{lo:g} to {hi:g}"


def metric_help(name: str) -> str:
    """Hover text for metric ``name``: meaning, direction and range, holdout meaning, source."""
    info = get(name)
    return (
        f"{info.label}: {info.meaning}. {direction_text(info).capitalize()} "
        f"(range {range_text(info)}). Holdout value: {info.holdout_meaning}. "
        f"Source: {info.citation}."
    )


def metric_label(name: str) -> str:
    """Display label of metric ``name`` (``"IPα"``, never a raw id)."""
    return get(name).label


def format_number(value: object, fmt: str | None = None) -> str:
    """A number as a reviewer reads it: no ``1e+03``, thousands grouped, ``–`` when missing.

    ``fmt`` is a ``format()`` spec (a metric's ``MetricInfo.fmt``); without one, magnitudes
    pick the decimals (``989``, ``0.509``, ``0.0021``).
    """
    if value is None or isinstance(value, bool) or not isinstance(value, Real):
        return MISSING if value is None else str(value)
    number = float(value)
    if not math.isfinite(number):
        return MISSING
    if fmt:
        return format(number, fmt)
    magnitude = abs(number)
    if magnitude >= 100:
        return f"{number:,.0f}"
    if magnitude >= 1:
        return f"{number:.2f}"
    if magnitude >= 0.001 or magnitude == 0:
        return f"{number:.3f}"
    return f"{number:.1e}"


def format_metric(name: str, value: object) -> str:
    """``value`` in metric ``name``'s own format; ``–`` when missing."""
    return format_number(value, get(name).fmt)


def glossary_frame(section: str | None = None) -> pd.DataFrame:
    """One row per registered metric: what the Glossary page shows (all plain text)."""
    rows = [
        {
            "metric": info.label,
            "section": info.section,
            "what it means": info.meaning,
            "better": direction_text(info),
            "range": range_text(info),
            "the holdout value": info.holdout_meaning,
            "source": info.citation,
            "id": info.name,
        }
        for info in REGISTRY.values()
        if section is None or info.section == section
    ]
    return pd.DataFrame(rows)
