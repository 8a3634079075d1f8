"""Figures and tables of the privacy section (membership-inference ROC, DCR, disclosure risk).

Builders take :class:`~synthreview.metrics.privacy.section.PrivacyReport` objects (one per
candidate)
and return plotly figures, DataFrames or pandas Stylers; no Streamlit here. Candidate names are
drawn as text in figures (:func:`synthreview.figures.text.plot_text`); tables keep them as
written (dataframe cells are plain text). The ``*_reading_table`` builders return what the page
hands to ``st.table``: numbers as text in the registry's formats, every text cell, header and
index label Markdown-escaped (:func:`~synthreview.figures.explain.reading_table`), few enough
columns (or records as columns) that the wrapping static table reads at 1280 px.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler

from synthreview.figures.explain import (
    MISSING,
    format_metric,
    format_number,
    metric_label,
    reading_table,
)
from synthreview.figures.style import HOLDOUT_COLOR, VERDICT_COLORS, apply_style, palette
from synthreview.figures.text import markdown_text, plot_text
from synthreview.judgement.policy import Policy, load_policy, verdict_for_value
from synthreview.judgement.verdicts import SEVERITY
from synthreview.judgement.verdicts import style as verdict_style
from synthreview.metrics.privacy.dp_claim import VERBATIM_EVENT
from synthreview.metrics.privacy.membership import ATTACK_LABELS
from synthreview.metrics.privacy.vulnerable import mask_rows

_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
#: the rules that judge one membership-inference attack (its AUC; its TPR at 1 % FPR)
ATTACK_RULES = {"mia_auc": "auc", "mia_tpr_at_fpr_1pct": "tpr_at_fpr_1pct"}


def rule_verdict(rule: str, value: float | None, *, policy: Policy | None = None) -> str:
    """Verdict of ``policy``'s rule for one value (``"n/a"`` when unmeasured or disabled).

    Thresholds come from the policy (default: the shipped ``policies/default.toml``) through
    :func:`synthreview.judgement.policy.verdict_for_value`; no figure holds its own.
    """
    if value is None:
        return "n/a"
    return verdict_for_value(policy or load_policy(), rule, float(value))


def attack_verdict(attack, *, policy: Policy | None = None) -> str:
    """Worst verdict of the membership rules (AUC, TPR at 1 % FPR) for one attack."""
    policy = policy or load_policy()
    verdicts = [rule_verdict(r, getattr(attack, f), policy=policy) for r, f in ATTACK_RULES.items()]
    return max(verdicts, key=SEVERITY.__getitem__)


def attack_label(attack: str) -> str:
    """Legend / report label of an attack name."""
    if attack == VERBATIM_EVENT:  # dp_claim's pre-chosen event, not a scoring attack
        return "verbatim-copy"
    return ATTACK_LABELS.get(attack, attack)


def verdict_color(verdict: str) -> str:
    """Mark colour of a verdict, from :mod:`synthreview.judgement.verdicts`."""
    return verdict_style(verdict).accent


def _auc_label(attack) -> str:
    # the 95 % CI is in the attack table; the legend keeps one short line per attack
    name = plot_text(attack_label(attack.attack))
    return f"{name}: AUC {format_metric('mia_auc', attack.auc)}"


def roc_overlay(report, *, log_scale: bool = False, show_reference: bool = True) -> go.Figure:
    """ROC curves of all attacks on one candidate, with the chance diagonal.

    ``log_scale=True`` shows the low-FPR region (FPR from 1e-4) on a log axis, where an
    attack that singles out a few records stands out even when its AUC is near 0.5.
    ``show_reference`` adds the holdout-only sanity curves (grey, thin): what chance looks like
    at this sample size.
    """
    fig = go.Figure()
    lo = 1e-4 if log_scale else 0.0
    grid = np.logspace(-4, 0, 200) if log_scale else np.linspace(0, 1, 2)
    fig.add_trace(go.Scatter(x=grid, y=grid, mode="lines", name="chance",
                             line={"color": "black", "dash": "dash", "width": 1}))  # fmt: skip
    for i, attack in enumerate(a for a in report.membership_inference if a.error is None):
        fpr, tpr = np.asarray(attack.fpr), np.asarray(attack.tpr)
        keep = fpr >= lo if log_scale else slice(None)
        fig.add_trace(go.Scatter(x=fpr[keep], y=tpr[keep], mode="lines", name=_auc_label(attack),
                                 line={"color": palette(i), "width": 2.5}))  # fmt: skip
        if show_reference and attack.reference_fpr is not None:
            rf, rt = np.asarray(attack.reference_fpr), np.asarray(attack.reference_tpr)
            keep = rf >= lo if log_scale else slice(None)
            fig.add_trace(go.Scatter(
                x=rf[keep], y=rt[keep], mode="lines", showlegend=i == 0,
                name="holdout-only reference (chance at this n)", legendgroup="reference",
                line={"color": HOLDOUT_COLOR, "width": 1, "dash": _DASHES[i % len(_DASHES)]},
            ))  # fmt: skip
    xaxis = {"title": "false-positive rate (non-members called members)"}
    if log_scale:
        xaxis.update(type="log", range=[-4, 0])
    fig.update_layout(xaxis=xaxis, yaxis={"title": "true-positive rate", "range": [0, 1.02]})
    # the legend (every attack, one row each) goes below the axes: apply_style sizes the margin
    return apply_style(fig, height=480)


def dcr_histogram(reports: Mapping[str, object]) -> go.Figure:
    """Distance to the closest training row: each candidate against holdout rows (reference)."""
    fig = go.Figure()
    reference = next(
        (r.dcr.holdout_to_train for r in reports.values()
         if r.dcr is not None and r.dcr.holdout_to_train is not None), None,
    )  # fmt: skip
    if reference is not None:
        fig.add_trace(go.Histogram(x=reference, name="holdout → train (reference)",
                                   histnorm="probability", marker_color=HOLDOUT_COLOR,
                                   opacity=0.55, nbinsx=60))  # fmt: skip
    for i, (name, report) in enumerate(reports.items()):
        if report.dcr is not None:
            fig.add_trace(go.Histogram(x=report.dcr.synthetic_to_train,
                                       name=plot_text(f"{name} → train"),
                                       histnorm="probability", marker_color=palette(i),
                                       opacity=0.55, nbinsx=60))  # fmt: skip
    fig.update_layout(barmode="overlay", xaxis_title="L2 distance to closest training row "
                      "(encoded space; 0 = identical)", yaxis_title="share of rows")  # fmt: skip
    return apply_style(fig, height=400)


def attack_table(reports: Mapping[str, object], *, policy: Policy | None = None) -> pd.DataFrame:
    """One row per candidate and attack, riskiest first (TPR at 1 % FPR, then AUC).

    ``verdict`` is the worst of ``policy``'s membership rules for the attack (default policy
    when None).
    """
    policy = policy or load_policy()
    rows = []
    for name, report in reports.items():
        for a in report.membership_inference:
            rows.append({
                "candidate": name, "attack": ATTACK_LABELS.get(a.attack, a.attack),
                "AUC": a.auc, "AUC 95% CI": f"[{a.auc_ci[0]:.3f}, {a.auc_ci[1]:.3f}]",
                "TPR @ FPR 1%": a.tpr_at_fpr_1pct, "TPR @ FPR 0.1%": a.tpr_at_fpr_01pct,
                "advantage": a.advantage, "holdout-only AUC": a.reference_auc,
                "challenge accuracy": a.challenge_accuracy,
                "verdict": attack_verdict(a, policy=policy), "error": a.error or "",
            })  # fmt: skip
    table = pd.DataFrame(rows)
    if len(table):
        table = table.sort_values(["TPR @ FPR 1%", "AUC"], ascending=False, na_position="last")
    return table.reset_index(drop=True)


#: attack-table columns written in their registry metric's format
ATTACK_FORMATS = {
    "TPR @ FPR 1%": "mia_tpr_at_fpr_1pct",
    "TPR @ FPR 0.1%": "mia_tpr_at_fpr_01pct",
    "advantage": "mia_advantage",
    "holdout-only AUC": "mia_auc",
}


def attack_reading_table(report, *, policy: Policy | None = None) -> pd.DataFrame:
    """One candidate's attacks for ``st.table``, riskiest first, one row per attack (its label
    is the index): AUC with its 95 % interval in one cell, the TPRs, advantage, holdout-only
    AUC, challenge accuracy (when an attack measured one) and the policy's verdict. The
    attacks' errors are not a column: the page shows each above the table."""
    policy = policy or load_policy()
    attacks = list(report.membership_inference)
    auc = [
        f"{format_metric('mia_auc', a.auc)} ({format_metric('mia_auc', a.auc_ci[0])} to "
        f"{format_metric('mia_auc', a.auc_ci[1])})"
        for a in attacks
    ]
    table = pd.DataFrame(
        {
            "AUC (95 % CI)": auc,
            "TPR @ FPR 1%": [a.tpr_at_fpr_1pct for a in attacks],
            "TPR @ FPR 0.1%": [a.tpr_at_fpr_01pct for a in attacks],
            "advantage": [a.advantage for a in attacks],
            "holdout-only AUC": [a.reference_auc for a in attacks],
            "challenge accuracy": [a.challenge_accuracy for a in attacks],
            "verdict": [attack_verdict(a, policy=policy) for a in attacks],
            "_auc": [a.auc for a in attacks],
        },
        index=pd.Index([attack_label(a.attack) for a in attacks], name="attack"),
    )
    numbers = ["TPR @ FPR 1%", "TPR @ FPR 0.1%", "advantage", "holdout-only AUC",
               "challenge accuracy", "_auc"]  # fmt: skip
    table = table.astype({c: float for c in numbers})
    # riskiest first, as attack_table orders them
    table = table.sort_values(["TPR @ FPR 1%", "_auc"], ascending=False, na_position="last")
    table = table.drop(columns="_auc")
    if table["challenge accuracy"].isna().all():  # measured by the Hide-and-Seek seekers only
        table = table.drop(columns="challenge accuracy")
    return reading_table(table, ATTACK_FORMATS)


def person_reading_table(person, rows: Mapping[str, object]) -> pd.DataFrame:
    """Person-level attacks beside the row-level ones of the same attack, for ``st.table``.

    ``person`` is a candidate's ``person_level`` result, ``rows`` its row-level attacks by
    attack name. One row per attack (label as index); an ``error`` column only when an attack
    failed.
    """
    tpr = "person_mia_tpr_at_fpr_1pct"
    table = pd.DataFrame(
        {
            "person AUC": [a.auc for a in person.attacks],
            "person TPR @1% FPR": [a.tpr_at_fpr_1pct for a in person.attacks],
            "95% CI": [
                f"{format_metric(tpr, a.tpr_at_fpr_1pct_ci[0])} to "
                f"{format_metric(tpr, a.tpr_at_fpr_1pct_ci[1])}"
                for a in person.attacks
            ],
            "person TPR @0.1% FPR": [a.tpr_at_fpr_01pct for a in person.attacks],
            "row AUC": [getattr(rows.get(a.attack), "auc", np.nan) for a in person.attacks],
            "row TPR @1% FPR": [
                getattr(rows.get(a.attack), "tpr_at_fpr_1pct", np.nan) for a in person.attacks
            ],
            "error": [a.error or "" for a in person.attacks],
        },
        index=pd.Index([attack_label(a.attack) for a in person.attacks], name="attack"),
    )
    table = table.astype({c: float for c in PERSON_FORMATS})
    if not table["error"].astype(bool).any():
        table = table.drop(columns="error")
    return reading_table(table, PERSON_FORMATS)


#: person-table columns written in their registry metric's format
PERSON_FORMATS = {
    "person AUC": "person_mia_auc",
    "person TPR @1% FPR": "person_mia_tpr_at_fpr_1pct",
    "person TPR @0.1% FPR": "person_mia_tpr_at_fpr_01pct",
    "row AUC": "mia_auc",
    "row TPR @1% FPR": "mia_tpr_at_fpr_1pct",
}


@dataclass(frozen=True)
class ClaimText:
    """A tested (ε, δ)-DP claim as the Privacy page writes it (registry number formats).

    Attributes
    ----------
    claimed : str
        ``"ε = 1, δ = 1e-05"``: the claim as given.
    certified : str
        ``"ε ≥ 1.84"``: the ε the attacks certify (a lower bound).
    excess : str
        The certified ε beyond the claim (``dp_claim_excess``'s format).
    phantom_share : str
        ``phantom_share`` in its format; ``n/a`` when the operating point flags no member.
    evidence : str
        The operating point behind the bound: attack, rates and their bounds, the tests run.
    """

    claimed: str
    certified: str
    excess: str
    phantom_share: str
    evidence: str


def dp_claim_text(claim) -> ClaimText:
    """Words for a :class:`~synthreview.metrics.privacy.dp_claim.DPClaimTest`.

    Whether the evidence contradicts the claim is the judgement's (rule ``dp_claim``), not
    written here.
    """
    claimed = (
        f"ε = {format_number(claim.claimed_epsilon, 'g')}, "
        f"δ = {format_number(claim.claimed_delta, 'g')}"
    )
    against = ", ".join(attack_label(a) for a in claim.contradicting)
    evidence = (
        f"Operating point of the {attack_label(claim.attack)} attack: it flags "
        f"{claim.disclosures:,} of {claim.n_members:,} training rows, TPR "
        f"{format_number(claim.tpr)} (at least {format_number(claim.tpr_lower)}) against FPR "
        f"{format_number(claim.fpr)} of {claim.n_nonmembers:,} holdout rows (at most "
        f"{format_number(claim.fpr_upper)}); bounds at {claim.confidence:.0%} over "
        f"{claim.n_tests:,} operating points together (Clopper-Pearson, Bonferroni"
        + (
            "; the verbatim-copy event has half of the error budget, the attacks' thresholds "
            "share the other half)."
            if claim.verbatim is not None
            else ")."
        )
        + (f" Attacks contradicting the claim: {against}." if against else "")
    )
    return ClaimText(
        claimed=claimed,
        certified=f"ε ≥ {format_metric('dp_claim_excess', claim.certified_epsilon)}",
        excess=format_metric("dp_claim_excess", claim.excess),
        phantom_share=format_metric("phantom_share", claim.phantom_share),
        evidence=evidence,
    )


#: the WP29 risks measured once per candidate (inference is measured per secret column)
WP29_RISKS = ("singling_out_univariate", "singling_out_multivariate", "linkability")


def wp29_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """WP29 risks per candidate, as text: risk with its 95 % interval, and the success rates of
    the attack, the control (holdout rows) and a random guess side by side.

    Risks are named by their registry labels (``"attribute inference (WP29)"``), numbers in
    the registry's format; five columns, so the table fits a 1280 px screen.
    """
    rows = []
    for name, report in reports.items():
        wp = getattr(report, "wp29", None)
        if wp is None:
            continue
        parts = [
            (f"wp29_{key}", metric_label(f"wp29_{key}"), getattr(wp, key)) for key in WP29_RISKS
        ]
        inference = metric_label("wp29_inference")
        parts += [("wp29_inference", f"{inference}: {col}", r) for col, r in wp.inference.items()]
        for metric, label, r in parts:
            if r is None:
                continue
            risk = format_metric(metric, r.risk)
            low, high = (format_metric(metric, v) for v in r.ci)
            rates = " / ".join(
                format_number(v, ".3f") for v in (r.attack_rate, r.control_rate, r.baseline_rate)
            )
            rows.append({
                "candidate": name, "risk": label, "risk (95 % CI)": f"{risk} ({low} to {high})",
                "success: attack / control / guess": rates, "attacks": r.n_attacks,
                "_order": r.risk,
            })  # fmt: skip
    table = pd.DataFrame(rows)
    if len(table):
        table = table.sort_values(["candidate", "_order"], ascending=[True, False])
        table = table.drop(columns="_order")
    return table.reset_index(drop=True)


def wp29_reading_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """:func:`wp29_table` for ``st.table`` (text escaped; the page hides the 0..n index)."""
    return reading_table(wp29_table(reports))


def vulnerable_table(report) -> pd.DataFrame:
    """The most exposed training records: position, p-value, attack and masked values."""
    found = getattr(report, "vulnerable", None)
    if found is None:
        return pd.DataFrame(columns=["training row", "p-value", "attack"])
    table = pd.DataFrame({
        "training row": found.rows, "p-value": found.p_value,
        "attack": [ATTACK_LABELS.get(a, a) for a in found.attack],
    })  # fmt: skip
    if found.values is not None:
        table = pd.concat([table, found.values.reset_index(drop=True)], axis=1)
    return table


#: records per static table of the most exposed records: their masked values stay readable
RECORDS_PER_TABLE = 5


def vulnerable_reading_tables(
    report, *, n: int = RECORDS_PER_TABLE, per_table: int = RECORDS_PER_TABLE
) -> list[pd.DataFrame]:
    """The ``n`` most exposed training records for ``st.table``, fields as rows and records as
    columns (``row 17``), ``per_table`` records per table: one column per record instead of one
    per data column, so a table with many columns reads on a projector.

    The values are the engine's, masked (decile intervals, rare levels as "(rare)"): nothing
    here unmasks them. p-values are written without float noise; attack labels, data column
    names and values are Markdown-escaped (a data column named ``attack`` stays its own row).
    """
    found = getattr(report, "vulnerable", None)
    k = 0 if found is None else min(max(int(n), 0), len(found.rows))
    if k == 0:
        return []
    fields = [markdown_text("p-value"), "attack"]
    lines = [
        [format_number(float(p)) for p in found.p_value[:k]],
        [markdown_text(attack_label(a)) for a in found.attack[:k]],
    ]
    values = found.values
    for i in range(0 if values is None else values.shape[1]):
        fields.append(markdown_text(values.columns[i]))
        lines.append([MISSING if pd.isna(v) else markdown_text(v) for v in values.iloc[:k, i]])
    records = [markdown_text(f"row {r}") for r in found.rows[:k]]
    table = pd.DataFrame(lines, index=fields, columns=records)
    step = max(int(per_table), 1)
    return [table.iloc[:, i : i + step] for i in range(0, k, step)]


def attribute_inference_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """Attribute inference per candidate: attacker trained on synthetic vs on holdout rows."""
    rows = []
    for name, report in reports.items():
        ai = report.attribute_inference
        if ai is not None:
            rows.append({
                "candidate": name, "sensitive": ai.sensitive, "metric": ai.metric,
                "trained on synthetic": ai.synthetic, "trained on holdout": ai.holdout,
                "ratio (synthetic / holdout)": ai.ratio,
                "risk ratio (> 1 = added risk)": ai.risk_ratio,
            })  # fmt: skip
    return pd.DataFrame(rows)


def attribute_inference_reading_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """:func:`attribute_inference_table` for ``st.table``, one row per candidate (the index);
    the risk ratio in its registry format."""
    table = attribute_inference_table(reports)
    if not len(table):
        return reading_table(table)
    table = table.set_index("candidate")
    numbers = ["trained on synthetic", "trained on holdout", "ratio (synthetic / holdout)",
               "risk ratio (> 1 = added risk)"]  # fmt: skip
    table = table.astype({c: float for c in numbers})
    return reading_table(table, {"risk ratio (> 1 = added risk)": "attribute_inference_risk"})


def l_diversity_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """ℓ-diversity per candidate and numeric column (share of values in leaves with < ℓ)."""
    frames = []
    for name, report in reports.items():
        if report.l_diversity is not None and len(report.l_diversity.table):
            frames.append(report.l_diversity.table.assign(candidate=name, l=report.l_diversity.ell))
    if not frames:
        return pd.DataFrame(columns=["candidate", "column", "share_below_l", "l"])
    table = pd.concat(frames, ignore_index=True)
    return table[["candidate", "column", "share_below_l", "n_leaves", "n_leaves_below_l", "l"]]


def l_diversity_reading_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """:func:`l_diversity_table` for ``st.table`` in words (the page hides the 0..n index)."""
    table = l_diversity_table(reports).rename(columns={
        "share_below_l": "share of values in leaves below ℓ", "n_leaves": "leaves",
        "n_leaves_below_l": "leaves below ℓ", "l": "ℓ",
    })  # fmt: skip
    return reading_table(table.astype({"share of values in leaves below ℓ": float}))


def shadow_reading_table(shadow) -> pd.DataFrame:
    """The shadow-model attack per target record for ``st.table`` (the target is the index)."""
    targets = shadow.targets
    table = pd.DataFrame(
        {
            "in training": ["yes" if t.member else "no" for t in targets],
            "chosen": [t.chosen for t in targets],
            "AUC": [float(t.auc) for t in targets],
            "TPR at FPR 0": [float(t.tpr.value) for t in targets],
            "score on the candidate": [float(t.candidate_score) for t in targets],
            "called a member": ["yes" if t.candidate_called else "no" for t in targets],
        },
        index=pd.Index([f"{t.table} row {t.row}" for t in targets], name="target"),
    )
    return reading_table(table, {"AUC": "shadow_auc"})


def riskiest_rows(report, *, authentic: np.ndarray | None = None, n: int = 10) -> np.ndarray:
    """Positions of the riskiest synthetic rows: exact copies, then unauthentic, then small DCR."""
    dcr = report.dcr
    order_keys = [dcr.synthetic_to_train, ~dcr.exact_copy]
    if authentic is not None and len(authentic) == len(dcr.exact_copy):
        order_keys = [dcr.synthetic_to_train, np.asarray(authentic, bool), ~dcr.exact_copy]
    return np.lexsort(order_keys)[:n]


def closest_pairs(
    synthetic: pd.DataFrame,
    real: pd.DataFrame,
    report,
    *,
    rows: np.ndarray,
    columns: list[str],
    synthetic_rows: np.ndarray | None = None,
    real_rows: np.ndarray | None = None,
) -> pd.DataFrame:
    """One line per chosen synthetic row: its nearest training row, DCR, copy, equal cells.

    Positions and counts only (no cell value), so the list is safe on a shared screen and
    narrow at any number of columns; :func:`closest_pair` shows one pair's cells.
    ``synthetic_rows`` / ``real_rows`` give the file positions of the frames' rows when they
    are samples (``synthreview.sampling``): the list names rows as in the files.
    """
    dcr = report.dcr
    lines = []
    for r in rows:
        t = int(dcr.nearest_train_index[r])
        same = sum(_same(synthetic[c].iloc[r], real[c].iloc[t]) for c in columns)
        lines.append({
            "synthetic row": int(r if synthetic_rows is None else synthetic_rows[r]),
            "nearest training row": int(t if real_rows is None else real_rows[t]),
            "DCR": format_number(dcr.synthetic_to_train[r]),
            "exact copy": "yes" if dcr.exact_copy[r] else "no",
            "equal cells": f"{same} of {len(columns)}",
        })  # fmt: skip
    return pd.DataFrame(
        lines,
        columns=["synthetic row", "nearest training row", "DCR", "exact copy", "equal cells"],
    )


def closest_pairs_reading(
    synthetic: pd.DataFrame,
    real: pd.DataFrame,
    report,
    *,
    rows: np.ndarray,
    columns: list[str],
    synthetic_rows: np.ndarray | None = None,
    real_rows: np.ndarray | None = None,
) -> pd.DataFrame:
    """:func:`closest_pairs` for ``st.table`` (wraps at 1280 px), one line per synthetic row."""
    pairs = closest_pairs(synthetic, real, report, rows=rows, columns=columns,
                          synthetic_rows=synthetic_rows, real_rows=real_rows)  # fmt: skip
    return reading_table(pairs.set_index("synthetic row"))


def closest_pair(
    synthetic: pd.DataFrame,
    real: pd.DataFrame,
    report,
    *,
    row: int,
    columns: list[str],
    numeric: list[str],
    raw: bool = False,
) -> Styler:
    """Synthetic row ``row`` beside its nearest training row (:func:`row_pair`)."""
    t = int(report.dcr.nearest_train_index[row])
    return row_pair(synthetic, real, row=row, train_row=t, columns=columns, numeric=numeric,
                    raw=raw)  # fmt: skip


def row_pair(
    synthetic: pd.DataFrame,
    real: pd.DataFrame,
    *,
    row: int,
    train_row: int | None,
    columns: list[str],
    numeric: list[str],
    raw: bool = False,
) -> Styler:
    """Synthetic row ``row`` beside training row ``train_row``, one line per column.

    Masked unless ``raw``: numbers as the training column's decile interval and levels shared
    by fewer than 10 training rows as "(rare)", exactly as the most exposed records are
    (:func:`synthreview.metrics.privacy.vulnerable.mask_rows`), so a shared screen shows no
    training row. Equal cells (compared on the values, masked or not) are highlighted.
    ``train_row=None`` shows the synthetic row alone.
    """
    pairs = [(f"synthetic #{row}", synthetic, row)]
    if train_row is not None:
        pairs.append((f"training #{train_row}", real, train_row))
    kept = [c for c in columns if c in numeric]
    shown = {}
    for title, table, position in pairs:
        if raw:
            shown[title] = [_cell(table[c].iloc[position]) for c in columns]
        else:
            source = None if table is real else table[columns]
            masked = mask_rows(real[columns], np.array([position]), numeric=kept, source=source)
            shown[title] = list(masked.iloc[0])
    same = [
        train_row is not None and _same(synthetic[c].iloc[row], real[c].iloc[train_row])
        for c in columns
    ]
    if train_row is not None:
        shown["equal"] = ["yes" if s else "" for s in same]
    table = pd.DataFrame(shown, index=pd.Index(columns, name="column"))
    fill = f"background-color: {VERDICT_COLORS['fail']}33"

    def highlight(frame: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
        styles.iloc[np.flatnonzero(same), : len(pairs)] = fill
        return styles

    return table.style.apply(highlight, axis=None)


def _cell(value: object) -> str:
    """A raw cell as text: whole numbers as written (``39``), others to six significant digits
    (no float noise), ``n/a`` when missing."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return MISSING
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.6g}"
    return str(value)


def _same(a: object, b: object) -> bool:
    if pd.isna(a) or pd.isna(b):
        return bool(pd.isna(a) and pd.isna(b))
    return _equal(a, b)


def _equal(a: object, b: object) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


# --- disclosure at the statistical-office standard (issue 36) ----------------------------------


def _share(x: float) -> str:
    return MISSING if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f} %"


def qi_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """Quasi-identifier evidence per candidate: replay beside the holdout's, k, risk.

    One row per candidate with a :class:`~synthreview.metrics.privacy.quasi.QuasiIdentifierRisk`:
    the synthetic rows that carry the quasi-identifiers of exactly one training person (and the
    holdout's share, what coincidence gives), the balance the ``qi_replay`` rule judges with its
    permutation bound, the k-anonymity of candidate / holdout / training, and the mean
    prosecutor risk of candidate and holdout rows.
    """
    rows = []
    for name, report in reports.items():
        qi = getattr(report, "quasi_identifiers", None)
        if qi is None:
            continue
        rows.append({
            "candidate": name,
            "quasi-identifiers": ", ".join(qi.quasi_identifiers),
            "rows singling out one training person": f"{qi.replayed:,} of {qi.n_synthetic:,} "
            f"({_share(qi.replay_share)}); holdout {_share(qi.holdout_replay_share)}",
            "balance (bound)": f"{format_number(qi.balance, '+.3f')} "
            f"({format_number(qi.balance_bound, '+.3f')})",
            "k-anonymity: candidate / holdout / training": f"{qi.k_anonymity} / "
            f"{qi.holdout_k_anonymity if qi.n_holdout else MISSING} / {qi.train_k_anonymity}",
            "mean prosecutor risk: candidate / holdout": f"{format_number(qi.risk_mean, '.3f')}"
            f" / {format_number(qi.holdout_risk_mean, '.3f')}",
        })  # fmt: skip
    return pd.DataFrame(rows)


def qi_risk_histogram(reports: Mapping[str, object]) -> go.Figure:
    """Share of rows per prosecutor-risk bin (``1 / f_k``): each candidate beside the holdout."""
    fig = go.Figure()
    found = [
        (name, r.quasi_identifiers)
        for name, r in reports.items()
        if getattr(r, "quasi_identifiers", None) is not None
    ]
    holdout = next((qi for _, qi in found if qi.n_holdout), None)
    if holdout is not None:
        fig.add_trace(go.Bar(
            x=[b for b, _, _ in holdout.risk_histogram],
            y=[h for _, _, h in holdout.risk_histogram],
            name="holdout (reference)", marker_color=HOLDOUT_COLOR,
        ))  # fmt: skip
    for i, (name, qi) in enumerate(found):
        fig.add_trace(go.Bar(
            x=[b for b, _, _ in qi.risk_histogram], y=[s for _, s, _ in qi.risk_histogram],
            name=plot_text(name), marker_color=palette(i),
        ))  # fmt: skip
    fig.update_layout(
        barmode="group",
        xaxis_title="re-identification risk 1 / f_k (f_k: training rows with the row's "
        "quasi-identifiers)",
        yaxis_title="share of rows",
    )
    return apply_style(fig, height=380)


def answer_key_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """Answer keys per candidate and tested column: tree error beside the holdout's, the rule.

    ``reports`` maps candidate names to utility reports
    (:class:`~synthreview.metrics.utility.section.UtilityReport`).
    """
    rows = []
    for name, report in reports.items():
        keys = getattr(report, "answer_key", None)
        for key in () if keys is None else keys.keys:
            rows.append({
                "candidate": name, "column": key.column,
                "tree error: candidate / holdout": f"{_share(key.error)} / "
                f"{_share(key.holdout_error)}",
                "leak": format_metric("label_leak", key.leak), "rule found": key.rule,
            })  # fmt: skip
    return pd.DataFrame(rows)


def constraints_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """Each declared constraint's violation rate on each candidate beside real data's."""
    rows = []
    for name, report in reports.items():
        declared = getattr(report, "constraints", None)
        for check in () if declared is None else declared.checks:
            rows.append({
                "candidate": name, "constraint": check.name, "rule": check.description,
                "candidate rows breaking it": f"{check.violations:,} of {check.rows:,} "
                f"({_share(check.rate)})",
                "training / holdout": f"{_share(check.real_rate)} / {_share(check.holdout_rate)}",
            })  # fmt: skip
    return pd.DataFrame(rows)


def sensitive_values_table(reports: Mapping[str, object], *, top: int = 5) -> pd.DataFrame:
    """Per candidate, the ``top`` columns whose training-unique values it writes most often
    beyond the holdout: values reproduced, rows carrying them beside the holdout's share, and
    the excess with its 95 % interval."""
    rows = []
    for name, report in reports.items():
        found = getattr(report, "sensitive_values", None)
        for c in () if found is None else found.columns[:top]:
            low, high = c.excess_ci if c.excess_ci is not None else (math.nan, math.nan)
            rows.append({
                "candidate": name, "column": c.column,
                "training-unique values written again": f"{c.reproduced:,} of "
                f"{c.unique_values:,}",
                "rows carrying one: candidate / holdout": f"{_share(c.share)} / "
                f"{_share(c.holdout_share)}",
                "excess (95 % CI)": f"{format_number(c.excess, '+.3f')} "
                f"({format_number(low, '+.3f')} to {format_number(high, '+.3f')})",
            })  # fmt: skip
    return pd.DataFrame(rows)


def group_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """Per candidate and group, the worst attack's AUC and TPR at 1 % FPR, side by side."""
    rows = []
    for name, report in reports.items():
        groups = getattr(report, "groups", None)
        if groups is None:
            continue
        worst: dict[tuple[str, str], object] = {}
        for r in groups.results:
            key = (r.column, r.group)
            if key not in worst or r.tpr_at_fpr_1pct > worst[key].tpr_at_fpr_1pct:
                worst[key] = r
        for (column, group), r in worst.items():
            rows.append({
                "candidate": name, "group": f"{column} = {group}",
                "members / non-members": f"{r.n_members} / {r.n_nonmembers}",
                "worst attack": attack_label(r.attack),
                "TPR at 1 % FPR": format_number(r.tpr_at_fpr_1pct, ".3f"),
                "highest AUC": format_number(
                    max(x.auc for x in groups.results if (x.column, x.group) == (column, group)),
                    ".3f",
                ),
            })  # fmt: skip
    return pd.DataFrame(rows)


def group_tpr_bars(reports: Mapping[str, object]) -> go.Figure:
    """The worst attack's TPR at 1 % FPR per group, one bar per candidate (chance: 0.01)."""
    fig = go.Figure()
    for i, (name, report) in enumerate(reports.items()):
        groups = getattr(report, "groups", None)
        if groups is None:
            continue
        worst: dict[str, float] = {}
        for r in groups.results:
            key = f"{r.column} = {r.group}"
            worst[key] = max(worst.get(key, 0.0), r.tpr_at_fpr_1pct)
        fig.add_trace(go.Bar(
            x=[plot_text(k) for k in worst], y=list(worst.values()), name=plot_text(name),
            marker_color=palette(i),
        ))  # fmt: skip
    fig.add_hline(y=0.01, line_dash="dot", annotation_text="guessing (1 %)")
    fig.update_layout(barmode="group", yaxis_title="TPR at 1 % FPR (worst attack)")
    return apply_style(fig, height=380)
