"""The Audit page's tables of a release: the re-attack, the planted-leak controls, rule names.

Each builds a table from a result object (``release.reattack.Reattack``,
``release.controls.PlantedControls``) or the policy, in the words and number formats every
other page uses (the metric registry, ``figures.explain.format_number``): no float noise, ``-``
for a number not computed, and never "n/a to n/a" for an interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from synthreview.figures.explain import MISSING, format_number
from synthreview.figures.privacy import attack_label
from synthreview.judgement.policy import Policy
from synthreview.metrics.registry import get as metric_info
from synthreview.release.controls import PlantedControls, control_table
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


def controls_frame(controls: PlantedControls) -> pd.DataFrame:
    """The planted-leak controls as the Audit page's table."""
    return control_table(controls.to_dict())


def rule_labels(policy: Policy, rules: Sequence[str]) -> list[str]:
    """Registry words for policy rule ids (the id itself for a rule the policy lacks)."""
    return [metric_info(policy.rules[r].spec.metric).label if r in policy.rules else r
            for r in rules]  # fmt: skip
