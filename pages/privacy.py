"""Privacy: membership-inference ROC, distance to closest record, disclosure risk, closest pairs."""

from __future__ import annotations

import math
from dataclasses import replace

import streamlit as st

import app_state
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import privacy as fig
from synthreview.figures.explain import format_metric, format_number, metric_label
from synthreview.figures.text import markdown_text
from synthreview.judgement.policy import RuleVerdict, apply_policy

NONE = "(none)"
LIGHTS = {"pass": "green", "warn": "orange", "fail": "red", "incomplete": "violet", "n/a": "gray"}

review = app_state.require_review()
st.header("Privacy")
st.caption(
    "Could someone holding the synthetic data tell who was in the training data, or learn a "
    "sensitive value about them? Membership-inference attacks score a balanced set of training "
    "rows (members) and holdout rows (non-members): ROC AUC 0.5 means the attacker guesses. "
    "Sources: Urban Institute disclosure metrics (Gower-distance attack, attribute inference, "
    "ℓ-diversity), Hide-and-Seek challenge seekers, Eiring (2022) ROC reporting."
)


def _shown(table):
    """``table`` with every float cell written as the reviewer reads it (``0.527``, ``–``):
    no float noise such as ``0.5267029240000001``, no ``None``."""
    floats = table.select_dtypes("float").columns
    return table.astype({c: "object" for c in floats}).assign(
        **{c: table[c].map(format_number) for c in floats}
    )


def _light(verdict: str) -> str:
    return f":{LIGHTS[verdict]}-background[{verdict.upper()}]"


options = app_state.get_options()
if review.kind == "table":
    choices = [NONE, *review.schema.analysed]
    current = options.sensitive if options.sensitive in choices else NONE
    chosen = st.selectbox(
        "Sensitive column for attribute inference", choices, index=choices.index(current),
        key="privacy_sensitive",
        help="The attacker knows every other column of a training record and predicts this one.",
    )  # fmt: skip
    wanted = None if chosen == NONE else chosen
    if wanted != options.sensitive:
        options = replace(options, sensitive=wanted)
        app_state.set_options(options)

report = app_state.get_report(("fidelity", "privacy"), options=options)
policy = app_state.get_policy()
privacy = app_state.section_results(report, "privacy")
fidelity = {n: c.fidelity for n, c in report.candidates.items() if c.fidelity is not None}
if not privacy:
    st.stop()
tab_labels = [markdown_text(name) for name in privacy]  # tab labels render Markdown
if review.holdout is None:
    st.warning("No holdout table: membership inference and the DCR share need non-members.")

st.subheader("Summary")
# each tile's verdict is the judgement's (the Overview's decision rests on the same verdicts):
# the stored summary's when the review ran, else the policy applied to these numbers
summary = app_state.review_summary(options)
if summary is not None:
    judged = summary.verdicts
else:
    content = report.to_dict()["candidates"]
    judged = {n: apply_policy(policy, content[n], kind=report.kind) for n in privacy}


def _rule(name: str, rule: str) -> RuleVerdict | None:
    verdicts = judged.get(name)
    return next((r for r in verdicts.rules if r.rule == rule), None) if verdicts else None


def _tile(column, name: str, rule: str) -> None:
    """The rule's verdict under a tile, with its reason (``n/a`` when the policy skips it)."""
    found = _rule(name, rule)
    column.markdown(_light(found.verdict if found is not None else "n/a"))
    if found is not None and found.reason:
        column.caption(markdown_text(found.reason))


for name, result in privacy.items():
    st.markdown(f"**{markdown_text(name)}**")
    col_mia, col_share, col_copies = st.columns(3)
    aucs = [a.auc for a in result.membership_inference if a.error is None]
    worst = max(aucs) if aucs else math.nan
    col_mia.metric(
        metric_label("mia_auc"), format_metric("mia_auc", None if math.isnan(worst) else worst),
        help="0.5 = chance; lower is better.",
    )  # fmt: skip
    _tile(col_mia, name, "mia_auc")
    dcr = result.dcr
    share = dcr.share_closer_to_train if dcr is not None else None
    col_share.metric(
        "DCR share", format_metric("dcr_share", share),
        help="Share of synthetic rows closer to training than to holdout rows (train and holdout "
        f"subsampled to {dcr.share_rows if dcr else 0} rows each). 0.5 is ideal. Warning only: "
        "distance-based shares are not evidence of membership risk (The DCR Delusion, "
        "arXiv 2505.01524).",
    )  # fmt: skip
    _tile(col_share, name, "dcr_share")
    copies = dcr.exact_copies if dcr is not None else 0
    reference = dcr.holdout_exact_copy_share if dcr is not None else None
    col_copies.metric(
        "Exact copies of training rows", f"{copies:,}" if dcr is not None else "n/a",
        help="Holdout rows that repeat a training row: "
        f"{format_metric('exact_copy_share', reference)} (real data repeats itself that often). "
        "The verdict is the audit's copies rule.",
    )  # fmt: skip
    _tile(col_copies, name, "audit_copies")
    for part, message in result.errors.items():
        app_state.show_error(message, what=f"{part} of {name}")

st.subheader("Authenticity per row (from the fidelity section)")
if fidelity:
    st.plotly_chart(fidelity_fig.authenticity_histogram(fidelity), key="privacy_authenticity")
else:
    st.info("The fidelity section did not run, so no authenticity statistic is available.")

st.subheader("Membership inference: ROC curves")
for tab, (name, result) in zip(st.tabs(tab_labels), privacy.items(), strict=True):
    with tab:
        if not result.membership_inference:
            st.info(markdown_text(result.skipped.get("membership_inference", "No attack ran.")))
            continue
        for attack in result.membership_inference:
            if attack.error is not None:
                what = f"The {fig.attack_label(attack.attack)} attack"
                app_state.show_error(attack.error, what=what)
        # one under the other, full width: every attack's legend line fits at 1280 px
        st.plotly_chart(fig.roc_overlay(result), key=f"privacy_roc_{name}")
        st.plotly_chart(fig.roc_overlay(result, log_scale=True), key=f"privacy_roc_log_{name}")
st.dataframe(
    _shown(fig.attack_table(privacy, policy=policy)), hide_index=True, key="privacy_attacks"
)

st.subheader("Empirical ε lower bound")
for name, result in privacy.items():
    bound = result.epsilon_lower_bound
    if bound is None or bound.attack is None:
        st.markdown(f"**{markdown_text(name)}**: no bound (no attack ran).")
        continue
    st.markdown(
        f"**{markdown_text(name)}**: ε ≥ {bound.epsilon:.2f} (black-box, loose) from the "
        f"{fig.attack_label(bound.attack)} attack at "
        f"{bound.confidence:.0%} confidence (TPR {bound.tpr:.3f}, FPR {bound.fpr:.4f} on "
        f"{bound.n_members:,} + {bound.n_nonmembers:,} held-out rows). It bounds ε from below "
        "only: a small value does not show that the data is private."
    )

st.subheader("Singling out, linkability, inference (WP29)")
st.caption(
    "Article 29 Working Party opinion 05/2014, measured as anonymeter does (Giomi et al. 2023): "
    "each attack runs on training rows, on holdout rows (control) and as a random guess; risk "
    "= (attack - control) / (1 - control), 0 = nothing learned about training people."
)
wp29 = fig.wp29_table(privacy)
if len(wp29):
    st.dataframe(_shown(wp29), hide_index=True, key="privacy_wp29")
else:
    # skip reasons may quote column names: shown as text
    reasons = sorted({r.skipped.get("wp29", "no result") for r in privacy.values()})
    st.info(markdown_text("Not measured: " + "; ".join(reasons)))

st.subheader("Most exposed training records")
st.caption(
    "Training rows the attacks single out most confidently (p-value = share of non-members "
    "scoring at least as high). Numbers are shown as decile intervals and rare levels masked."
)
for tab, (name, result) in zip(st.tabs(tab_labels), privacy.items(), strict=True):
    with tab:
        st.dataframe(
            _shown(fig.vulnerable_table(result)), hide_index=True, key=f"privacy_vuln_{name}"
        )

st.subheader("Distance to closest record")
st.plotly_chart(fig.dcr_histogram(privacy), key="privacy_dcr")

st.subheader("Disclosure risk")
inference = fig.attribute_inference_table(privacy)
if len(inference):
    st.dataframe(_shown(inference), hide_index=True, key="privacy_attribute")
else:
    reasons = {r.skipped.get("attribute_inference") for r in privacy.values()} - {None}
    why = "; ".join(sorted(reasons)) or "not run"
    st.info(markdown_text(f"Attribute inference: {why}."))
diversity = fig.l_diversity_table(privacy)
if len(diversity):
    st.markdown(
        f"ℓ-diversity of regression-tree leaves (ℓ = {options.l_diversity}): share of synthetic "
        "values in leaves with fewer than ℓ distinct values; lower is better."
    )
    st.dataframe(_shown(diversity), hide_index=True, key="privacy_ldiversity")

if review.kind != "table":
    st.stop()
st.subheader("Closest pairs: the riskiest synthetic rows beside their nearest training row")
with_dcr = [name for name, r in privacy.items() if r.dcr is not None]
if not with_dcr:
    st.stop()
left, right = st.columns([2, 1])
name = left.selectbox("Candidate", with_dcr, key="privacy_pairs_candidate")
n_pairs = right.slider("Pairs", 1, 50, 10, key="privacy_pairs_n")
samples = getattr(fidelity.get(name), "samples", None)
authentic = getattr(samples, "authentic", None)
rows = fig.riskiest_rows(privacy[name], authentic=authentic, n=n_pairs)
st.caption("Order: exact copies first, then rows the fidelity section judged unauthentic, then "
           "the smallest distance. Highlighted cells are equal in both rows.")  # fmt: skip
st.dataframe(
    fig.closest_pairs(review.synthetic[name].frame, review.real.frame, privacy[name], rows=rows,
                      columns=review.schema.analysed),
    hide_index=True, key="privacy_pairs",
)  # fmt: skip
