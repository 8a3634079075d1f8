"""Data page: load the demo or the reviewer's files and show what was loaded and what is wrong."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

import app_state
from synthreview import demo
from synthreview.errors import ConfigError, DataError
from synthreview.figures.explain import MISSING
from synthreview.figures.text import markdown_text
from synthreview.io.parquet import uploaded_folder, uploaded_folders
from synthreview.io.persons import person_key_notices, with_person
from synthreview.io.schema import KINDS
from synthreview.io.tables import align, missing_rates, read_table
from synthreview.io.traces import align_traces, load_traces
from synthreview.judgement.context import ACCESS_MODELS
from synthreview.options import validate_options
from synthreview.record import server
from synthreview.record.session import SEED_KEY, demo_rows
from synthreview.sampling import DEFAULT_SAMPLE_ROWS, MIN_SAMPLE_ROWS, plan_sentence

session = app_state.session()  # this browser session's review

SOURCES = {
    "demo_tables": "Demo: UCI Adult census tables",
    "demo_traces": "Demo: glucose (CGM) day traces",
    "upload_tables": "Upload tables (CSV, TSV, Parquet)",
    "upload_traces": "Upload glucose traces (CSV, TSV, Parquet)",
}

app_state.page_start()
st.header("Data")
st.caption(
    "Load the real (training) table, a holdout sample of the same population that the "
    "generator never saw, and one or more synthetic candidates. Everything stays in this browser "
    "session."
)


def share_text(share: float) -> str:
    """A share as a reader reads it: ``7.2 %``, ``0`` when none, ``n/a`` when unknown (no float
    noise such as ``0.07166666666666667``)."""
    if share != share:  # NaN
        return MISSING
    return "0" if share == 0 else f"{100 * share:.1f} %" if share >= 0.001 else "< 0.1 %"


# the control shows what is loaded when the page opens (a widget's state ends with its page)
source = st.radio(
    "Source", list(SOURCES), format_func=SOURCES.get, key="data_source", horizontal=True,
    index=list(SOURCES).index(session.loaded_source() or "demo_tables"),
)  # fmt: skip
SEED_LABEL = "Seed (every random step of the review uses it)"
if session.locked():
    # an opened record's seed: shown, not changed (Re-run with these inputs keeps it)
    st.number_input(SEED_LABEL, value=session.seed(), disabled=True, key="record_seed")
else:
    st.number_input(SEED_LABEL, min_value=0, step=1, key=SEED_KEY)


def _load(make_review, source: str) -> None:
    try:
        review = make_review()
    except DataError as exc:
        session.set_load_error(str(exc))
        return
    session.set_load_error(None)
    session.set_review(review)
    session.set_loaded_source(source)
    # the sidebar was drawn before this click's load: draw the page again so its status
    # describes the data loaded now ("not computed"), not the previous review's run
    st.rerun()


with st.expander("Open a stored review (a review folder or its ZIP)", expanded=False):
    # evidence, not a draft: every page then reads the record, nothing is recomputed
    # the folders the operator put in the server's reviews folder: picked, never a typed path
    # (a path from a browser would read folders anywhere the server can; docs/security.md)
    offered = server.stored_reviews()
    where = st.selectbox(
        "Review folder on this server", ["", *offered], key="open_record_folder",
        format_func=lambda name: markdown_text(name) if name else "(none)",
        help="The review folders in the folder this server's operator set (SYNTHREVIEW_REVIEWS "
        "or reviews = ... in .streamlit/synthreview.toml).",
    )  # fmt: skip
    if not offered:
        st.caption(
            "This server offers no stored review folders (its operator sets SYNTHREVIEW_REVIEWS; "
            "`synthreview show FOLDER` opens one too). Upload a review ZIP instead."
        )
    zipped = st.file_uploader("or a review ZIP", type=["zip"], key="open_record_zip")
    public = st.file_uploader(
        "Signer's public key (optional; without it the record shows as NOT VERIFIED)",
        key="open_record_key",
    )
    if st.button("Open the review", key="open_record", disabled=not (where or zipped)):
        try:
            verify_with = public.getvalue() if public is not None else None
            if zipped is not None:
                session.open_record(zipped.getvalue(), key=verify_with)
            else:
                session.open_stored_review(where, key=verify_with)
        except (DataError, ConfigError) as exc:
            st.error(markdown_text(str(exc)))
        else:
            st.switch_page("pages/overview.py")

if session.opened_record() is not None:
    with st.container(key="record_inputs_panel"):
        st.subheader("The opened record's input files")
        st.caption(
            "The record holds every number and decision of its review but none of its rows. "
            "Views that draw rows (the PCA, closest pairs, a column's values, trace heatmaps) "
            "accept only these files, byte for byte (equal sha256): load them below. Re-run "
            "with these inputs then computes a new review of them."
        )
        # fixed widths that add up to less than the main column at 1280x720 (789 px): sized
        # to their content, the 64-digit sha256 made the table scroll sideways (978 px); the
        # cell keeps the whole digest (shown whole when the cell is opened, and downloaded)
        st.dataframe(
            session.record_inputs_frame(),
            hide_index=True,
            key="record_inputs",
            column_config={
                "name": st.column_config.TextColumn(width=150),
                "role": st.column_config.TextColumn(width=80),
                "rows": st.column_config.NumberColumn(width=65),
                "columns": st.column_config.NumberColumn(width=65),
                "sha256": st.column_config.TextColumn(
                    width=260, help="The file's whole sha256: open the cell to read it all."
                ),
                "loaded (same sha256)": st.column_config.TextColumn(width=140),
            },
        )
        st.button("Close the record", key="close_record", on_click=session.close_record)

if session.demo_autoload_pending():
    # a fresh session opens on the bundled demo so the dashboard shows something at once
    with st.spinner("Loading the bundled demo (UCI Adult)…"):
        _load(
            lambda: demo.tables(seed=session.seed(), n_train=demo_rows()),
            "demo_tables",
        )

if source in ("demo_tables", "demo_traces"):
    if st.button("Load the demo", key="load_demo", type="primary"):
        with st.spinner("Preparing the demo data…"):
            if source == "demo_tables":
                _load(
                    lambda: demo.tables(seed=session.seed(), n_train=demo_rows()),
                    source,
                )
            else:
                _load(lambda: demo.traces(seed=session.seed()), source)
else:
    is_traces = source == "upload_traces"
    kinds = ["csv", "tsv", "txt", "parquet"]
    as_folders = st.checkbox(
        "Each table is a folder of Parquet partitions (as dask or Spark write them)",
        key="folder_uploads",
        help="Pick a folder for each table; add one folder per synthetic candidate. Each folder "
        "is read as the single Parquet file holding its partitions' rows, under the digest the "
        "command line records for it.",
    )
    col_real, col_hold, col_syn = st.columns(3)
    if as_folders:
        # every file of a folder is sent (no type filter): a folder holding other files is
        # refused naming them, as the command line refuses it
        real_file = col_real.file_uploader(
            "Real (training): a folder", accept_multiple_files="directory", key="real_folder"
        )
        holdout_file = col_hold.file_uploader(
            "Holdout (optional): a folder", accept_multiple_files="directory", key="holdout_folder"
        )
        synthetic_files = col_syn.file_uploader(
            "Synthetic candidates: one folder each",
            accept_multiple_files="directory",
            key="synthetic_folders",
        )
    else:
        real_file = col_real.file_uploader("Real (training)", type=kinds, key="real_upload")
        holdout_file = col_hold.file_uploader(
            "Holdout (optional)", type=kinds, key="holdout_upload"
        )
        synthetic_files = col_syn.file_uploader(
            "Synthetic candidates", type=kinds, accept_multiple_files=True, key="synthetic_upload"
        )
    if is_traces:
        c1, c2 = st.columns(2)
        max_gap = c1.number_input("Fill gaps up to (minutes)", 0, 240, 30, step=5, key="max_gap")
        max_missing = c2.slider(
            "Drop days with more missing than", 0.0, 1.0, 0.2, key="max_missing"
        )
    if st.button(
        "Load files",
        key="load_files",
        type="primary",
        disabled=not real_file or not synthetic_files,
    ):

        def make():
            if as_folders:

                def sent(files):  # a browser names each file by its path from the folder picked
                    return [(f.name, f.getvalue()) for f in files]

                real = uploaded_folder(sent(real_file), what="real (training) upload")
                holdout = (
                    uploaded_folder(sent(holdout_file), what="holdout upload")
                    if holdout_file
                    else None
                )
                synthetic = uploaded_folders(
                    sent(synthetic_files), what="synthetic candidates upload"
                )
            else:
                real, holdout, synthetic = real_file, holdout_file, synthetic_files
            if is_traces:
                kwargs = {"max_gap_minutes": int(max_gap), "max_missing_share": float(max_missing)}
                real_traces = load_traces(real, name="real", **kwargs)
                holdout_traces = load_traces(holdout, name="holdout", **kwargs) if holdout else None
                # each candidate is named after its file; align_traces makes repeated names unique
                candidates = [load_traces(f, **kwargs) for f in synthetic]
                return align_traces(real_traces, candidates, holdout=holdout_traces)
            real_table = read_table(real, role="real")
            holdout_table = read_table(holdout, role="holdout") if holdout else None
            tables = [read_table(f, role="synthetic") for f in synthetic]
            session.set_loaded_tables((real_table, holdout_table, tables))
            # the uploaded files as sent: curated rows are copied from them byte for byte (a
            # folder's rows are written from their cells, as the command line writes them)
            session.set_candidate_sources(
                [] if as_folders else [f.getvalue() for f in synthetic_files]
            )
            return align(real_table, tables, holdout=holdout_table)

        with st.spinner("Reading and validating…"):
            _load(make, source)
    elif not real_file or not synthetic_files:
        st.info(
            "Upload at least the real table and one synthetic candidate, then press Load files."
        )

if session.load_error():
    # the message quotes file and column names: never render them as Markdown
    st.error(markdown_text(session.load_error()), icon=":material/error:")


review = session.get_review()
# an opened record is evidence: the choices that made its numbers are shown with its values,
# disabled (Re-run with these inputs computes a new review with them)
locked = session.locked()
if review is None and not locked:
    st.stop()


def _key(name: str) -> str:
    """A control's key: an opened record's disabled copy has its own, so a value chosen before
    the record was opened is never shown as the record's, nor the record's kept after it closes."""
    return f"record_{name}" if locked else name


if review is not None:
    st.success(
        f"Review loaded: {review.kind}, {len(review.candidates)} synthetic candidate(s): "
        + markdown_text(", ".join(review.candidates))
    )
    # an opened record is shown: the loaded files are its inputs, not a review to run
    running = not locked and session.status()
    if running and "current" not in session.status().values():
        # the button is drawn right here: the sidebar may be hidden (presentation mode, a
        # narrow window), so the words name no other place
        st.info("Next: press **Run review** below to compute every section once.")
        app_state.run_button(key="run_review_data")
    tables = [
        review.real,
        *([review.holdout] if review.holdout is not None else []),
        *review.synthetic.values(),
    ]
    st.subheader("What was loaded")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "name": t.name,
                    "role": t.role,
                    "rows": t.n_rows,
                    "columns": t.frame.shape[1],
                    "format": t.source_format,
                    "encoding": t.encoding or "",
                    "sha256": t.sha256[:16] + "…",
                }
                for t in tables
            ]
        ),
        hide_index=True,
        key="loaded_tables",
    )
if locked:
    st.info(
        "The choices below are the opened record's: they made its numbers, so they are shown "
        "and cannot be changed. **Re-run with these inputs** (above, once its input files are "
        "loaded) computes a new review with them; close the record to review loaded files with "
        "other choices."
    )


def _schema_section(review) -> None:
    st.subheader("Schema")
    if locked:
        st.caption(
            "The scored columns and their kinds, as the record states them; identifier, datetime "
            "and constant columns are carried but not scored, so not listed."
        )
        frame = session.record_schema_frame()
        if frame is None:
            st.caption("The record states no column kinds (its fidelity section was not computed).")
        else:
            st.data_editor(frame, key=_key("schema_editor"), hide_index=True, disabled=True)
        st.button("Apply schema", key=_key("apply_schema"), disabled=True)
        return
    st.caption(
        "Inferred on the real table. Change a kind and press Apply to re-validate; "
        "identifier, datetime and constant columns are carried but not scored."
    )
    schema_frame = pd.DataFrame(
        {
            "column": review.schema.columns,
            "kind": [review.schema.kinds[c] for c in review.schema.columns],
        }
    )
    edited = st.data_editor(
        schema_frame,
        key="schema_editor",
        hide_index=True,
        disabled=["column"],
        column_config={
            "kind": st.column_config.SelectboxColumn("kind", options=list(KINDS), required=True)
        },
    )
    if st.button("Apply schema", key="apply_schema"):
        overrides = dict(zip(edited["column"], edited["kind"], strict=True))
        schema = review.schema.with_kinds(overrides)
        _load(
            lambda: align(
                review.real, list(review.synthetic.values()), holdout=review.holdout, schema=schema
            ),
            session.loaded_source() or source,  # the same data, from where it came
        )
        st.rerun()


def _person_section(review) -> None:
    st.subheader("Person column")
    current = session.get_options().person
    if current is None and not locked:  # a panel loaded without its person column named (#34)
        for notice in person_key_notices(review):
            st.warning(markdown_text(notice.message), icon=":material/group:")
    columns = ([current] if current else []) if locked else review.schema.columns
    people = ["(each row is a person)", *columns]
    chosen = st.selectbox(
        "Column naming each row's person (several rows per person: membership is then judged "
        "by person too, and the column is not a feature)",
        people,
        index=people.index(current) if current in people else 0,
        key=_key("person_column"),
        disabled=locked,
    )
    if st.button("Group rows by person", key=_key("apply_person"), disabled=locked):
        person = None if chosen == people[0] else chosen
        try:
            grouped = with_person(review, person) if person is not None else review
        except (DataError, ConfigError) as exc:
            st.error(markdown_text(str(exc)), icon=":material/error:")
        else:
            options = session.get_options()
            session.set_review(grouped)
            session.set_options(replace(options, person=person))
            st.rerun()


def _sampling_section(review) -> None:
    st.subheader("Rows for the statistics")
    options = session.get_options()
    every_row = st.checkbox(
        "Estimate every statistic on every row (exact; slow above ~200,000 rows)",
        value=options.sample_rows is None,
        key=_key("sample_every_row"),
        disabled=locked,
    )
    wanted = st.number_input(
        "Rows per table for the population statistics (larger tables are sampled at random)",
        min_value=MIN_SAMPLE_ROWS,
        value=options.sample_rows or DEFAULT_SAMPLE_ROWS,
        step=10_000,
        disabled=every_row or locked,
        key=_key("sample_rows"),
    )
    if locked:
        st.caption(markdown_text(session.record_sampling_sentence()))
        return
    chosen_rows = None if every_row else int(wanted)
    st.caption(markdown_text(plan_sentence(review, chosen_rows, person=options.person)))
    if chosen_rows != options.sample_rows and st.button("Apply", key="apply_sample_rows"):
        session.set_options(replace(options, sample_rows=chosen_rows))
        st.rerun()


def _disclosure_section(review) -> None:
    st.subheader("Disclosure checks")
    options = session.get_options()
    st.caption(
        "Quasi-identifiers are columns an intruder may know from elsewhere (age, sex, area, "
        "occupation): the privacy section measures QI replay, k-anonymity and each synthetic "
        "row's re-identification risk on them (rule `qi_replay`). The target and the columns "
        "named here are tested for an answer key (rule `label_leak`); declared constraints are "
        "rules every row obeys (rule `constraint_violations`). Nothing chosen: not judged."
    )
    if locked:  # the columns the record scored, as it states them, and its own choices
        kinds = session.record_schema_frame()
        kinds = pd.DataFrame(columns=["column", "kind"]) if kinds is None else kinds
        analysed = [*dict.fromkeys([*kinds["column"], *options.quasi_identifiers])]
        categorical = kinds.loc[kinds["kind"] == "categorical", "column"]
        categorical = [*dict.fromkeys([*categorical, *options.label_leak_columns])]
    else:
        analysed, categorical = list(review.schema.analysed), list(review.schema.categorical)
    chosen_qis = st.multiselect(
        "Quasi-identifiers",
        analysed,
        default=[c for c in options.quasi_identifiers if c in analysed],
        key=_key("quasi_identifiers"),
        disabled=locked,
        placeholder="None chosen: not judged" if locked else None,
    )
    chosen_keys = st.multiselect(
        "Columns tested for an answer key (besides the target)",
        categorical,
        default=[c for c in options.label_leak_columns if c in categorical],
        key=_key("label_leak_columns"),
        disabled=locked,
        placeholder="None chosen: only the target is tested" if locked else None,
    )
    constraints_file = st.file_uploader(
        "Declared constraints (TOML: [[range]], [[inequality]], [[formula]], [[allowed]], "
        "[[unique]])",
        type=["toml"],
        key=_key("constraints_upload"),
        disabled=locked,
    )
    drop_constraints = options.constraints is not None and st.checkbox(
        "Remove the declared constraints", key=_key("constraints_clear"), disabled=locked
    )
    if options.constraints is not None:
        st.caption("Constraints declared for this review:")
        st.code(options.constraints, language="toml")
    if st.button("Apply disclosure choices", key=_key("apply_disclosure"), disabled=locked):
        text = None if drop_constraints else options.constraints
        problem = None
        if constraints_file is not None:
            data = constraints_file.getvalue()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                problem = "the constraints file must be UTF-8 text"
        wanted = replace(
            options,
            quasi_identifiers=tuple(chosen_qis),
            label_leak_columns=tuple(chosen_keys),
            constraints=text,
        )
        if problem is None:
            try:
                validate_options(review, wanted)
            except ConfigError as exc:
                problem = str(exc)
        if problem is not None:
            st.error(markdown_text(problem), icon=":material/error:")
        else:
            session.set_options(wanted)
            st.rerun()


if session.review_kind() == "traces":
    if not locked:  # the loaded files, described (a record holds no traces)
        trace_sets = review.traces or {}
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "source": name,
                        "day traces": t.values.shape[0],
                        "steps": t.values.shape[1],
                        "mean filled share": share_text(
                            float(t.meta["filled_share"].mean()) if len(t.meta) else 0.0
                        ),
                        "windows dropped": len(t.dropped),
                    }
                    for name, t in trace_sets.items()
                ]
            ),
            hide_index=True,
            key="trace_summary",
        )
else:
    _schema_section(review)
    _person_section(review)
    _sampling_section(review)
    _disclosure_section(review)
    if not locked:
        st.subheader("Missing values")
        st.caption("Share of empty cells per column, in each table.")
        st.dataframe(missing_rates(review).map(share_text), key="missing_rates")

if not locked:  # an opened record's notices are in its banner
    st.subheader("Validation findings")
    if not review.notices:
        st.write("No problems found.")
    for notice in review.notices:
        # table and column names and the message (which quotes cells) are user text: escaped
        where = f" (column {notice.column})" if notice.column else ""
        text = markdown_text(f"{notice.table}{where}: {notice.message}")
        (st.warning if notice.level == "warning" else st.info)(text)


def _context_form() -> None:
    """The release context: to whom, why, under which access model and threat (issue 37); an
    opened record's own, disabled."""
    st.subheader("Release context")
    current = session.get_context()
    st.caption(
        "To whom the data would go, for what, how they reach it and who might attack it: filed "
        "in the signed record, and the policy judges with its access model's thresholds. "
        "Without a context the review is judged under the strictest thresholds (public)."
    )
    if current is not None:
        st.text(
            f"Given: {current.access} access for {current.recipient}"
            + (f", until {current.expires}" if current.expires else "")
        )
    with st.form(_key("release_context_form")):
        recipient = st.text_input(
            "Recipient",
            value=current.recipient if current else "",
            key=_key("context_recipient"),
            disabled=locked,
        )
        purpose = st.text_input(
            "Purpose",
            value=current.purpose if current else "",
            key=_key("context_purpose"),
            disabled=locked,
        )
        access = st.selectbox(
            "Access model",
            ACCESS_MODELS,
            index=ACCESS_MODELS.index(current.access) if current else 0,
            key=_key("context_access"),
            disabled=locked,
            help="public: anyone; licensed: under a licence; internal: inside the organisation; "
            "secure: a trusted research environment with checked outputs",
        )
        threat = st.text_area(
            "Threat model",
            value=current.threat_model if current else "",
            key=_key("context_threat_model"),
            disabled=locked,
            help="Who might try to re-identify people, with what external data",
        )
        expires = st.text_input(
            "Expires (YYYY-MM-DD, optional)",
            value=(current.expires or "") if current else "",
            key=_key("context_expires"),
            disabled=locked,
        )
        legal = st.text_input(
            "Legal basis (optional)",
            value=(current.legal_basis or "") if current else "",
            key=_key("context_legal_basis"),
            disabled=locked,
        )
        source = st.text_input(
            "Source id for the ledger (optional)",
            value=(current.source or "") if current else "",
            key=_key("context_source"),
            disabled=locked,
        )
        left, right = st.columns(2)
        keep = left.form_submit_button(
            "Keep this context", key=_key("context_keep"), disabled=locked
        )
        clear = right.form_submit_button(
            "Clear the context", key=_key("context_clear"), disabled=locked
        )
    if clear:
        session.set_context(None)
        st.rerun()
    if keep:
        values = {
            "recipient": recipient,
            "purpose": purpose,
            "access": access,
            "threat_model": threat,
            **{
                name: value.strip()
                for name, value in zip(
                    ("expires", "legal_basis", "source"), (expires, legal, source), strict=True
                )
                if value.strip()
            },
        }
        try:
            session.set_context(values)
        except ConfigError as exc:
            st.error(markdown_text(str(exc)))
            return
        st.rerun()


_context_form()
