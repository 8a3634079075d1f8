"""Audit & export: choose what to remove, preview it, confirm, compare before/after, sign, download.

Widgets and layout only. Every release — the audit, the curated set, its re-evaluation with every
section, the re-attack and the decision — comes from the one pipeline
(``synthreview.release.pipeline.release_candidate``) through ``app_state``; this page displays it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import app_state
from synthreview.errors import ConfigError
from synthreview.figures.audit import (
    before_after_bars,
    fidelity_curves,
    reattack_reading_table,
    rule_overlap_bars,
)
from synthreview.figures.privacy import row_pair
from synthreview.figures.release_tables import controls_frame, reattack_frame, rule_labels
from synthreview.figures.text import markdown_text
from synthreview.judgement.verdicts import DECISION_STYLE, OUTCOMES
from synthreview.record import server
from synthreview.record.countersign import countersigned_decisions
from synthreview.record.opened_state import meeting_field_key
from synthreview.record.session import RAW_ROWS_KEY
from synthreview.record.signoff_state import SIGNING_PASSPHRASE_KEY, SIGNING_UPLOAD_KEY
from synthreview.record.store import record_files
from synthreview.release.bundle import zip_bytes


def _close_dialog() -> None:
    app_state.session().set_audit_dialog(False)


@st.dialog("Confirm curation", on_dismiss=_close_dialog)
def confirm_dialog(name: str, thresholds, n_removed: int, n_rows: int) -> None:
    """Ask before the curated file is produced; the flag keeps it open across reruns."""
    st.text(
        f"Remove {n_removed} of {n_rows} rows from {name} and release the remaining "
        f"{n_rows - n_removed} rows exactly as they are in the input file?"
    )
    with st.container(key="audit_confirm_thresholds"):
        st.markdown("\n".join(f"- {line}" for line in _threshold_lines(thresholds, review.kind)))
    ok, cancel = st.columns(2)
    if ok.button("Confirm", key="audit_confirm", type="primary"):
        app_state.session().confirm_curation(name, thresholds)
        # computed now, before the rerun draws the sidebar: nothing is left for Run review
        app_state.confirmed_release(name)
        app_state.session().set_audit_dialog(False)
        st.rerun()
    if cancel.button("Cancel", key="audit_cancel"):
        _close_dialog()
        st.rerun()


def _open_dialog() -> None:
    app_state.session().set_audit_dialog(True)


def _threshold_lines(thresholds, kind: str) -> list[str]:
    """The confirmed thresholds in words and numbers (never JSON, never ``None``)."""

    def on(flag: bool) -> str:
        return "yes" if flag else "no"

    mode = {
        "quantile": f"holdout quantile: each rule removes {thresholds.level:.1%} of a fresh "
        "real sample",
        "strict": f"strict: Benjamini–Hochberg at a false-discovery rate of {thresholds.fdr:g}",
        "paper": "the paper's rules (authenticity ratio ≤ 1, α = 0.95)",
    }[thresholds.mode]
    if not thresholds.use_alpha:
        support = "off"
    elif thresholds.fixed_alpha is not None:
        support = f"fixed α = {thresholds.fixed_alpha:.2f}"
    else:
        support = f"α calibrated on the holdout (it loses {thresholds.alpha_loss:.1%} of it)"
    lines = [
        f"Rule thresholds: {mode}",
        f"Keep rows inside the α-support: {support}",
        f"Drop rows too close to one training row (authenticity): "
        f"{on(thresholds.drop_unauthentic)}",
        f"Drop exact copies of training rows: {on(thresholds.drop_exact_copies)}",
        f"Drop copies of holdout records: {on(thresholds.drop_holdout_copies)}",
        f"Drop rows closer to training than fresh real rows are: {on(thresholds.drop_too_close)}",
    ]
    if kind == "traces":
        lines += [
            f"Drop implausible traces: {on(thresholds.drop_implausible)}",
            f"Drop windows of memorised subjects: {on(thresholds.drop_memorised_subjects)}",
        ]
    return lines


def _decision_line(decision) -> None:
    with st.container(key="audit_decision"):
        st.markdown(f"**{DECISION_STYLE[decision.outcome].label}**")
        st.text(decision.reason)


def _preview_tiles(audit) -> None:
    """What each rule removes beside what it would remove of fresh real data."""
    preview = audit.preview()
    for col, rule in zip(st.columns(len(preview)), preview, strict=True):
        col.metric(rule.label, rule.flagged, help=f"{rule.only} by this rule alone")
        if rule.real_loss is not None:
            col.caption(
                f"removes {rule.share:.1%}; a fresh real sample would lose {rule.real_loss:.1%}"
            )
            if rule.too_lossy:
                col.warning(f"This rule would remove {rule.real_loss:.1%} of real data.")
        elif rule.rule != "any" and rule.active:
            col.caption(f"removes {rule.share:.1%}; no holdout reference")
        elif rule.rule != "any":
            col.caption("switched off: removes nothing")


def _copy_counts(counts) -> None:
    """The copies counted once, as the Overview, the Privacy page and the record count them."""
    with st.container(key="audit_copy_counts"):
        st.markdown(markdown_text(counts.sentence()))
        with st.expander("Copies, counted once"):
            st.table(pd.DataFrame(counts.rows(), columns=["rows", "count"]).set_index("rows"))


def _curation_evidence(name: str, release) -> None:
    """Verdicts as submitted and after curation, the curves before and after, the re-attack."""
    left, right = st.columns(2)
    left.metric("Verdict as submitted", release.verdicts.overall.upper())
    failing = [r.rule for r in release.verdicts.failed]
    if failing:
        left.text(
            "Failed as submitted: "
            + ", ".join(rule_labels(app_state.session().get_policy(), failing))
        )
    curated = release.curated
    if curated is not None:
        right.metric("Verdict after curation", curated.verdicts.overall.upper())
        failing = [r.rule for r in curated.verdicts.failed]
        missing = [r.rule for r in curated.verdicts.incomplete]
        if failing:
            right.text(
                "Failed after curation: "
                + ", ".join(rule_labels(app_state.session().get_policy(), failing))
            )
        if missing:
            right.text(
                "Not computed after curation: "
                + ", ".join(rule_labels(app_state.session().get_policy(), missing))
            )
        # a set curation provably cannot fix is cut but not evaluated (no curated report):
        # its content states per section why, as the record files it
        errors = (curated.report.candidates[name].errors if curated.report is not None
                  else curated.content.get("errors") or {})  # fmt: skip
        for section, message in errors.items():
            app_state.show_error(message, what=f"{section.capitalize()} after curation")
    if curated is None or curated.report is None:
        return
    st.subheader("Before and after curation")
    pair = {name: release.content, f"{name} (curated)": curated.content}
    # one under the other at full width: side by side each plot was squeezed below 300 px
    st.plotly_chart(fidelity_curves(pair, curve="alpha"), key="audit_alpha_curve")
    st.plotly_chart(fidelity_curves(pair, curve="beta"), key="audit_beta_curve")
    st.plotly_chart(
        before_after_bars({name: release.content}, {name: curated.content}),
        key="audit_before_after",
    )
    st.subheader("Re-attack after curation")
    st.caption(
        "Every membership-inference attack on the curated set, same attack set and seed. A "
        "curated set fails when an attack got worse beyond its before-curation 95 % interval "
        "(Ganev & De Cristofaro, arXiv 2312.05114)."
    )
    if curated.reattack is not None and curated.reattack.attacks:
        # a static table whose cells wrap: it fits 1280 px (one row per attack)
        st.table(reattack_reading_table(reattack_frame(curated.reattack)))
    elif curated.reattack is not None:
        st.text(curated.reattack.note)


def _drill_down(name: str, flagged: pd.DataFrame, review) -> None:
    """A removed row beside its nearest training row (masked unless raw rows are allowed)."""
    with st.expander("Why was a row removed? (row beside its nearest training row)"):
        pick = st.selectbox("Removed row (position in the file)", flagged["row"].tolist(),
                            key="audit_drill_row")  # fmt: skip
        entry = flagged.loc[flagged["row"] == pick].iloc[0]
        st.text(f"Rules: {entry['reasons']}")
        if entry["top_columns"]:
            st.text(f"Columns that make up most of the distance: {entry['top_columns']}")
        st.checkbox(
            "Show raw training rows",
            value=False,
            key=RAW_ROWS_KEY,
            disabled=app_state.session().presentation_mode(),
            help="Off by default and always off in presentation mode: the rows are shown "
            "masked like the most exposed records (decile intervals, rare levels masked).",
        )
        raw = app_state.session().show_raw_rows()  # never while presenting, whatever the box says
        nearest = entry["nearest_train_row"]
        st.dataframe(
            row_pair(
                review.synthetic[name].frame, review.real.frame, row=int(pick),
                train_row=int(nearest) if pd.notna(nearest) else None,
                columns=review.schema.analysed, numeric=review.schema.numeric, raw=raw,
            ),
            key="audit_drill_table",
        )  # fmt: skip


def _preview(audit) -> None:
    """The audit's preview: its tiles, the copies counted once and the rules' overlaps (a live
    audit under the chosen thresholds, or an opened record's as it was made)."""
    st.subheader("Preview")
    _preview_tiles(audit)
    _copy_counts(audit.counts)
    overlaps = audit.overlaps()
    if overlaps.empty:
        st.info("These thresholds remove no row.")
    else:
        st.plotly_chart(rule_overlap_bars(overlaps), key="audit_overlaps")


def _signing_key_panel() -> None:
    """The session's Ed25519 private key: uploaded, read in memory, never written to disk."""
    key_col, pass_col = st.columns(2)
    key_col.file_uploader(
        "Private key (synthreview.key)",
        key=SIGNING_UPLOAD_KEY,
        on_change=app_state.session().load_signing_key,
    )
    pass_col.text_input(
        "Passphrase (when the key has one)",
        type="password",
        key=SIGNING_PASSPHRASE_KEY,
        on_change=app_state.session().load_signing_key,
    )
    if app_state.session().signing_error():
        st.error(markdown_text(app_state.session().signing_error()))


def _meeting_signoff(record, name: str, slot: int) -> None:
    """The meeting's countersignature of one candidate of an opened, verified record."""
    st.subheader("The meeting's sign-off")
    tool = record.decisions[name]
    st.caption(
        "The meeting's decision on this candidate, countersigned with the meeting's private key: "
        "a signed statement over the record's own (by digest) and this sign-off, written beside "
        "the record on the server and appended to the server's register. A decision that "
        "differs from the record's needs a reason."
    )
    signed = countersigned_decisions(record).get(name)
    if signed is not None:
        with st.container(key="audit_countersigned"):
            st.text(
                f"Countersigned: {DECISION_STYLE[signed['decision']].label} by "
                + ", ".join(f"{p['name']} ({p['role']})" for p in signed["reviewers"])
                + f" at {signed['time']}"
                + (f"; reason: {signed['reason']}" if signed.get("reason") else "")
            )
    verified = record.verified
    if verified is None or not verified.ok:
        with st.container(key="audit_countersign_refused"):
            st.error(
                "This record is NOT VERIFIED, so it cannot be countersigned or registered as "
                "verified: open it with the signer's public key (or a key in the server's trust "
                "folder), with every file as signed."
            )
        return
    done = app_state.session().meeting_done(slot)  # before the fields: it blanks them
    if done is not None:
        with st.container(key="audit_countersign_done"):
            st.success(markdown_text(done))
    _signing_key_panel()
    keyid = app_state.session().signing_key_id()
    st.text(
        f"Meeting's key: {keyid}" if keyid else "Load the meeting's private key to countersign."
    )
    # keys per candidate: what is typed or chosen for one candidate never shows under another,
    # and the meeting's decision stays blank until the meeting chooses it
    with st.container(border=True, key=f"audit_meeting_{slot}"):
        reviewers = st.text_area(
            "Reviewers, one per line as 'name: role'",
            key=meeting_field_key("reviewers", slot),
            placeholder="Ann Lee: chair\nBo Chen: privacy officer",
        )
        choice = st.selectbox(
            f"Decision taken by the meeting (the record: {DECISION_STYLE[tool.outcome].label})",
            list(OUTCOMES),
            index=None,
            format_func=lambda o: DECISION_STYLE[o].label,
            placeholder="Choose the meeting's decision",
            key=meeting_field_key("decision", slot),
        )
        reason = st.text_area(
            "Reason (required when it differs from the record's)",
            key=meeting_field_key("reason", slot),
        )
        submitted = st.button(
            "Countersign and register",
            key=f"audit_meeting_countersign_{slot}",
            disabled=keyid is None,
            type="primary",
        )
    if submitted:
        try:
            app_state.session().countersign_meeting(
                name, slot, reviewers=reviewers, decision=choice, reason=reason
            )
        except ConfigError as exc:
            with st.container(key="audit_countersign_error"):
                st.error(markdown_text(f"Not countersigned: {exc}"))
            return
        st.rerun()  # every page's banner and this candidate's line show the countersignature
    # the register is the server's setting (docs/security.md): shown, never typed in a browser
    st.text(f"Register: {server.register_shown()}")


def _record_page(record) -> None:
    """The Audit page of an opened record: its audits, curations and controls, nothing
    recomputed; controls that would change numbers are shown disabled."""
    st.header("Audit & export")
    st.caption(
        "The audit of an opened review record: every table, threshold, curation, re-attack and "
        "control as the record holds them. It is evidence, not a draft: nothing is recomputed, "
        "and the controls that would change its numbers are disabled."
    )
    candidates = record.candidates
    name = st.selectbox("Candidate", candidates,
                        index=app_state.session().audit_candidate_index(candidates),
                        key="audit_candidate")  # fmt: skip
    app_state.session().remember_audit_candidate(name)
    release = record.releases[name]
    for section, message in record.report.candidates[name].errors.items():
        app_state.show_error(message, what=f"{section.capitalize()} of {name}")
    st.subheader("Decision")
    st.caption("As the record states it (report.json), the same the Overview shows.")
    _decision_line(record.decisions[name])
    audit = release.audit
    if audit is None:
        st.info("This candidate has neither fidelity nor privacy results: it was not audited.")
    else:
        st.subheader("Rules")
        with st.container(key="audit_record_thresholds"):
            st.markdown(
                "\n".join(
                    f"- {markdown_text(line)}"
                    for line in _threshold_lines(audit.thresholds, record.report.kind)
                )
            )
        st.button(
            "Curate…",
            key="audit_curate",
            disabled=True,
            help="An opened record is evidence: its curation is shown as it was made.",
        )
        _preview(audit)
        curation = release.curated.curation if release.curated is not None else None
        removed = curation.removed_table() if curation is not None else None
        if removed is None:
            removed = audit.audit.loc[audit.audit["removed"].to_numpy(dtype=bool)]
        with st.expander(f"Removed rows ({len(removed)})", expanded=False):
            st.dataframe(app_state.shown_frame(removed), key="audit_removed_table")
        with st.expander(f"Audit table (every row, {len(audit.audit)})", expanded=False):
            st.dataframe(app_state.shown_frame(audit.audit), key="audit_record_table")
        flagged = audit.audit.loc[audit.audit["removed"].to_numpy(dtype=bool)]
        # the rows themselves only from loaded files whose sha256 are the record's own
        rows = app_state.session().record_rows()
        if rows is None:
            app_state.inputs_needed("A removed row beside its nearest training row")
        elif len(flagged):
            _drill_down(name, flagged, rows)
    _curation_evidence(name, release)
    st.subheader("Planted-leak controls")
    if record.controls is not None:
        st.dataframe(controls_frame(record.controls), key="audit_controls_table")
    else:
        st.text("The record holds no planted-leak controls.")
    st.button(
        "Run the planted-leak controls",
        key="audit_run_controls",
        disabled=True,
        help="An opened record is evidence: re-run with its inputs for new controls.",
    )
    _record_downloads(record)
    _meeting_signoff(record, name, candidates.index(name))


def _record_downloads(record) -> None:
    """The opened record's own files, byte for byte as stored (signature and countersignatures
    in the ZIP, so it verifies wherever it is opened)."""
    st.subheader("Downloads")
    st.caption("The record's files as stored; nothing is rebuilt.")
    files = record_files(record)
    cols = st.columns(3)
    for col, (label, path, mime) in zip(cols, (
        ("report.html", "report.html", "text/html"),
        ("report.json", "report.json", "application/json"),
    ), strict=False):  # fmt: skip
        col.download_button(label, data=files[path], file_name=path, mime=mime,
                            key=f"audit_record_download_{path}", on_click="ignore")  # fmt: skip
    cols[2].download_button("Everything (ZIP)", data=zip_bytes(files), file_name="record.zip",
                            mime="application/zip", key="audit_record_download_zip",
                            on_click="ignore")  # fmt: skip


review = app_state.require_review_or_record()
if app_state.session().opened_record() is not None:
    _record_page(app_state.session().opened_record())
    st.stop()
st.header("Audit & export")
st.caption(
    "Model auditing (Alaa et al. 2022, §1 and §5.1): judge every synthetic row and release the "
    "rest unchanged. Every per-row rule is calibrated on the holdout: a row is removed when it "
    "lies beyond what fresh real rows show, so each rule's loss on real data is stated beside "
    "what it removes."
)
summary = app_state.get_summary()
report = summary.report
audited = [n for n, c in report.candidates.items() if c.fidelity is not None or c.privacy]
if not audited:
    st.warning("No candidate has fidelity or privacy results to audit.")
    for name, candidate in report.candidates.items():
        for section, message in candidate.errors.items():
            app_state.show_error(message, what=f"{section.capitalize()} of {name}")
    st.stop()

# the choice outlives the widget (Streamlit drops a widget's state on another page)
name = st.selectbox("Candidate", audited, index=app_state.session().audit_candidate_index(audited),
                    key="audit_candidate")  # fmt: skip
app_state.session().remember_audit_candidate(name)
result = report.candidates[name]
for section, message in result.errors.items():
    app_state.show_error(message, what=f"{section.capitalize()} of {name}")

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
thresholds = app_state.session().audit_thresholds(
    mode=mode,
    level=float(level),
    fdr=float(fdr),
    alpha=float(alpha) if fixed else None,
    use_alpha=use_alpha,
    drop_unauthentic=drop_unauthentic,
    drop_too_close=drop_close,
    drop_exact_copies=drop_exact,
)
audit = app_state.session().preview_audit(name, thresholds)

_preview(audit)

n_rows = len(audit.audit)
flagged = audit.audit.loc[audit.audit["removed"].to_numpy(dtype=bool)]
with st.expander(f"Removed rows ({len(flagged)})", expanded=False):
    st.dataframe(app_state.session().removed_preview(name, audit), key="audit_removed_table")
if len(flagged):
    _drill_down(name, flagged, review)

st.button(
    "Curate…",
    key="audit_curate",
    type="primary",
    on_click=_open_dialog,
    disabled=len(flagged) == n_rows,
    help="Opens a confirmation; nothing is produced before you confirm.",
)
if app_state.session().audit_dialog_open():
    confirm_dialog(name, thresholds, len(flagged), n_rows)

confirmed = app_state.session().confirmed_curations().get(name)
if confirmed is not None and confirmed[0] == thresholds:
    release = app_state.confirmed_release(name)
else:
    # the record can be filed without a confirmation: it states the decision as it stands
    # (a candidate that fails as submitted was curated by the run under the default rules)
    st.caption(
        "The curated files under these thresholds appear once they are confirmed (Curate…); "
        "the decision and the record below stand as the review computed them."
    )
    release = app_state.session().candidate_release(name)
if release is None:
    st.warning(
        "The decisions are out of date; press Run review (sidebar). Nothing is judged or "
        "exported on a mix of old and new numbers."
    )
    app_state.run_button(key="run_review_audit")
    st.stop()

st.subheader("Decision")
st.caption("The same decision the Overview shows and the record files.")
_decision_line(release.decision)
_curation_evidence(name, release)

st.subheader("Planted-leak controls")
st.caption(
    "The same review on a fresh-like sample of real rows (half of the holdout) with 0 %, 1 % "
    "and 5 % training rows planted: which rules and attacks see them at this sample size."
)
if app_state.session().controls_possible():
    run_controls = st.button("Run the planted-leak controls", key="audit_run_controls")
    controls = app_state.controls_for(thresholds, compute=run_controls)
    if controls is not None:
        st.dataframe(controls_frame(controls), key="audit_controls_table")
else:
    st.text("Needs a table review with a holdout of at least 20 rows.")

st.subheader("Sign-off")
st.caption(
    "The meeting's decision, filed in report.json and report.html beside the tool's. A decision "
    "that differs from the tool's needs a reason."
)
signed = app_state.session().signoffs().get(name)
# keys per candidate: a value typed or chosen for one candidate never shows under another, and
# the meeting's decision stays blank until the meeting chooses it
slot = audited.index(name)
with st.form(f"audit_signoff_form_{slot}"):
    reviewer = st.text_input("Reviewer", value=signed.reviewer if signed else "",
                             key=f"audit_signoff_reviewer_{slot}")  # fmt: skip
    choice = st.selectbox(
        "Decision taken by the meeting",
        list(OUTCOMES),
        index=list(OUTCOMES).index(signed.decision) if signed else None,
        format_func=lambda o: DECISION_STYLE[o].label,
        placeholder="Choose the meeting's decision",
        key=f"audit_signoff_decision_{slot}",
    )
    reason = st.text_area(
        "Reason (required when it differs from the tool's)",
        value=signed.reason if signed else "",
        key=f"audit_signoff_reason_{slot}",
    )
    comment = st.text_area("Comment", value=signed.comment if signed else "",
                           key=f"audit_signoff_comment_{slot}")  # fmt: skip
    if st.form_submit_button("Record sign-off"):
        problem = app_state.session().record_signoff(
            name, reviewer=reviewer, decision=choice, reason=reason, comment=comment
        )
        if problem:
            st.error(markdown_text(problem))
        else:
            signed = app_state.session().signoffs().get(name)
if signed is not None:
    st.text(f"Signed off by {signed.reviewer} at {signed.time:%Y-%m-%d %H:%M} UTC: "
            f"{DECISION_STYLE[signed.decision].label}")  # fmt: skip

st.subheader("Exceptions (waivers)")
st.caption(
    "An exception to one rule, with its justification, requested by the holder of the signing "
    "key (Downloads below). It is filed as requested and changes no decision until a second "
    "reviewer approves it with another key (`synthreview approve`); upload that approval and "
    "the approver's public key here."
)
with st.form("audit_waiver_form"):
    waived_rule = st.selectbox(
        "Rule", list(app_state.session().get_policy().rules), key="audit_waiver_rule"
    )
    justification = st.text_area("Justification", key="audit_waiver_reason")
    if st.form_submit_button("Request the waiver"):
        problem = app_state.session().request_waiver(waived_rule, justification)
        if problem:
            st.error(markdown_text(problem))
left, right = st.columns(2)
approval = left.file_uploader("Approval (synthreview approve)", key="audit_waiver_approval")
approver = right.file_uploader("Approver's public key", key="audit_waiver_approver")
if (
    approval is not None
    and approver is not None
    and st.button("Add the approval", key="audit_waiver_add")
):
    problem = app_state.session().add_approval(approval.getvalue(), approver.getvalue())
    if problem:
        st.error(markdown_text(problem))
waivers = app_state.session().session_waivers()
for waiver in waivers:
    st.text(
        f"{', '.join(waiver.candidates)}: {waiver.rule} {waiver.status} ({waiver.reason}; "
        f"requested by key {waiver.requester[:16]} at {waiver.requested_at}"
        + (
            f", approved by key {waiver.approver[:16]} at {waiver.approved_at})"
            if waiver.approver
            else ", not approved: changes nothing)"
        )
    )

st.subheader("Downloads")
refusal = app_state.session().record_refusal()
if refusal is not None:
    st.warning(markdown_text(f"Exports are refused: {refusal}."))
    st.stop()
with st.container(border=True, key="audit_signing"):
    st.markdown("**Sign the record** (optional)")
    st.caption(
        "An Ed25519 private key from `synthreview keygen`. It is read in memory and kept in this "
        "session only (the app never writes it to disk). Once it is loaded every download comes "
        "from the signed files, and the ZIP holds the signed statement release.intoto.jsonl "
        "(check it on the History page or with `synthreview verify`)."
    )
    _signing_key_panel()
    keyid = app_state.session().signing_key_id()
    if keyid is None:
        st.caption("The downloads are not signed.")
    else:
        st.text(f"Signed with key {keyid}")
        st.button(
            "Stop signing",
            key="audit_signing_forget",
            on_click=app_state.session().forget_signing_key,
        )
key = app_state.session().signing_key()
build = app_state.session().record_builder(thresholds, key=key)
folder = app_state.session().record_folders()[name]
downloads = []
if release.curated is not None and release.decision.ships:  # only what may ship is shipped
    downloads += [
        ("Curated CSV", f"{folder}/curated.csv", "text/csv", "audit_download_csv"),
        ("Curated Parquet", f"{folder}/curated.parquet", "application/octet-stream",
         "audit_download_parquet"),
    ]  # fmt: skip
elif release.curated is not None:
    st.caption(
        f"No curated file: the decision is {DECISION_STYLE[release.decision.outcome].label}, so "
        "the record keeps this candidate's audit evidence only."
    )
if release.curated is not None:
    downloads.append(("Removed rows (CSV)", f"{folder}/removed.csv", "text/csv",
                      "audit_download_removed"))  # fmt: skip
if release.audit is not None:
    downloads.append(("Audit table (CSV)", f"{folder}/audit.csv", "text/csv",
                      "audit_download_audit"))  # fmt: skip
downloads += [
    ("report.json", "report.json", "application/json", "audit_download_report_json"),
    ("report.html", "report.html", "text/html", "audit_download_report_html"),
    ("manifest.json", "manifest.json", "application/json", "audit_download_manifest"),
]  # fmt: skip
if key is not None:
    downloads.append(("Signature (release.intoto.jsonl)", app_state.session().signature_file_name(),
                      "application/jsonl", "audit_download_envelope"))  # fmt: skip
cols = st.columns(4)
for i, (label, path, mime, download_key) in enumerate(downloads):
    cols[i % 4].download_button(
        label,
        data=lambda path=path: build()[path],
        file_name=path.replace("/", "_"),
        mime=mime,
        key=download_key,
        on_click="ignore",
    )
cols[len(downloads) % 4].download_button(
    "Everything (ZIP)",
    data=lambda: app_state.session().zip_record(build()),
    file_name="release.zip",
    mime="application/zip",
    key="audit_download_zip",
    on_click="ignore",
)
st.caption(app_state.session().escaping_statement())

with st.container(border=True, key="audit_register"):
    st.markdown("**Record in the register** (optional)")
    st.caption(
        "Appends every candidate's decision, the sign-off and every rule verdict to the decision "
        "register (the History page lists them and which rules changed since the previous "
        "review of a candidate). Records are never changed; recording the same record twice "
        "adds nothing."
    )
    # the register is the server's setting (docs/security.md): shown, never typed in a browser
    st.text(f"Register: {server.register_shown()}")
    st.caption(
        "Set by whoever runs this dashboard (SYNTHREVIEW_REGISTER or .streamlit/synthreview.toml)."
    )
    if st.button("Record in the register", key="audit_register_record"):
        try:
            recorded = server.record_in_register(build(), key=key)
        except ConfigError as exc:
            st.error(markdown_text(f"The register was not updated: {exc}"))
        else:
            signed_by = f"signed with key {keyid[:16]}" if keyid else "unsigned"
            st.success(
                f"Recorded {len(recorded.added)} decisions ({signed_by}); "
                f"{len(recorded.already)} were already there."
            )
