"""The verdict and decision vocabulary, with the one set of colours every surface uses.

Rule verdicts: ``pass``, ``warn``, ``fail``, ``incomplete`` (a rule the policy requires could not
be computed: the release is withheld until it is) and ``n/a`` (the rule does not apply to this
kind of data). Decisions per candidate: ``release``, ``release_after_curation``,
``do_not_release``, ``incomplete``.

Every page, figure, the HTML report and the CLI take labels and colours from
:data:`VERDICT_STYLE` / :data:`DECISION_STYLE`: dark text on a light tint, each pair at a WCAG
contrast ratio of at least 7 (checked in ``tests/test_judgement.py``), and a text label so
colour is never the only carrier of meaning. ``accent`` is a saturated colour for marks in
figures (bars, markers), never for text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Verdict = Literal["pass", "warn", "fail", "incomplete", "n/a"]
VERDICTS: tuple[str, ...] = ("pass", "warn", "fail", "incomplete", "n/a")
#: overall severity: a failure decides before anything missing, missing before a warning
SEVERITY: dict[str, int] = {"n/a": 0, "pass": 1, "warn": 2, "incomplete": 3, "fail": 4}

Outcome = Literal[
    "release", "release_after_curation", "do_not_release", "incomplete", "out_of_date"
]
#: the decisions a record files
OUTCOMES: tuple[str, ...] = ("release", "release_after_curation", "do_not_release", "incomplete")
#: what a screen may show: ``out_of_date`` is the dashboard's own (an option changed after the
#: run, so no decision is taken on a mix of old and new numbers; it is never filed: exports are
#: refused until the run is current)
SCREEN_OUTCOMES: tuple[str, ...] = (*OUTCOMES, "out_of_date")


@dataclass(frozen=True)
class VerdictStyle:
    """Text label and colours (CSS hex) of one verdict or decision."""

    label: str
    background: str
    foreground: str
    accent: str

    def css(self) -> str:
        """``"background-color: ...; color: ..."`` for a table cell or badge."""
        return f"background-color: {self.background}; color: {self.foreground}"


VERDICT_STYLE: dict[str, VerdictStyle] = {
    "pass": VerdictStyle("PASS", "#dcfce7", "#14532d", "#2ca02c"),
    "warn": VerdictStyle("WARN", "#fef3c7", "#713f12", "#ffbf00"),
    "fail": VerdictStyle("FAIL", "#fee2e2", "#7f1d1d", "#d62728"),
    "incomplete": VerdictStyle("INCOMPLETE", "#ede9fe", "#3b0764", "#7e57c2"),
    "n/a": VerdictStyle("N/A", "#f3f4f6", "#374151", "#bbbbbb"),
}

DECISION_STYLE: dict[str, VerdictStyle] = {
    "release": replace(VERDICT_STYLE["pass"], label="RELEASE"),
    "release_after_curation": VerdictStyle(
        "RELEASE AFTER CURATION", "#e0f2fe", "#0c4a6e", "#1f77b4"
    ),
    "do_not_release": replace(VERDICT_STYLE["fail"], label="DO NOT RELEASE"),
    "incomplete": replace(VERDICT_STYLE["incomplete"], label="INCOMPLETE"),
    "out_of_date": VerdictStyle("OUT OF DATE - RE-RUN", "#f3f4f6", "#1f2937", "#6b7280"),
}


def style(verdict: str) -> VerdictStyle:
    """Style of a verdict or a decision (unknown values look like ``n/a``)."""
    return VERDICT_STYLE.get(verdict) or DECISION_STYLE.get(verdict) or VERDICT_STYLE["n/a"]


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours, 1 to 21 (4.5 = AA for body text)."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    hi, lo = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
