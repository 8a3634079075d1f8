"""Words for numbers: registry-driven help texts, readable number formats, the glossary table.

Every metric the dashboard shows is explained where it appears from its
:class:`~synthreview.metrics.info.MetricInfo` (label, one-line meaning, direction, what the
holdout value means, the paper section), so a page never writes its own explanation and a
tooltip cannot drift from the glossary. No Streamlit here: pages pass these strings to ``help=``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any

import pandas as pd

from synthreview.figures.text import markdown_text
from synthreview.judgement.decision import Decision, rule_label
from synthreview.judgement.policy import HEADLINE_RULES, RuleVerdict
from synthreview.judgement.rules import SPECS
from synthreview.judgement.verdicts import SEVERITY, VERDICT_STYLE
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


# --- a rule's value, judged value, line and verdict ------------------------------------------

#: why a rule judges a bound, said where the point alone is beyond a line the verdict is within
BOUND_REASON = (
    "a single estimate carries sampling noise (and the best of several attacks or metrics "
    "carries the luck of the draw), so a release is refused only when the bound is beyond the line"
)


@dataclass(frozen=True)
class RuleReading:
    """One rule's verdict as every page and ``report.html`` write it.

    Attributes
    ----------
    rule : str
        The rule's id (``[rules.NAME]``).
    value : str
        The point estimate in the metric's format (``"0.708"``; ``n/a`` when not measured).
    judged : str
        What the thresholds were applied to, in words with its number (``"judged on the 95 %
        lower bound 0.573 over 13 attacks (Bonferroni)"``; ``"judged on the point itself"``
        when no bound or transformation stands between them); empty when nothing was measured.
    judged_value : str
        The judged number alone in its units (``"0.573"``, ``"1.2× chance"``); empty when the
        point itself is judged or nothing was measured.
    line : str
        The policy's lines in the judged quantity's units (``"passes at most 0.6, fails above
        0.7"``).
    verdict : str
        The verdict's label (``"PASS"``).
    why : str
        The sentence a meeting needs when the point alone is beyond a line the verdict is within
        (a bound was judged, or the rule is advisory); empty otherwise.
    key : str
        The verdict itself (``"pass"``), for colours.
    """

    rule: str
    value: str
    judged: str
    judged_value: str
    line: str
    verdict: str
    why: str
    key: str

    @property
    def short(self) -> str:
        """``"0.708, judged on ...: PASS"``: a table cell (the line and the why left out)."""
        if self.value == MISSING:
            return f"{MISSING}: {self.verdict}"
        judged = f", {self.judged}" if self.judged else ""
        return f"{self.value}{judged}: {self.verdict}"

    @property
    def text(self) -> str:
        """Value, judged value, line and verdict in one sentence, then the why."""
        parts = [p for p in (self.value, self.judged, self.line) if p]
        out = f"{'; '.join(parts)}: {self.verdict}"
        return f"{out}. {self.why}" if self.why else out


def _field(verdict: RuleVerdict | Mapping[str, Any], name: str, default: Any = None) -> Any:
    if isinstance(verdict, RuleVerdict):
        name = {"pass": "pass_at", "fail": "fail_at"}.get(name, name)
        return getattr(verdict, name, default)
    return verdict.get(name, default)


def _finite(x: Any) -> float | None:
    ok = isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))
    return float(x) if ok else None


def _grade(value: float, pass_at: float, fail_at: float, direction: str) -> str:
    if direction == "lower":
        return "pass" if value <= pass_at else "fail" if value > fail_at else "warn"
    return "pass" if value >= pass_at else "fail" if value < fail_at else "warn"


def rule_reading(verdict: RuleVerdict | Mapping[str, Any]) -> RuleReading:
    """Value, judged value, line and verdict of one rule: the one way they are written.

    Parameters
    ----------
    verdict : RuleVerdict or its ``to_dict()``
        From the judgement (``report.json``'s ``verdicts.NAME.rules.RULE`` alike), so a page,
        the Overview's key numbers and ``report.html`` show the number the rule judged.

    Returns
    -------
    RuleReading
        Where the point alone would get a worse verdict than the rule gave (a bound was judged,
        or an advisory rule's fail reads warn), ``why`` says so.
    """
    rule = str(_field(verdict, "rule"))
    key = str(_field(verdict, "verdict", "n/a"))
    spec = SPECS.get(rule)
    info = get(spec.metric) if spec is not None else None
    form = spec.form if spec is not None else "value"

    def fmt(x: float | None) -> str:
        return format_number(x, info.fmt if info is not None else None)

    measured, judged = _finite(_field(verdict, "measured")), _finite(_field(verdict, "value"))
    point, reference = _finite(_field(verdict, "point")), _finite(_field(verdict, "reference"))
    bound_text = str(_field(verdict, "bound_text") or "")
    pass_at, fail_at = _finite(_field(verdict, "pass")), _finite(_field(verdict, "fail"))
    direction = str(_field(verdict, "direction", "lower"))
    # the judged quantity's units: multiples of chance, a shortfall or excess, a distance
    if form == "times_chance":
        unit, prefix = "× chance", ""
    elif form == "shortfall":
        what = "shortfall" if info is not None and info.direction == "higher" else "excess"
        unit, prefix = "", f"a {what} of " if what == "shortfall" else f"an {what} of "
    elif info is not None and info.direction == "closest":
        unit, prefix = "", f"a distance from {info.ideal:g} of "
    else:
        unit, prefix = "", ""
    better, worse = ("at most", "above") if direction == "lower" else ("at least", "below")
    line = (
        f"passes {better} {prefix}{pass_at:g}{unit}, fails {worse} {prefix}{fail_at:g}{unit}"
        if pass_at is not None and fail_at is not None
        else ""  # a record without its thresholds
    )
    quantity, judged_value = "", ""
    if judged is not None:
        if form == "times_chance":
            quantity = f"{judged:.1f}× chance"
        elif form == "shortfall":
            than = f" vs {fmt(reference)} for a fresh real sample" if reference is not None else ""
            quantity = f"{prefix}{fmt(judged)}{than}"
        elif prefix:
            quantity = f"{prefix}{fmt(judged)}"
    if judged is not None and (bound_text or quantity):
        bound = _finite(_field(verdict, "bound"))
        bare = fmt(bound if form == "value" and bound is not None else judged)
        judged_value = f"{judged:.1f}× chance" if form == "times_chance" else bare
    if judged is None:
        judged_text = ""
    elif bound_text:
        judged_text = f"judged on {bound_text}" + (f": {quantity}" if quantity else "")
    else:  # the point itself is what the line applies to, and the reader is told so
        judged_text = f"judged as {quantity}" if quantity else "judged on the point itself"
    why = ""
    shown = point if point is not None else judged
    if shown is not None and line and key in ("pass", "warn"):
        alone = _grade(shown, pass_at, fail_at, direction)
        if SEVERITY[alone] > SEVERITY[key] and bound_text:
            words = {"fail": "fail", "warn": "warn"}[alone]
            why = (
                f"The point estimate {fmt(measured)} alone would {words}, but the rule "
                f"judges the bound: {BOUND_REASON}."
            )
        elif alone == "fail" and key == "warn" and not _field(verdict, "required", True):
            why = (
                "Beyond the fail line, but the policy does not require this rule: it warns "
                "and never withholds a release."
            )
    label = VERDICT_STYLE.get(key, VERDICT_STYLE["n/a"]).label
    return RuleReading(rule, fmt(measured), judged_text, judged_value, line, label, why, key)


def verdict_rules(verdicts: Any) -> dict[str, RuleVerdict | Mapping[str, Any]]:
    """Rule id -> verdict of a ``Verdicts`` or its ``to_dict()`` (``report.json``)."""
    if verdicts is None:
        return {}
    if hasattr(verdicts, "rules") and not isinstance(verdicts, Mapping):
        return {r.rule: r for r in verdicts.rules}
    rules = verdicts.get("rules") if isinstance(verdicts, Mapping) else None
    return {str(k): v for k, v in rules.items()} if isinstance(rules, Mapping) else {}


def headline_readings(verdicts: Any) -> dict[str, RuleReading]:
    """Headline key -> :func:`rule_reading` of the rule that judges it (keys the policy leaves
    unjudged are absent): the Overview's key numbers and ``report.html``'s scorecard."""
    rules = verdict_rules(verdicts)
    return {key: rule_reading(rules[rule]) for key, rule in HEADLINE_RULES.items() if rule in rules}


def section_readings(
    verdicts: Any, sections: str | tuple[str, ...]
) -> list[tuple[str, RuleReading]]:
    """``(rule in words, reading)`` of every rule judging a metric of registry ``sections``
    (``"fidelity"``, ``"utility"``, ``"glucose"``, ...), in policy order; rules that do not
    apply (``n/a``) are left out."""
    wanted = (sections,) if isinstance(sections, str) else sections
    out = []
    for rule, verdict in verdict_rules(verdicts).items():
        spec = SPECS.get(rule)
        if spec is None or get(spec.metric).section not in wanted:
            continue
        reading = rule_reading(verdict)
        if reading.key != "n/a":
            out.append((get(spec.metric).label, reading))
    return out


def readings_markdown(name: str, verdicts: Any, sections: str | tuple[str, ...]) -> str:
    """A section page's release rules for candidate ``name`` as Markdown (every user string
    escaped): one bullet per rule with its value, judged value, line and verdict; empty when
    no rule of the section applies."""
    lines = section_readings(verdicts, sections)
    if not lines:
        return ""
    bullets = "\n".join(f"- {markdown_text(label)}: {markdown_text(r.text)}" for label, r in lines)
    return f"**{markdown_text(name)}**\n\n{bullets}"


#: in presentation mode a reason longer than this is named by its deciding rule on the first
#: screen and given whole just below: at 1280x720 one 400-character reason wrapped the last
#: decision below the screen (a 300-row demo's group-disclosure reason)
SHORT_REASON = 160


def short_reason(decision: Decision) -> str:
    """A decision's reason in a few words: its deciding rule and verdicts (presentation mode).

    Not a cut of the reason: the rule the judgement named, so nothing reads half-said."""
    if len(decision.reason) <= SHORT_REASON:
        return decision.reason
    if decision.rule is None:
        return "see the whole reason below"
    after = (
        f", {decision.curated_verdict} after curation"
        if decision.curated_verdict is not None
        else ""
    )
    return (
        f"decided by {rule_label(decision.rule)} ({decision.verdict} as submitted{after}); "
        "the whole reason is below"
    )
