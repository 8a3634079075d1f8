"""Figures and tables of the privacy section (membership-inference ROC, DCR, disclosure risk).

Builders take :class:`~synthreview.metrics.privacy.section.PrivacyReport` objects (one per
candidate)
and return plotly figures, DataFrames or pandas Stylers; no Streamlit here. Candidate names are
drawn as text in figures (:func:`synthreview.figures.text.plot_text`); tables keep them as
written (dataframe cells are plain text).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from pandas.io.formats.style import Styler

from synthreview.figures.explain import format_metric
from synthreview.figures.style import HOLDOUT_COLOR, VERDICT_COLORS, apply_style, palette
from synthreview.figures.text import plot_text
from synthreview.judgement.policy import Policy, load_policy, verdict_for_value
from synthreview.judgement.verdicts import SEVERITY
from synthreview.judgement.verdicts import style as verdict_style
from synthreview.metrics.privacy.membership import ATTACK_LABELS

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


WP29_RISKS = {
    "singling_out_univariate": "singling out (one column)",
    "singling_out_multivariate": "singling out (several columns)",
    "linkability": "linkability",
}


def wp29_table(reports: Mapping[str, object]) -> pd.DataFrame:
    """WP29 risks per candidate: risk with CI, attack / control / baseline success rates."""
    rows = []
    for name, report in reports.items():
        wp = getattr(report, "wp29", None)
        if wp is None:
            continue
        parts = [(label, getattr(wp, key)) for key, label in WP29_RISKS.items()]
        parts += [(f"inference of {col}", r) for col, r in wp.inference.items()]
        for label, r in parts:
            if r is None:
                continue
            rows.append({
                "candidate": name, "risk": label, "value": r.risk,
                "95% CI": f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]", "attack success": r.attack_rate,
                "control (holdout) success": r.control_rate,
                "random-guess success": r.baseline_rate, "attacks": r.n_attacks,
            })  # fmt: skip
    table = pd.DataFrame(rows)
    if len(table):
        table = table.sort_values(["candidate", "value"], ascending=[True, False])
    return table.reset_index(drop=True)


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


def riskiest_rows(report, *, authentic: np.ndarray | None = None, n: int = 10) -> np.ndarray:
    """Positions of the riskiest synthetic rows: exact copies, then unauthentic, then small DCR."""
    dcr = report.dcr
    order_keys = [dcr.synthetic_to_train, ~dcr.exact_copy]
    if authentic is not None and len(authentic) == len(dcr.exact_copy):
        order_keys = [dcr.synthetic_to_train, np.asarray(authentic, bool), ~dcr.exact_copy]
    return np.lexsort(order_keys)[:n]


def closest_pairs(
    synthetic: pd.DataFrame, real: pd.DataFrame, report, *, rows: np.ndarray, columns: list[str]
) -> Styler:
    """Each chosen synthetic row above its nearest training row, equal cells highlighted."""
    dcr = report.dcr
    blocks = []
    for r in rows:
        t = int(dcr.nearest_train_index[r])
        pair = pd.concat([synthetic[columns].iloc[[r]], real[columns].iloc[[t]]], ignore_index=True)
        pair.insert(0, "row", [f"synthetic #{r}", f"training #{t}"])
        pair.insert(1, "DCR", [dcr.synthetic_to_train[r], np.nan])
        pair.insert(2, "exact copy", ["yes" if dcr.exact_copy[r] else "no", ""])
        blocks.append(pair.astype({c: "object" for c in columns}))
    table = (
        pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame(columns=["row", *columns])
    )

    def highlight(frame: pd.DataFrame) -> pd.DataFrame:
        styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
        for top in range(0, len(frame) - 1, 2):
            for c in columns:
                a, b = frame.at[top, c], frame.at[top + 1, c]
                same = (pd.isna(a) and pd.isna(b)) or (
                    not pd.isna(a) and not pd.isna(b) and _equal(a, b)
                )
                if same:
                    styles.loc[[top, top + 1], c] = f"background-color: {VERDICT_COLORS['fail']}33"
        return styles

    return table.style.apply(highlight, axis=None).format(precision=3, na_rep="")


def _equal(a: object, b: object) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)
