"""Audit & export: choose what to remove, preview it, confirm, compare before/after, download."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures.audit import before_after_bars, fidelity_curves, rule_overlap_bars
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.release import bundle, export
from synthreview.release.audit import (
    Thresholds,
    audit_table,
    default_thresholds,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.curation import curate, evaluate_curated

POLICY_KEY = "release_policy"  # shared with the Overview page, which lets the reviewer upload one
DIALOG_FLAG = "audit_dialog_open"
CONFIRMED_KEY = "audit_confirmed"  # {candidate: (thresholds, timestamp)} confirmed for release
AFTER_KEY = "_audit_after"  # {(review digest, candidate, thresholds): after-curation Report}


def _close_dialog() -> None:
    st.session_state[DIALOG_FLAG] = False


@st.dialog("Confirm curation", on_dismiss=_close_dialog)
def confirm_dialog(name: str, thresholds: Thresholds, n_removed: int, n_rows: int) -> None:
    """Ask before the curated file is produced; the flag keeps it open across reruns."""
    st.write(
        f"Remove **{n_removed}** of {n_rows} rows from **{name}** and release the remaining "
        f"**{n_rows - n_removed}** rows exactly as they are in the input file?"
    )
    st.json(thresholds.to_dict())
    ok, cancel = st.columns(2)
    if ok.button("Confirm", key="audit_confirm", type="primary"):
        st.session_state.setdefault(CONFIRMED_KEY, {})[name] = (thresholds, datetime.now(UTC))
        st.session_state[DIALOG_FLAG] = False
        st.rerun()
    if cancel.button("Cancel", key="audit_cancel"):
        _close_dialog()
        st.rerun()


def _open_dialog() -> None:
    st.session_state[DIALOG_FLAG] = True


review = app_state.require_review()
st.header("Audit & export")
st.caption(
    "Model auditing (Alaa et al. 2022, §1 and §5.1): judge every synthetic row, remove rows "
    "outside the α-support of the real data, rows flagged as copies and rows too close to a "
    "training record, and release the rest unchanged."
)
report = app_state.get_report(("fidelity", "privacy"))
audited = [n for n, c in report.candidates.items() if c.fidelity is not None or c.privacy]
if not audited:
    st.warning("No candidate has fidelity or privacy results to audit; see the errors below.")
    for name, candidate in report.candidates.items():
        for section, message in candidate.errors.items():
            app_state.show_error(message, what=f"{section.capitalize()} of {name}")
    st.stop()

name = st.selectbox("Candidate", audited, key="audit_candidate")
result = report.candidates[name]
for section, message in result.errors.items():
    app_state.show_error(message, what=f"{section.capitalize()} of {name}")
suggested = default_thresholds(result.privacy)

st.subheader("Thresholds")
c1, c2, c3 = st.columns(3)
use_alpha = c1.checkbox("Keep rows inside the α-support", True, key="audit_use_alpha")
alpha = c1.slider(
    "α",
    0.50,
    1.00,
    0.95,
    0.01,
    key="audit_alpha",
    disabled=not use_alpha,
    help="A row is removed when the smallest α-support containing it is larger.",
)
drop_unauthentic = c2.checkbox("Drop unauthentic rows", True, key="audit_drop_unauthentic")
drop_exact = c2.checkbox("Drop exact copies of training rows", True, key="audit_drop_exact")
use_distance = c3.checkbox(
    "Drop rows too close to a training row",
    suggested.min_train_distance is not None,
    key="audit_use_distance",
)
min_distance = c3.number_input(
    "Minimum distance to the closest training row",
    min_value=0.0,
    value=float(suggested.min_train_distance or 0.0),
    format="%.4f",
    key="audit_min_distance",
    disabled=not use_distance,
    help="Default: the 1st percentile of holdout-to-training distances.",
)
thresholds = Thresholds(
    alpha=float(alpha) if use_alpha else None,
    drop_unauthentic=drop_unauthentic,
    min_train_distance=float(min_distance) if use_distance else None,
    drop_exact_copies=drop_exact,
)
audit = audit_table(result.fidelity, result.privacy, thresholds)
reference = holdout_audit(result.fidelity, result.privacy, thresholds)
summary = rule_summary(audit, reference)

st.subheader("Preview")
cols = st.columns(len(summary))
for col, (_, row) in zip(cols, summary.iterrows(), strict=True):
    col.metric(row["label"], int(row["flagged"]), help=f"{int(row['only'])} by this rule alone")
    if row["reference_share"] == row["reference_share"]:  # not NaN: a holdout to compare with
        col.caption(
            f"{row['share']:.1%} of rows; a fresh real sample: {row['reference_share']:.1%}"
        )
overlaps = rule_overlaps(audit)
if overlaps.empty:
    st.info("These thresholds remove no row.")
else:
    st.plotly_chart(rule_overlap_bars(overlaps), key="audit_overlaps")

curation = curate(review.synthetic[name], audit)
with st.expander(f"Removed rows ({len(curation.removed_rows)})", expanded=False):
    st.dataframe(curation.removed_table(), key="audit_removed_table")

st.button(
    "Curate…",
    key="audit_curate",
    type="primary",
    on_click=_open_dialog,
    disabled=len(curation.kept_rows) == 0,
    help="Opens a confirmation; nothing is produced before you confirm.",
)
if st.session_state.get(DIALOG_FLAG):
    confirm_dialog(name, thresholds, len(curation.removed_rows), curation.n_input)

confirmed = st.session_state.get(CONFIRMED_KEY, {}).get(name)
if confirmed is None or confirmed[0] != thresholds:
    st.caption("Downloads appear once the current thresholds are confirmed.")
    st.stop()
moment = confirmed[1]

policy = st.session_state.get(POLICY_KEY) or load_policy()
content = report.to_dict()
after_report = None
if st.checkbox("Re-evaluate the curated set (before/after)", True, key="audit_reevaluate"):
    cache = st.session_state.setdefault(AFTER_KEY, {})
    key = (app_state.review_digest(review), name, thresholds, report.sections)
    if key not in cache:
        with st.spinner("Re-evaluating the curated set…"):
            cache[key] = evaluate_curated(
                review,
                {name: curation},
                context=report.context,
                sections=report.sections,
                options=report.options,
                seed=report.seed,
            )
    after_report = cache[key]
    after = after_report.to_dict()["candidates"][name]
    for section, message in after_report.candidates[name].errors.items():
        app_state.show_error(message, what=f"{section.capitalize()} after curation")
    st.subheader("Before and after curation")
    left, right = st.columns(2)
    pair = {name: content["candidates"][name], f"{name} (curated)": after}
    left.plotly_chart(fidelity_curves(pair, curve="alpha"), key="audit_alpha_curve")
    right.plotly_chart(fidelity_curves(pair, curve="beta"), key="audit_beta_curve")
    st.plotly_chart(
        before_after_bars({name: content["candidates"][name]}, {name: after}),
        key="audit_before_after",
    )
    attacks = pd.DataFrame(
        {
            stage: {
                a["attack"]: a.get("auc")
                for a in (c.get("privacy") or {}).get("membership_inference", [])
            }
            for stage, c in (("before", content["candidates"][name]), ("after", after))
        }
    )
    if not attacks.empty:
        st.caption("Membership-inference ROC AUC per attack (0.5 = attacker guesses)")
        st.dataframe(attacks, key="audit_privacy_table")
    verdict_after = apply_policy(policy, after)
    st.caption(f"Policy verdict after curation: **{verdict_after.overall}**")

st.subheader("Downloads")
after_dicts = {name: after_report.to_dict()["candidates"][name]} if after_report else {}


def release_files() -> dict[str, bytes]:
    """Every release file, built on click (runs off the script thread: no st.* calls here)."""
    return bundle.build_release(
        content,
        audits={name: audit},
        curations={name: curation},
        verdicts={n: apply_policy(policy, c) for n, c in content["candidates"].items()},
        policy=policy,
        after=after_dicts,
        after_verdicts={n: apply_policy(policy, c) for n, c in after_dicts.items()},
        schema=review.schema,
        timestamp=moment,
    )


folder = export.safe_name(name)
downloads = [
    (
        "Curated CSV",
        "curated.csv",
        "text/csv",
        "audit_download_csv",
        lambda: export.curated_csv_bytes(curation, schema=review.schema),
    ),
    (
        "Curated Parquet",
        "curated.parquet",
        "application/octet-stream",
        "audit_download_parquet",
        lambda: export.curated_parquet_bytes(curation),
    ),
    (
        "Audit table (CSV)",
        "audit.csv",
        "text/csv",
        "audit_download_audit",
        lambda: export.audit_csv_bytes(audit),
    ),
    (
        "Removed rows (CSV)",
        "removed.csv",
        "text/csv",
        "audit_download_removed",
        lambda: export.removed_csv_bytes(curation, schema=review.schema),
    ),
    (
        "report.json",
        "report.json",
        "application/json",
        "audit_download_report_json",
        lambda: release_files()["report.json"],
    ),
    (
        "report.html",
        "report.html",
        "text/html",
        "audit_download_report_html",
        lambda: release_files()["report.html"],
    ),
    (
        "manifest.json",
        "manifest.json",
        "application/json",
        "audit_download_manifest",
        lambda: release_files()["manifest.json"],
    ),
    (
        "Everything (ZIP)",
        "release.zip",
        "application/zip",
        "audit_download_zip",
        lambda: bundle.zip_bytes(release_files()),
    ),
]
cols = st.columns(4)
for i, (label, filename, mime, key, build) in enumerate(downloads):
    cols[i % 4].download_button(
        label,
        data=build,
        file_name=f"{folder}_{filename}",
        mime=mime,
        key=key,
        on_click="ignore",
    )
st.caption(export.ESCAPE_STATEMENT)
