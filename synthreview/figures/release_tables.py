"""The Audit page's tables of a release: the re-attack, the planted-leak controls, rule names.

Each builds a table from a result object (``release.reattack.Reattack``,
``release.controls.PlantedControls``) or the policy, in the words and number formats every
other page uses (the metric registry, ``figures.explain.format_number``): no float noise, ``-``
for a number not computed, and never "n/a to n/a" for an interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from synthreview.figures.explain import MISSING, format_metric, format_number
from synthreview.figures.privacy import attack_label
from synthreview.judgement.policy import Policy
from synthreview.metrics.registry import get as metric_info
from synthreview.release.controls import PlantedControls
from synthreview.release.reattack import Reattack

__all__ = ["NO_INTERVAL", "controls_frame", "number_text", "reattack_frame", "rule_labels"]

#: an interval whose ends were not computed (never "n/a to n/a")
NO_INTERVAL = "no 95 % interval computed"


def number_text(value: object) -> str:
    """A number (or an interval, a pair) as a reviewer reads it, 3 decimals."""
    if isinstance(value, (list, tuple)):
        ends = [format_number(v, ".3f") for v in value]
        if all(end == MISSING for end in ends):  # none at all, or both ends missing
            return NO_INTERVAL
        return " to ".join(ends)
    return format_number(value, ".3f")


def reattack_frame(reattack: Reattack) -> pd.DataFrame:
    """The re-attack table: one row per attack (registry words), AUC and TPR before/after."""
    frame = pd.DataFrame([a.to_dict() for a in reattack.attacks])
    frame["attack"] = [attack_label(a) for a in frame["attack"]]
    # numbers as a reviewer reads them (no float noise such as 0.5267029240000001), "-" missing
    for column in frame.columns.drop("attack"):
        if column != "worse":
            frame[column] = [number_text(v) for v in frame[column]]
    return frame.set_index("attack")


#: the registry metrics whose formats the control table's numbers take: shares of rows as
#: percentages (as the exact-copy share reads), attack AUCs and hits with 3 decimals
SHARE_FORMAT = "exact_copy_share"
AUC_FORMAT = "mia_auc"
HITS_FORMAT = "mia_tpr_at_fpr_1pct"


def controls_frame(controls: PlantedControls) -> pd.DataFrame:
    """The planted-leak controls as the Audit page's table: one row per measure, one column
    per control (0 %, 1 %, 5 % planted), so the table grows down, not sideways.

    One column per measure (2 per attack, 1 per curation rule) made it 4,951 px wide at
    1280x720 with floats such as 0.013333333333333334; here every number is in its registry
    format (shares of rows as percentages, AUC and hits at 1 % false alarms with 3 decimals),
    an attack's AUC and hits share one cell, and a missing
    number reads ``-``. Built from ``PlantedControls.to_dict()``, so a control read back from
    ``report.json`` shows as a computed one does.
    """
    content = controls.to_dict()
    rows = list(content.get("rows") or [])
    measures: dict[str, list[str]] = {
        "planted training rows": [
            f"{format_metric(SHARE_FORMAT, r.get('planted_share'))} "
            f"({r.get('n_planted', 0):,} rows)"
            for r in rows
        ],
        "rows in the control": [f"{r.get('n_rows', 0):,}" for r in rows],
        "rows removed": [format_metric(SHARE_FORMAT, r.get("removed_share")) for r in rows],
        "planted rows removed": [
            format_metric(SHARE_FORMAT, r.get("planted_recall")) for r in rows
        ],
    }
    rules = list(dict.fromkeys(rule for r in rows for rule in r.get("recall") or {}))
    for rule in rules:
        measures[f"planted rows removed by {rule.removeprefix('drop_').replace('_', ' ')}"] = [
            format_metric(SHARE_FORMAT, (r.get("recall") or {}).get(rule)) for r in rows
        ]
    attacks = list(dict.fromkeys(a for r in rows for a in r.get("attacks") or {}))
    for attack in attacks:
        cells = []
        for r in rows:
            values = (r.get("attacks") or {}).get(attack) or {}
            auc = format_metric(AUC_FORMAT, values.get("auc"))
            hits = format_metric(HITS_FORMAT, values.get("tpr_at_fpr_1pct"))
            cells.append(f"{auc} / {hits}")
        measures[f"{attack_label(attack)}, AUC / hits"] = cells
    measures["verdict"] = [str(r.get("verdict", MISSING)) for r in rows]
    measures["failed rules"] = [
        ", ".join(str(f) for f in r.get("failed") or []) or "none" for r in rows
    ]
    names = [str(r.get("name", f"control {i + 1}")) for i, r in enumerate(rows)]
    frame = pd.DataFrame.from_dict(measures, orient="index", columns=names)
    frame.index.name = "measure"
    return frame


def rule_labels(policy: Policy, rules: Sequence[str]) -> list[str]:
    """Registry words for policy rule ids (the id itself for a rule the policy lacks)."""
    return [metric_info(policy.rules[r].spec.metric).label if r in policy.rules else r
            for r in rules]  # fmt: skip
