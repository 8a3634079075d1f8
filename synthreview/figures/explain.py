"""Words for numbers: registry-driven help texts, readable number formats, the glossary table.

Every metric the dashboard shows is explained where it appears from its
:class:`~synthreview.metrics.info.MetricInfo` (label, one-line meaning, direction, what the
holdout value means, the paper section), so a page never writes its own explanation and a
tooltip cannot drift from the glossary. No Streamlit here: pages pass these strings to ``help=``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import pandas as pd

from synthreview.figures.text import markdown_text
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.registry import REGISTRY, get

#: shown instead of a missing number (as ``MetricInfo.format`` writes it); the reason goes next
#: to it or into the caption
MISSING = "n/a"


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
    """``value`` in metric ``name``'s own format; ``n/a`` when missing."""
    return format_number(value, get(name).fmt)


def numbers_as_text(table: pd.DataFrame, formats: dict[str, str] | None = None) -> pd.DataFrame:
    """``table`` with every float cell written as a reviewer reads it (:func:`format_number`).

    ``formats`` maps a column to a metric name whose registry format it takes; other float
    columns pick their decimals by magnitude. No float noise (``0.5267029240000001``), no
    ``None`` or ``nan`` cells: missing numbers read ``n/a``.
    """
    formats = formats or {}
    floats = [c for c in table.columns if pd.api.types.is_float_dtype(table[c])]
    shown = table.astype({c: "object" for c in floats})
    for column in floats:
        fmt = get(formats[column]).fmt if column in formats else None
        shown[column] = [format_number(v, fmt) for v in table[column]]
    for column in shown.columns:
        if shown[column].dtype == object or isinstance(shown[column].dtype, pd.StringDtype):
            shown[column] = shown[column].astype(object).where(shown[column].notna(), MISSING)
    return shown


def reading_table(table: pd.DataFrame, formats: dict[str, str] | None = None) -> pd.DataFrame:
    """``table`` for ``st.table``: numbers as :func:`numbers_as_text`, text Markdown-escaped.

    A static table's cells wrap (``app_state.TABLE_CSS``), so a wide table fits a 1280 px
    screen instead of scrolling sideways as a data grid does; ``st.table`` renders its cells and
    headers as Markdown, so every text cell, index label and column name (user text: candidate,
    column and attack names, raw values) goes through :func:`~synthreview.figures.text.
    markdown_text`. Number cells are left as written (digits, sign, point, comma).
    """
    floats = {c for c in table.columns if pd.api.types.is_float_dtype(table[c])}
    shown = numbers_as_text(table, formats)
    for column in shown.columns:
        if column not in floats:
            shown[column] = [markdown_text(v) for v in shown[column]]
    shown.columns = [markdown_text(c) for c in shown.columns]
    name = table.index.name
    shown.index = pd.Index([markdown_text(i) for i in shown.index],
                           name=None if name is None else markdown_text(name))  # fmt: skip
    return shown


#: how a value beyond the holdout reads where the registry marks that as memorisation
SUSPICIOUS_READING = "suspicious: beyond a fresh real sample"


@dataclass(frozen=True)
class HoldoutGap:
    """How a candidate's value reads beside its holdout reference (a fresh real sample).

    Attributes
    ----------
    delta : str
        The difference in the metric's format, ``"+0.388"``.
    color : {"green", "red", "orange", "gray"}
        Green: better than the holdout beyond the noise; red: worse beyond it; orange: better
        where the registry says that is suspicious (memorisation); gray: within the noise.
    reading : str
        The same in words: ``"better"``, ``"worse"``, ``"within noise"``, or for the orange
        case ``"suspicious: beyond a fresh real sample"``.
    suspicious : bool
        True for the orange case.
    """

    delta: str
    color: str
    reading: str
    suspicious: bool = False

    @property
    def text(self) -> str:
        """``"+0.388 vs holdout"``: a tile's delta line."""
        return f"{self.delta} vs holdout"


def holdout_gap(
    name: str,
    value: float | None,
    reference: float | None,
    *,
    interval: tuple[float, float] | None = None,
) -> HoldoutGap | None:
    """Metric ``name``'s ``value`` against its holdout ``reference``; None when either is missing.

    ``interval`` is the value's 95 % interval. The reference is an estimate of the same size,
    so the gap's own 95 % half-width is taken as √2 times the interval's half-width (two
    independent estimates of equal noise); a gap within it is gray. Without an interval any
    difference counts. A value better than the reference beyond the noise, where the registry
    marks that as suspicious (``MetricInfo.suspicious_above_holdout``: IRβ, k-NN recall,
    coverage), is orange, never green: a candidate recalls more of the training rows than a
    fresh real sample only by reproducing them.
    """
    info = get(name)
    if any(v is None or not math.isfinite(v) for v in (value, reference)):
        return None
    sign = "+" if not info.fmt.startswith(("+", "-", " ")) else ""
    delta = format(value - reference, sign + info.fmt)
    lo, hi = interval if interval is not None else (value, value)
    noise = math.sqrt(2.0) * (hi - lo) / 2 if math.isfinite(hi - lo) else 0.0
    if abs(value - reference) <= noise or not (
        info.better(value, reference) or info.better(reference, value)
    ):
        return HoldoutGap(delta, "gray", "within noise")
    if info.beyond_holdout(value, reference):
        return HoldoutGap(delta, "orange", SUSPICIOUS_READING, suspicious=True)
    if info.better(value, reference):
        return HoldoutGap(delta, "green", "better")
    return HoldoutGap(delta, "red", "worse")


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
