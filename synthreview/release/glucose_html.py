"""The glucose part of the HTML release report: consensus table, episodes, AGP, Parkes.

Reads only ``report.json``'s ``candidates[name].glucose`` dictionaries (as written by
:meth:`synthreview.metrics.glucose.section.GlucoseReport.to_dict`); every value is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape
from typing import Any

from synthreview.metrics.glucose.clinical import EPISODE_LABELS
from synthreview.metrics.glucose.consensus import CONSENSUS_METRICS

ALPHA = 0.05


def _num(value: Any) -> str:
    if not isinstance(value, int | float) or (
        isinstance(value, float) and not math.isfinite(value)
    ):
        return "n/a"
    return f"{value:.3g}"


def _p(value: Any) -> str:
    text = _num(value)
    if isinstance(value, int | float) and math.isfinite(value) and value < ALPHA:
        return f'<span class="warn">{text}</span>'
    return text


def _table(entries: Mapping[str, Any] | None, labels: Mapping[str, tuple[str, ...]]) -> str:
    if not entries:
        return ""
    rows = "".join(
        f"<tr><td>{escape(labels.get(metric, (metric,))[0])}</td>"
        f"<td>{_num(e.get('real_mean'))}</td><td>{_num(e.get('synthetic_mean'))}</td>"
        f"<td>{_p(e.get('p_value'))}</td><td>{_num(e.get('holdout_mean'))}</td>"
        f"<td>{_p(e.get('holdout_p_value'))}</td></tr>"
        for metric, e in entries.items()
    )
    return (
        "<table><tr><th>metric</th><th>real</th><th>candidate</th><th>p (Welch)</th>"
        f"<th>holdout</th><th>holdout p</th></tr>{rows}</table>"
    )


def glucose_section(candidates: Mapping[str, Any]) -> str:
    """HTML for every candidate with a glucose result; empty when there is none."""
    parts = []
    for name, content in candidates.items():
        glucose = (content or {}).get("glucose")
        if not glucose or "consensus" not in glucose:
            continue
        agp = glucose.get("agp") or {}
        parkes = glucose.get("parkes") or {}
        accuracy = "".join(
            f"<tr><td>{escape(model.upper())}</td>"
            + "".join(f"<td>{_num((a.get('parkes') or {}).get(z))}</td>" for z in "ABCDE")
            + f"<td>{_num(a.get('mard'))}</td><td>{_num(a.get('within_15'))}</td></tr>"
            for model, a in parkes.items()
        )
        parts.append(
            f"<h3>{escape(name)}</h3>"
            "<p>Consensus metrics per day trace (Battelino et al. 2019, 2023); p &lt; 0.05 "
            "marks a significant difference from real.</p>"
            + _table(glucose.get("consensus"), CONSENSUS_METRICS)
            + "<p>Episodes (≥ 15 minutes beyond the threshold, ended by ≥ 15 minutes back).</p>"
            + _table(glucose.get("episodes"), EPISODE_LABELS)
            + f"<p>AGP band distance: {_num(agp.get('distance'))} mg/dL (holdout "
            f"{_num(agp.get('holdout_distance'))} mg/dL).</p>"
            + (
                "<table><tr><th>forecaster</th><th>Parkes A %</th><th>B</th><th>C</th><th>D</th>"
                f"<th>E</th><th>MARD %</th><th>within 15/15 %</th></tr>{accuracy}</table>"
                if accuracy
                else ""
            )
        )
    return "".join(parts)
