"""Audit & export: choose what to remove, preview it, confirm, compare before/after, download."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import streamlit as st

import app_state
from synthreview.figures.audit import before_after_bars, fidelity_curves, rule_overlap_bars
from synthreview.release import bundle, export
from synthreview.release.audit import (
    Thresholds,
    audit_table,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.controls import control_table, planted_controls
from synthreview.release.curation import curate, evaluate_curated
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.html import REAL_LOSS_WARNING
from synthreview.release.reattack import compare_attacks
from synthreview.release.verdicts import copy_excess, judge_audited

# session keys live in app_state (confirmations, caches of after-curation reports, copy
# evidence and planted-leak controls)


def _close_dialog() -> None:
    app_state.set_audit_dialog(False)


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
        app_state.confirmed_curations()[name] = (thresholds, datetime.now(UTC))
        app_state.set_audit_dialog(False)
        st.rerun()
    if cancel.button("Cancel", key="audit_cancel"):
        _close_dialog()
        st.rerun()


def _open_dialog() -> None:
    app_state.set_audit_dialog(True)


review = app_state.require_review()
st.header("Audit & export")
st.caption(
    "Model auditing (Alaa et al. 2022, §1 and §5.1): judge every synthetic row and release the "
    "rest unchanged. Every per-row rule is calibrated on the holdout: a row is removed when it "
    "lies beyond what fresh real rows show, so each rule's loss on real data is stated beside "
    "what it removes."
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
copies_cache = app_state.audit_copies()
copies_key = (app_state.review_digest(review), report.seed, name)
if copies_key not in copies_cache:
    copies_cache[copies_key] = copy_evidence_for(report, name)
copies = copies_cache[copies_key]

st.subheader("Rules")
c1, c2, c3 = st.columns(3)
mode = c1.selectbox(
    "Rule thresholds",
    ["quantile", "strict", "paper"],
    format_func={
        "quantile": "holdout quantile (default)",
        "strict": "strict: Benjamini–Hochberg",
        "paper": "the paper's rules (ratio ≤ 1, α = 0.95)",
    }.get,
    key="audit_mode",
)
level = c1.select_slider(
    "Holdout quantile (expected loss of real data per rule)",
    [0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1],
    value=0.01,
    format_func=lambda v: f"{v:.1%}",
    key="audit_level",
    disabled=mode != "quantile",
)
fdr = c1.number_input(
    "False-discovery rate q", 0.001, 0.5, 0.05, 0.01, key="audit_fdr", disabled=mode != "strict"
)
use_alpha = c2.checkbox("Keep rows inside the α-support", True, key="audit_use_alpha")
fixed = c2.checkbox("Fixed α instead of the holdout's", mode == "paper", key="audit_fixed")
alpha = c2.slider(
    "α",
    0.50,
    1.00,
    0.95,
    0.01,
    key="audit_alpha",
    disabled=not (use_alpha and fixed),
    help="With a fixed α a row is removed when the smallest α-support containing it is larger.",
)
drop_unauthentic = c3.checkbox(
    "Drop rows too close to one training row (authenticity ratio)",
    True,
    key="audit_drop_unauthentic",
)
drop_exact = c3.checkbox("Drop exact copies of training rows", True, key="audit_drop_exact")
drop_close = c3.checkbox(
    "Drop rows closer to training than fresh real rows are (distance)",
    False,
    key="audit_use_distance",
)
thresholds = Thresholds(
    mode=mode,
    level=float(level),
    fdr=float(fdr),
    alpha=float(alpha) if fixed else None,
    use_alpha=use_alpha,
    drop_unauthentic=drop_unauthentic,
    drop_too_close=drop_close,
    drop_exact_copies=drop_exact,
)
audit = audit_table(result.fidelity, result.privacy, thresholds, copies=copies)
reference = holdout_audit(result.fidelity, result.privacy, thresholds, copies=copies)
summary = rule_summary(audit, reference)

st.subheader("Preview")
cols = st.columns(len(summary))
for col, (rule, row) in zip(cols, summary.iterrows(), strict=True):
    col.metric(row["label"], int(row["flagged"]), help=f"{int(row['only'])} by this rule alone")
    real = [x for x in (row["expected_fpr"], row.get("reference_share")) if x == x]
    if real:  # not NaN: a holdout to compare with
        col.caption(f"removes {row['share']:.1%}; a fresh real sample would lose {max(real):.1%}")
        if max(real) > REAL_LOSS_WARNING and row["active"]:
            col.warning(f"This rule would remove {max(real):.1%} of real data.")
    elif rule != "any" and row["active"]:
        col.caption(f"removes {row['share']:.1%}; no holdout reference")
overlaps = rule_overlaps(audit)
if overlaps.empty:
    st.info("These thresholds remove no row.")
else:
    st.plotly_chart(rule_overlap_bars(overlaps), key="audit_overlaps")

curation = curate(review.synthetic[name], audit)
with st.expander(f"Removed rows ({len(curation.removed_rows)})", expanded=False):
    st.dataframe(curation.removed_table(), key="audit_removed_table")
flagged = audit.loc[audit["removed"].to_numpy(dtype=bool)]
if len(flagged):
    with st.expander("Why was a row removed? (row beside its nearest training row)"):
        pick = st.selectbox("Removed row (position in the file)", flagged["row"].tolist(),
                            key="audit_drill_row")  # fmt: skip
        entry = flagged.loc[flagged["row"] == pick].iloc[0]
        st.text(f"Rules: {entry['reasons']}")
        if entry["top_columns"]:
            st.text(f"Columns that make up most of the distance: {entry['top_columns']}")
        pair = {"synthetic row": review.synthetic[name].raw_rows([int(pick)]).iloc[0]}
        if pd.notna(entry["nearest_train_row"]):
            j = int(entry["nearest_train_row"])
            pair[f"nearest training row ({j})"] = review.real.raw_rows([j]).iloc[0]
        st.dataframe(pd.DataFrame(pair), key="audit_drill_table")

st.button(
    "Curate…",
    key="audit_curate",
    type="primary",
    on_click=_open_dialog,
    disabled=len(curation.kept_rows) == 0,
    help="Opens a confirmation; nothing is produced before you confirm.",
)
if app_state.audit_dialog_open():
    confirm_dialog(name, thresholds, len(curation.removed_rows), curation.n_input)

confirmed = app_state.confirmed_curations().get(name)
if confirmed is None or confirmed[0] != thresholds:
    st.caption("Downloads appear once the current thresholds are confirmed.")
    st.stop()
moment = confirmed[1]

policy = app_state.get_policy()
content = report.to_dict()
after_report = None
reattacks: dict = {}
after_copies_excess: dict = {}  # the curated set's copy evidence for the audit rules
if st.checkbox("Re-evaluate the curated set (before/after)", True, key="audit_reevaluate"):
    cache = app_state.curated_reports()
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
    reattack = compare_attacks(content["candidates"][name], after)
    st.subheader("Re-attack after curation")
    st.caption(
        "Every membership-inference attack on the curated set, same attack set and seed. A "
        "curated set fails when an attack got worse beyond its before-curation 95 % interval "
        "(Ganev & De Cristofaro, arXiv 2312.05114)."
    )
    if reattack.attacks:
        st.dataframe(
            pd.DataFrame([a.to_dict() for a in reattack.attacks]).set_index("attack"),
            key="audit_privacy_table",
        )
    else:
        st.text(reattack.note)
    reattacks = {name: reattack}
    if len(curation.kept_rows):
        after_copies = copy_evidence_for(after_report, name)
        after_result = after_report.candidates[name]
        curated_audit = audit_table(after_result.fidelity, after_result.privacy, thresholds,
                                    copies=after_copies)  # fmt: skip
        curated_ref = holdout_audit(after_result.fidelity, after_result.privacy, thresholds,
                                    copies=after_copies)  # fmt: skip
        after_copies_excess[name] = copy_excess(curated_audit, curated_ref)


before_verdict = judge_audited(policy, content["candidates"][name],
                               copies=copy_excess(audit, reference))  # fmt: skip
st.subheader("Verdicts")
left, right = st.columns(2)
left.metric("Verdict as submitted", before_verdict.overall.upper())
if after_report is not None:
    after_verdict = judge_audited(policy, after, copies=after_copies_excess.get(name),
                                  reattack=reattacks.get(name))  # fmt: skip
    right.metric("Verdict after curation", after_verdict.overall.upper())
    failing = [r.rule for r in after_verdict.failed]
    if failing:
        right.text("Failed after curation: " + ", ".join(failing))
failing = [r.rule for r in before_verdict.failed]
if failing:
    left.text("Failed as submitted: " + ", ".join(failing))

st.subheader("Planted-leak controls")
st.caption(
    "The same review on a fresh-like sample of real rows (half of the holdout) with 0 %, 1 % "
    "and 5 % training rows planted: which rules and attacks see them at this sample size."
)
controls_cache = app_state.audit_controls()
controls_key = (app_state.review_digest(review), report.seed, thresholds, report.sections)
if review.kind == "table" and review.holdout is not None and review.holdout.n_rows >= 20:
    if st.button("Run the planted-leak controls", key="audit_run_controls"):
        with st.spinner("Reviewing the planted-leak controls…"):
            controls_cache[controls_key] = planted_controls(
                review, report, policy=policy, thresholds=thresholds
            )
else:
    st.text("Needs a table review with a holdout of at least 20 rows.")
controls = controls_cache.get(controls_key)
if controls is not None:
    st.dataframe(control_table(controls.to_dict()), key="audit_controls_table")

st.subheader("Downloads")
after_dicts = {name: after_report.to_dict()["candidates"][name]} if after_report else {}


def release_files() -> dict[str, bytes]:
    """Every release file, built on click (runs off the script thread: no st.* calls here)."""
    return bundle.build_release(
        content,
        audits={name: audit},
        curations={name: curation},
        verdicts={name: before_verdict},
        policy=policy,
        after=after_dicts,
        after_verdicts={
            n: judge_audited(
                policy, c, copies=after_copies_excess.get(n), reattack=reattacks.get(n)
            )
            for n, c in after_dicts.items()
        },
        references={name: reference},
        reattacks=reattacks,
        controls=controls,
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
