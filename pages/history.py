"""History: verify a signed review, earlier decisions from the register, and which rules changed."""

from __future__ import annotations

import streamlit as st

import app_state
from synthreview.errors import ConfigError, DataError
from synthreview.figures.explain import reading_table
from synthreview.figures.text import markdown_text
from synthreview.record import server
from synthreview.record.uploads import verify_review_zip
from synthreview.release.register import changes_frame, history_frame

#: the register's columns a meeting reads first: decision, meeting decision, sign-off, signature
FIRST_COLUMNS = (
    "#", "candidate", "decision", "meeting decision", "signed off by", "signature", "time",
)  # fmt: skip


def _verify_panel() -> None:
    """Upload a review ZIP and a public key; the signature and every file checked in memory."""
    st.subheader("Verify a signed review")
    st.caption(
        "A review folder as a ZIP (the Audit page's *Everything (ZIP)*, or a zipped folder of "
        "`synthreview review --sign`) and the signer's public key (`synthreview.pub`). The files "
        "are read in memory, never extracted: the signature must verify with the key, every "
        "file must have the sha256 the signed record lists, and no file may be missing or "
        "added. The same check as `synthreview verify`."
    )
    left, right = st.columns(2)
    archive = left.file_uploader("Review folder (ZIP)", type=["zip"], key="history_verify_zip")
    public = right.file_uploader("Public key (synthreview.pub)", key="history_verify_key")
    if archive is None or public is None:
        st.caption("Upload both to verify.")
        return
    try:
        result = verify_review_zip(archive.getvalue(), public.getvalue())
    except ConfigError as exc:
        st.error(markdown_text(str(exc)))
        return
    with st.container(key="history_verify_result"):
        if result.ok:
            st.success(f"Verified: signed with key {result.keyid[:16]}, every file as recorded.")
            st.text(f"{archive.name}: review id {result.review_id}")
        else:
            st.error(f"Not verified: {len(result.problems)} problem(s).")
            st.text(f"{archive.name}, checked with key {result.keyid[:16]}:")
            st.code("\n".join(result.problems), language=None)


def _chain_panel() -> None:
    """The register's hash chain recomputed on request (``synthreview history --check``)."""
    if not st.button("Check the chain", key="history_check_chain"):
        return
    try:
        check = server.register_chain_check()
    except ConfigError as exc:
        st.error(markdown_text(str(exc)))
        return
    with st.container(key="history_chain_result"):
        if check.ok:
            st.success(f"Chain intact: {check.records} records, each matching its hash.")
            st.text(f"head hash {check.head} (keep a copy elsewhere to catch a rewritten end)")
        else:
            st.error(f"Chain NOT intact at record #{check.broken_at}.")
            st.text(check.problem or "")  # register text (candidate names) shown as text
        for migration in check.migrations:
            st.caption(
                f"{migration.records} records made before the chain were chained on "
                f"{migration.migrated_at}: attested unchanged from then on, not before."
            )


def _evidence_panel(records) -> None:
    """Open a register record's review folder again: every page then shows that record."""
    if not records:
        return
    st.markdown("**Open the evidence**")
    st.caption(
        "Opens the review folder the register states for a record (never a path typed here), "
        "when it is still there and holds the record the register names (same signed "
        "statement; for the meeting's records, its countersignature). Every page then shows "
        "that record, verified on opening."
    )
    by_seq = {r.seq: r for r in records}
    left, right = st.columns([3, 1])
    seq = left.selectbox(
        "Record",
        sorted(by_seq, reverse=True),
        format_func=lambda n: (
            f"#{n} {by_seq[n].candidate}: {by_seq[n].outcome} ({by_seq[n].generated_at})"
        ),
        key="history_evidence_row",
    )
    if right.button("Open the evidence", key="history_open_evidence"):
        try:
            app_state.session().open_register_row(int(seq))
        except (ConfigError, DataError) as exc:
            with st.container(key="history_evidence_error"):
                st.error(markdown_text(str(exc)))
            return
        st.rerun()  # every page's banner (drawn above) now names the opened record
    opened = app_state.session().opened_record()
    if opened is not None and opened.location == by_seq[seq].location:
        with st.container(key="history_evidence_opened"):
            st.text(f"Open now: the evidence of record #{seq} ({opened.location}).")
            st.page_link("pages/overview.py", label="See its decisions on the Overview")


def _register_panel() -> None:
    """The register's records, a candidate or input filter, and the rule verdicts that changed."""
    st.subheader("Decision register")
    st.caption(
        "Every review recorded from the Audit page or with `synthreview register` (a signed "
        "folder is verified first), oldest decisions included: a generator's regression shows "
        "as a rule whose verdict changed since the previous review of the same candidate name. "
        "Records are never changed; a later review is a new record that follows the earlier one."
    )
    # the register is the server's setting, read only here (docs/security.md): never typed
    st.text(f"Register: {server.register_shown()} (read only)")
    try:
        records = server.register_history()
    except ConfigError as exc:
        st.info(markdown_text(str(exc)))
        return
    _chain_panel()
    names = sorted({r.candidate for r in records})
    left, right = st.columns(2)
    with left:
        candidate = st.selectbox("Candidate", ["all candidates", *names], key="history_candidate")
    with right:
        digest = st.text_input(
            "Input sha256",
            key="history_inputs",
            help="Only reviews with an input file of this sha256 (report.json inputs)",
        ).strip()
    chosen = None if candidate == "all candidates" else candidate
    try:
        shown = server.register_history(candidate=chosen, inputs_sha256=digest or None)
    except ConfigError as exc:
        st.error(markdown_text(str(exc)))
        return
    st.markdown(f"**{len(shown)} decisions**")
    frame = history_frame(shown).fillna(
        {"meeting decision": "not signed off", "signed off by": "nobody"}
    )
    # what a meeting looks for first, in a static table whose cells wrap (every column on
    # screen at 1280 px); the rest of the register one click away
    with st.container(key="history_table"):
        st.table(reading_table(frame[list(FIRST_COLUMNS)].set_index("#")))
    with st.expander("Every register column"):
        rest = ["#", *(c for c in frame.columns if c not in FIRST_COLUMNS)]
        st.table(reading_table(frame[rest].set_index("#")))
    _evidence_panel(shown)
    st.markdown("**Rule verdicts that changed since the previous review**")
    changes = changes_frame(records, candidate=chosen)
    if changes.empty:
        st.caption("No rule verdict changed between two reviews of the same candidate.")
        return
    with st.container(key="history_changed"):
        # one line per pair of reviews first: the table's cells are drawn, not text
        for (name, before, after), rows in changes.groupby(
            ["candidate", "from #", "to #"], sort=False
        ):
            moved = "; ".join(
                f"{r.rule} {r.before or 'not judged'} → {r.after or 'not judged'}"
                for r in rows.itertuples()
            )
            st.text(f"{name} (#{before} → #{after}): {moved}")
        st.dataframe(changes, hide_index=True, key="history_changes")


app_state.page_start()
st.header("History")
_register_panel()
_verify_panel()
