"""The glucose part of the HTML release report: consensus, episodes, AGP, Parkes, privacy.

Per candidate: the consensus and episode tables with the holdout reference, the AGP band
distance, Parkes zones with MARD and the 15/15 share, the per-subject privacy figures beside
the per-window ones, and the share of implausible traces beside real data's.

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
MEMORISED = '<span class="warn">yes</span>'


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


def _subjects(subjects: Mapping[str, Any] | None) -> str:
    """Per-subject membership and DCR beside the per-window figures, and memorised subjects."""
    if not subjects:
        return ""
    window = subjects.get("per_window") or {}
    memorised = subjects.get("memorised") or []
    note = subjects.get("note") or ""
    rows = "".join(
        f"<tr><td>{escape(str(s.get('subject')))}</td><td>{escape(str(s.get('role')))}</td>"
        f"<td>{_num(s.get('n_windows'))}</td><td>{_num(s.get('dcr_mg_dl'))}</td>"
        f"<td>{_num(s.get('n_reproduced'))}</td>"
        f"<td>{MEMORISED if s.get('memorised') else 'no'}</td></tr>"
        for s in subjects.get("subjects") or []
    )
    return (
        "<p>Privacy per person (a subject's score is the max of its windows': one memorised "
        "day discloses the person). Membership AUC (0.5 = chance): per subject "
        f"{_num(subjects.get('subject_auc'))}, per window {_num(subjects.get('window_auc'))} "
        f"(NN seeker on the attack set {_num(window.get('trace_nn_seeker_auc'))}). "
        f"Median closest distance to a synthetic trace: members "
        f"{_num(subjects.get('member_dcr_median'))}, non-members "
        f"{_num(subjects.get('nonmember_dcr_median'))} mg/dL. Memorised subjects: "
        f"{escape(', '.join(map(str, memorised))) if memorised else 'none'} (a fresh real "
        f"window is called reproduced with rate {_num(subjects.get('expected_window_fpr'))})."
        + (f" {escape(note)}." if note else "")
        + "</p>"
        + (
            "<table><tr><th>subject</th><th>role</th><th>windows</th><th>closest mg/dL</th>"
            f"<th>reproduced</th><th>memorised</th></tr>{rows}</table>"
            if rows
            else ""
        )
    )


def _plausibility(p: Mapping[str, Any] | None) -> str:
    if not p:
        return ""
    lo, hi = (p.get("sensor_range_mg_dl") or [None, None])[:2]
    return (
        f"<p>Implausible traces: {_num(p.get('outside_range_share'))} outside "
        f"{_num(lo)}–{_num(hi)} mg/dL (real: {_num(p.get('reference_outside_range_share'))}), "
        f"{_num(p.get('implausible_rate_share'))} changing faster than "
        f"{_num(p.get('max_rate_mg_dl_min'))} mg/dL/min over "
        f"{_num(p.get('rate_window_minutes'))} min (real: "
        f"{_num(p.get('reference_implausible_rate_share'))}; {escape(str(p.get('reference')))}"
        ").</p>"
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
            + _subjects(glucose.get("subject_privacy"))
            + _plausibility(glucose.get("plausibility"))
        )
    return "".join(parts)
