"""The glucose part of the HTML release report: consensus, episodes, AGP, Parkes, privacy.

Per candidate: the consensus and episode tables with the holdout reference, the AGP band
distance, Parkes zones with MARD and the 15/15 share, the per-subject privacy figures beside
the per-window ones, and the share of implausible traces beside real data's.

Reads only ``report.json``'s ``candidates[name].glucose`` dictionaries (as written by
:meth:`synthreview.metrics.glucose.section.GlucoseReport.to_dict`) and renders them with the
``templates/glucose.html`` template (autoescaped: subject ids and names stay text).
``report.html`` includes the same template, so the standalone section and the report agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from synthreview.metrics.glucose.clinical import EPISODE_LABELS
from synthreview.metrics.glucose.consensus import CONSENSUS_METRICS
from synthreview.release.templating import render


@dataclass(frozen=True)
class GlucoseView:
    """One candidate's glucose result as the template reads it.

    Attributes
    ----------
    name : str
        Candidate name (shown escaped).
    glucose : mapping
        ``candidates[name]["glucose"]`` of ``report.json``.
    """

    name: str
    glucose: Mapping[str, object]


def glucose_views(candidates: Mapping[str, object]) -> list[GlucoseView]:
    """Every candidate with a glucose result (its ``consensus`` table), in report order."""
    views = []
    for name, content in candidates.items():
        glucose = content.get("glucose") if isinstance(content, Mapping) else None
        if isinstance(glucose, Mapping) and "consensus" in glucose:
            views.append(GlucoseView(str(name), glucose))
    return views


def glucose_context(candidates: Mapping[str, object]) -> dict[str, object]:
    """What ``templates/glucose.html`` reads: the views and the metric label tables."""
    return {
        "glucose": glucose_views(candidates),
        "CONSENSUS_METRICS": CONSENSUS_METRICS,
        "EPISODE_LABELS": EPISODE_LABELS,
    }


def glucose_section(candidates: Mapping[str, object]) -> str:
    """HTML for every candidate with a glucose result; empty when there is none."""
    context = glucose_context(candidates)
    if not context["glucose"]:
        return ""
    return render("glucose.html", **context)
