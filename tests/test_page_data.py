"""AppTest of the entrypoint and the Data page: demo path, upload path, bad uploads."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from synthreview.record.session import REVIEW_KEY, SOURCES_KEY
from synthreview.sampling import DEFAULT_SAMPLE_ROWS

APP = str(Path(__file__).resolve().parents[1] / "app.py")
REAL = b"age,sex,income\n" + b"".join(
    f"{20 + i % 50},{'F' if i % 3 else 'M'},{'>50K' if i % 4 == 0 else '<=50K'}\n".encode()
    for i in range(60)
)
SYNTHETIC = b"sex,age,income\n" + b"".join(
    f"{'M' if i % 2 else 'F'},{25 + i % 40},{'>50K' if i % 5 == 0 else '<=50K'}\n".encode()
    for i in range(40)
)


def _fresh() -> AppTest:
    return AppTest.from_file(APP, default_timeout=180).run()


def test_opens_on_the_bundled_demo():
    at = _fresh()
    assert not at.exception
    review = at.session_state[REVIEW_KEY]
    assert review is not None and review.kind == "table"
    assert "income" in review.schema.columns
    assert any("Review loaded" in s.value for s in at.success)
    # the next step is named where its button is: here, and the sidebar has one too
    (hint,) = [i.value for i in at.info if "Run review" in i.value]
    assert "sidebar" not in hint and "below" in hint
    assert at.main.button(key="run_review_data").label == "Run review"
    assert at.sidebar.button(key="run_review").label == "Run review"
    assert any("not computed" in c.value for c in at.sidebar.caption)
    # numbers as a reader reads them: shares in %, never float noise like 0.07166666666666667
    cells = [str(v) for frame in at.dataframe for v in frame.value.to_numpy().ravel()]
    assert cells and not [c for c in cells if re.fullmatch(r"-?\d+\.\d{5,}", c)]
    assert any(c.endswith(" %") for c in cells)  # the demo has missing workclass cells


def test_upload_path_shows_schema_and_findings():
    at = _fresh()
    at.radio(key="data_source").set_value("upload_tables").run()
    at.file_uploader(key="real_upload").upload("real.csv", REAL, "text/csv").run()
    at.file_uploader(key="synthetic_upload").upload("cand.csv", SYNTHETIC, "text/csv").run()
    at.button(key="load_files").click().run()
    assert not at.exception
    review = at.session_state[REVIEW_KEY]
    assert review.candidates == ["cand"]
    assert review.schema.kinds["age"] == "numeric"
    assert list(review.synthetic["cand"].frame.columns) == ["age", "sex", "income"]
    assert not at.error


def test_mismatched_upload_is_explained_and_keeps_previous_review():
    at = _fresh()
    before = at.session_state[REVIEW_KEY]
    at.radio(key="data_source").set_value("upload_tables").run()
    at.file_uploader(key="real_upload").upload("real.csv", REAL, "text/csv").run()
    bad = b"age,colour\n1,red\n2,blue\n"
    at.file_uploader(key="synthetic_upload").upload("bad.csv", bad, "text/csv").run()
    at.button(key="load_files").click().run()
    assert not at.exception
    assert any("missing columns" in e.value for e in at.error)
    assert at.session_state[REVIEW_KEY] is before


def test_markdown_in_uploaded_text_is_shown_as_text():
    # a column name (or a quoted cell) like ![t](http://host/x.png) would make the reviewer's
    # browser fetch that URL if rendered as Markdown: every notice must carry it escaped
    import pandas as pd

    from synthreview.io.tables import align
    from tests.page_helpers import run_page

    column = "![t](http://host/x.png)"
    real = pd.DataFrame({column: ["a", None, "b", "c"] * 10, "x": range(40)})
    review = align(real, {"cand": real.copy()}, holdout=real.iloc[:20].copy())
    assert any(column in n.message for n in review.notices)
    at = run_page("pages/data.py", review)
    assert not at.exception
    shown = [e.value for kind in ("warning", "info", "caption", "markdown") for e in at.get(kind)]
    assert any(r"\!\[t\]\(http" in text for text in shown)
    assert not any("![t](http" in text for text in shown)


def test_sidebar_describes_the_data_loaded_now():
    """After a run, loading other data turns the sidebar status to "not computed" at once
    (it used to keep "up to date, computed in ..." of the previous review)."""
    at = _fresh()
    at.session_state["_run_note"] = "Review computed in 2 min 41 s."
    at.run()
    at.radio(key="data_source").set_value("upload_tables").run()
    at.file_uploader(key="real_upload").upload("real.csv", REAL, "text/csv").run()
    at.file_uploader(key="synthetic_upload").upload("cand.csv", SYNTHETIC, "text/csv").run()
    at.button(key="load_files").click().run()
    assert not at.exception
    captions = [c.value for c in at.sidebar.caption]
    assert captions and all("computed in" not in c for c in captions), captions
    assert any("not computed" in c for c in captions), captions


def test_rows_for_the_statistics_are_chosen_on_the_data_page():
    """The sample size of the population statistics (ReviewOptions.sample_rows): the page says
    what a run will sample before it runs, and Apply stores the choice in the options."""
    at = _fresh()

    def captions() -> list[str]:  # as the reader sees them (no Markdown escapes, word joiners)
        return [c.value.replace("\\", "").replace("\u2060", "") for c in at.caption]

    default = DEFAULT_SAMPLE_ROWS
    assert at.session_state["_options"].sample_rows == default
    # the demo's tables (5,000 rows) are below the default: every row
    assert any("at most 50,000 rows" in c for c in captions())
    assert not [b for b in at.button if b.key == "apply_sample_rows"]
    at.number_input(key="sample_rows").set_value(1000).run()
    (plan,) = [c for c in captions() if "random sample of 1,000 rows" in c]
    assert "real, holdout" in plan and "every synthetic row" in plan
    at.button(key="apply_sample_rows").click().run()
    assert not at.exception
    assert at.session_state["_options"].sample_rows == 1000
    at.checkbox(key="sample_every_row").check().run()
    assert any("on every row (exact" in c for c in captions())
    at.button(key="apply_sample_rows").click().run()
    assert at.session_state["_options"].sample_rows is None


def _parquet_parts(csv: bytes, folder: str, parts: int = 2) -> list[tuple[str, bytes, str]]:
    """``csv``'s rows as ``parts`` Parquet files, named as a browser names a folder's files."""
    import io

    import numpy as np
    import pandas as pd

    frame = pd.read_csv(io.BytesIO(csv))
    sent = []
    for i, rows in enumerate(np.array_split(np.arange(len(frame)), parts)):
        buf = io.BytesIO()
        frame.iloc[rows].to_parquet(buf, index=False)
        sent.append((f"{folder}/part.{i}.parquet", buf.getvalue(), "application/octet-stream"))
    return sent


def test_folders_of_parquet_partitions_are_uploaded_one_folder_per_candidate():
    at = _fresh()
    at.radio(key="data_source").set_value("upload_tables").run()
    at.checkbox(key="folder_uploads").check().run()
    assert at.file_uploader(key="real_folder").proto.accept_directory
    at.file_uploader(key="real_folder").set_value(_parquet_parts(REAL, "train")).run()
    at.file_uploader(key="synthetic_folders").set_value(
        _parquet_parts(SYNTHETIC, "ctgan") + _parquet_parts(SYNTHETIC, "copula", 1)
    ).run()
    at.button(key="load_files").click().run()
    assert not at.exception and not at.error
    review = at.session_state[REVIEW_KEY]
    assert review.candidates == ["ctgan", "copula"]
    assert review.real.name == "train" and review.real.n_rows == 60
    assert review.synthetic["ctgan"].n_rows == 40
    assert review.real.source_format == "parquet"
    assert SOURCES_KEY in at.session_state
    assert at.session_state[SOURCES_KEY] == ()  # folders are written from cells


def test_two_folders_for_the_real_table_are_refused_naming_them():
    at = _fresh()
    before = at.session_state[REVIEW_KEY]
    at.radio(key="data_source").set_value("upload_tables").run()
    at.checkbox(key="folder_uploads").check().run()
    at.file_uploader(key="real_folder").set_value(
        _parquet_parts(REAL, "train") + _parquet_parts(REAL, "other")
    ).run()
    at.file_uploader(key="synthetic_folders").set_value(_parquet_parts(SYNTHETIC, "g")).run()
    at.button(key="load_files").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "expected one folder" in error and "train" in error and "other" in error
    assert at.session_state[REVIEW_KEY] is before


def test_glucose_traces_are_uploaded_as_folders_too():
    import io

    import numpy as np
    import pandas as pd

    def readings(seed: int, folder: str) -> list[tuple[str, bytes, str]]:
        rng = np.random.default_rng(seed)
        times = pd.date_range("2024-01-01", periods=288 * 2, freq="5min")
        frame = pd.concat(
            [
                pd.DataFrame({"id": f"s{s}", "time": times, "glucose": rng.normal(130, 20, 576)})
                for s in range(3)
            ],
            ignore_index=True,
        )
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        return [(f"{folder}/part.0.parquet", buf.getvalue(), "application/octet-stream")]

    at = _fresh()
    at.radio(key="data_source").set_value("upload_traces").run()
    at.checkbox(key="folder_uploads").check().run()
    at.file_uploader(key="real_folder").set_value(readings(0, "cgm_real")).run()
    at.file_uploader(key="synthetic_folders").set_value(readings(1, "timegan")).run()
    at.button(key="load_files").click().run()
    assert not at.exception and not at.error
    review = at.session_state[REVIEW_KEY]
    assert review.kind == "traces" and review.candidates == ["timegan"]
    assert review.real.n_rows == 6  # three subjects, two days each


def test_a_panel_without_its_person_column_is_noticed_until_grouped():
    panel = (Path(__file__).resolve().parent / "data" / "wage_panel_120.csv").read_bytes()
    lines = panel.splitlines(keepends=True)
    real, candidate = b"".join(lines[:481]), lines[0] + b"".join(lines[481:])  # 60 people each
    at = _fresh()
    at.radio(key="data_source").set_value("upload_tables").run()
    at.file_uploader(key="real_upload").upload("real.csv", real, "text/csv").run()
    at.file_uploader(key="synthetic_upload").upload("cand.csv", candidate, "text/csv").run()
    at.button(key="load_files").click().run()
    assert not at.exception
    shown = [w.value.replace("\\", "") for w in at.warning]  # markdown escapes removed
    noticed = [text for text in shown if "looks like a person key" in text]
    assert len(noticed) == 1 and "'person_id'" in noticed[0] and "--person" in noticed[0]
    at.selectbox(key="person_column").set_value("person_id").run()
    at.button(key="apply_person").click().run()
    assert not at.exception
    assert at.session_state[REVIEW_KEY].schema.kinds["person_id"] == "identifier"
    assert not [w for w in at.warning if "looks like a person key" in w.value]


def test_the_source_control_shows_what_is_loaded_after_a_visit_elsewhere():
    """Issue 38, item 5: with an upload loaded, the Source control never flips back to the
    demo (with *Load the demo* showing) when the reviewer leaves the page and comes back."""
    at = _fresh()
    assert at.radio(key="data_source").value == "demo_tables"  # the demo is what is loaded
    at.radio(key="data_source").set_value("upload_tables").run()
    at.file_uploader(key="real_upload").upload("real.csv", REAL, "text/csv").run()
    at.file_uploader(key="synthetic_upload").upload("cand.csv", SYNTHETIC, "text/csv").run()
    at.button(key="load_files").click().run()
    assert not at.exception
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    assert at.radio(key="data_source").value == "upload_tables"
    assert not [b for b in at.button if b.key == "load_demo"]
    assert at.session_state[REVIEW_KEY].candidates == ["cand"]


def test_each_load_notice_is_shown_once_for_the_glucose_demo():
    """Issue 38, item 5: the demo's training and holdout days come from one recording; its
    loading notices (format, days kept) are said once, not once per split."""
    at = _fresh()
    at.radio(key="data_source").set_value("demo_traces").run()
    at.button(key="load_demo").click().run()
    assert not at.exception
    review = at.session_state[REVIEW_KEY]
    assert review.kind == "traces"
    assert len(review.notices) == len(set(review.notices)) >= 2
    shown = [e.value for e in (*at.warning, *at.info) if "cgm" in e.value]
    assert len(shown) == len(set(shown)) >= 2, shown
    assert sum("long format" in s for s in shown) == 1
