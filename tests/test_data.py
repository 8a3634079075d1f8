"""Loading, typing, schema inference and alignment of tables (synthreview.io.tables)."""

from __future__ import annotations

import gzip
import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError
from synthreview.io.schema import Schema
from synthreview.io.tables import align, infer_schema, load_table, missing_rates, read_table
from synthreview.io.textfile import NA_MARKERS

DATA = Path(__file__).parent / "data"


class Upload(io.BytesIO):
    """What Streamlit's file_uploader hands over: a BytesIO with a ``name``."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


# --- bad input: one test per case ------------------------------------------------------------


def test_empty_file():
    with pytest.raises(DataError, match=r"real table 'empty' is empty"):
        read_table(DATA / "empty.csv")


def test_header_only():
    with pytest.raises(DataError, match=r"'header_only' has a header but no data rows"):
        read_table(DATA / "header_only.csv")


def test_duplicated_column_names():
    with pytest.raises(DataError, match=r"duplicated column names \['age'\]"):
        read_table(DATA / "duplicate_columns.csv")


def test_binary_content():
    with pytest.raises(DataError, match=r"'binary' holds binary \(non-text\) content"):
        read_table(DATA / "binary.csv")


def test_ragged_rows_names_the_line():
    with pytest.raises(DataError, match=r"ragged rows: line 4 has 2 fields, the header has 3"):
        read_table(DATA / "ragged.csv")


def test_ragged_row_with_too_many_fields():
    with pytest.raises(DataError, match=r"line 3 has 4 fields, the header has 3"):
        read_table(b"a,b,c\n1,2,3\n4,5,6,7\n8,9,10\n")


def test_single_row():
    with pytest.raises(DataError, match=r"only 1 data row; at least 2 rows are needed"):
        read_table(DATA / "single_row.csv")


def test_unparseable_parquet():
    with pytest.raises(DataError, match=r"cannot be read as Parquet"):
        read_table(b"PAR1 this is not really a parquet file PAR1", name="broken")


def test_parquet_name_without_magic():
    with pytest.raises(DataError, match=r"named like a Parquet file but does not start"):
        read_table(Upload(b"a,b\n1,2\n3,4\n", "real.parquet"))


def test_too_large_source_refused_before_reading():
    class NoRead(Upload):
        def read(self, *args):  # the guard must not read the content to learn the size
            raise AssertionError("read() called")

        getvalue = read

    with pytest.raises(DataError, match=r"is 12 bytes; the limit is 5 bytes"):
        read_table(NoRead(b"a,b\n1,2\n3,4\n", "big.csv"), max_bytes=5)


def test_missing_path():
    with pytest.raises(DataError, match=r"no file at"):
        read_table(DATA / "does_not_exist.csv")


# --- formats and encodings ---------------------------------------------------------------


def test_bom_is_stripped():
    table = read_table(DATA / "bom.csv")
    assert list(table.frame.columns) == ["age", "sex"]
    assert table.encoding == "utf-8"
    assert not table.notices


def test_latin1_fallback_is_reported():
    table = read_table(DATA / "latin1.csv")
    assert table.encoding == "latin-1"
    assert table.frame["city"].tolist() == ["München", "Zürich", "Graz"]
    assert any("latin-1" in n.message for n in table.notices)


def test_semicolon_delimiter_with_decimal_commas():
    table = read_table(DATA / "semicolon.csv")
    assert table.delimiter == ";"
    assert table.frame["weight"].tolist() == [72.5, 80.25, 66.0]
    assert table.raw["weight"].tolist() == ["72,5", "80,25", "66"]
    assert any("decimal commas" in n.message for n in table.notices)


def test_tab_delimiter():
    table = read_table(DATA / "tab.tsv")
    assert (table.delimiter, table.source_format) == ("\t", "tsv")
    assert table.frame.shape == (3, 3)
    assert table.frame["age"].dtype == "float64"


def test_quoted_delimiters_stay_in_their_field():
    frame = load_table(b'name,n\n"Smith, J",1\n"Doe; A",2\n')
    assert frame["name"].tolist() == ["Smith, J", "Doe; A"]


def test_delimiter_inside_every_value_does_not_win():
    table = read_table(b"name,dose,unit\nA|1,5,mg\nB|2,6,mg\nC|3,7,mg\n")
    assert table.delimiter == ","
    assert table.frame["name"].tolist() == ["A|1", "B|2", "C|3"]


def test_parquet_round_trip(tmp_path):
    original = pd.DataFrame(
        {
            "age": [39, 50, 38],
            "sex": ["Male", None, "Female"],
            "flag": [True, False, True],
            "seen": pd.to_datetime(["2020-01-01", "2020-02-01", "2021-03-01"]),
        }
    )
    path = tmp_path / "people.parquet"
    original.to_parquet(path)
    table = read_table(path)
    assert table.source_format == "parquet"
    assert table.name == "people"
    assert table.frame["age"].tolist() == [39.0, 50.0, 38.0]
    assert table.frame["sex"].isna().tolist() == [False, True, False]
    assert table.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert dict(infer_schema(table.frame).kinds) == {
        "age": "numeric",
        "sex": "categorical",
        "flag": "categorical",
        "seen": "datetime",
    }


def test_file_like_upload_matches_path():
    data = (DATA / "adult_small.csv").read_bytes()
    from_upload = read_table(Upload(data, "adult_small.csv"), role="synthetic")
    from_path = read_table(DATA / "adult_small.csv")
    assert from_upload.name == "adult_small"
    assert from_upload.role == "synthetic"
    assert from_upload.sha256 == from_path.sha256 == hashlib.sha256(data).hexdigest()
    pd.testing.assert_frame_equal(from_upload.frame, from_path.frame)


def test_streamlit_uploaded_file():
    from streamlit.proto.Common_pb2 import FileURLs
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    data = (DATA / "semicolon.csv").read_bytes()
    upload = UploadedFile(UploadedFileRec("id-1", "semicolon.csv", "text/csv", data), FileURLs())
    upload.read()  # a page may have read it already: loading must not depend on the position
    table = read_table(upload, role="holdout")
    assert (table.name, table.role, table.frame.shape) == ("semicolon", "holdout", (3, 3))
    with pytest.raises(DataError, match=r"holdout table 'semicolon' is \d+ bytes; the limit"):
        read_table(upload, role="holdout", max_bytes=10)


def test_utf16_with_bom():
    table = read_table("age,city\n39,Zürich\n50,Graz\n".encode("utf-16"))
    assert table.encoding == "utf-16"
    assert table.frame["city"].tolist() == ["Zürich", "Graz"]


def test_gzip_compressed_csv():
    data = gzip.compress((DATA / "tab.tsv").read_bytes())
    table = read_table(Upload(data, "tab.tsv.gz"))
    assert table.name == "tab"
    assert table.frame.shape == (3, 3)


def test_na_markers_become_missing_and_raw_keeps_text():
    table = read_table(DATA / "na_markers.csv")
    frame = table.frame
    assert frame["age"].dropna().tolist() == [39.0, 41.0, 44.0, 45.0]
    assert frame["age"].isna().tolist() == [False, True, False, False, False]
    assert frame["workclass"].isna().tolist() == [False, True, True, False, True]
    assert frame["score"].dtype == "float64"
    assert frame["score"].isna().tolist() == [False, True, True, True, False]
    assert table.raw["workclass"].tolist() == ["State-gov", "?", " N/A ", "Private", "NaN"]
    assert {"", "?", "NA"} <= NA_MARKERS


def test_default_name_is_file_stem():
    assert read_table(DATA / "tab.tsv").name == "tab"
    assert read_table(DATA / "tab.tsv", name="mine").name == "mine"


# --- schema inference -----------------------------------------------------------------------


def test_infer_schema_on_adult_like_table():
    frame = load_table(DATA / "adult_small.csv")
    n = len(frame)
    frame = frame.assign(
        record_id=[f"r{i:03d}" for i in range(n)],
        row=np.arange(n, dtype="float64"),
        visit=[f"2020-01-{1 + i % 28:02d}" for i in range(n)],
        country_code=["US"] * n,
        empty=pd.Series([np.nan] * n, dtype="str"),
    )
    kinds = infer_schema(frame).kinds
    assert kinds["age"] == "numeric"
    assert kinds["workclass"] == "categorical"
    assert kinds["sex"] == "categorical"
    assert kinds["income"] == "categorical"
    assert kinds["record_id"] == "identifier"
    assert kinds["row"] == "identifier"
    assert kinds["visit"] == "datetime"
    assert kinds["country_code"] == "constant"
    assert kinds["empty"] == "constant"


def test_binary_numeric_column_is_categorical():
    frame = pd.DataFrame({"death": [0.0, 1.0, 0.0, 1.0], "x": [0.5, 1.5, 2.0, 3.0]})
    assert dict(infer_schema(frame).kinds) == {"death": "categorical", "x": "numeric"}


# --- alignment -------------------------------------------------------------------------------


@pytest.fixture
def adult():
    return read_table(DATA / "adult_small.csv")


def test_align_reorders_synthetic_columns(adult):
    shuffled = adult.frame[adult.frame.columns[::-1]].iloc[:20]
    review = align(adult, {"copula": shuffled})
    assert list(review.synthetic["copula"].frame.columns) == list(adult.frame.columns)
    assert review.candidates == ["copula"]
    assert review.schema.columns == list(adult.frame.columns)


def test_align_missing_columns(adult):
    with pytest.raises(
        DataError,
        match=r"synthetic 'copula' is missing columns \['age'\]; "
        r"expected the columns of real",
    ):
        align(adult, {"copula": adult.frame.drop(columns=["age"])})


def test_align_extra_columns(adult):
    extra = adult.frame.assign(leak="x")
    with pytest.raises(DataError, match=r"synthetic 'copula' has extra columns \['leak'\]"):
        align(adult, {"copula": extra})


def test_align_holdout_with_different_columns(adult):
    with pytest.raises(DataError, match=r"holdout is missing columns \['sex'\]"):
        align(adult, adult.frame, holdout=adult.frame.drop(columns=["sex"]))


def test_align_text_in_numeric_column():
    real = read_table(b"age,sex,income\n39,Male,<=50K\n50,Female,>50K\n41,Male,<=50K\n")
    synthetic = read_table(DATA / "synthetic_text_in_numeric.csv", role="synthetic")
    with pytest.raises(
        DataError,
        match=r"synthetic 'synthetic_text_in_numeric' column 'age' "
        r"must be numeric.*2 values.*\['forty', 'old'\]",
    ):
        align(real, synthetic)


def test_align_unseen_categories_notice(adult):
    synthetic = adult.frame.copy()
    synthetic.loc[:4, "race"] = "Martian"
    review = align(adult, {"copula": synthetic})
    notes = [n for n in review.notices if n.column == "race" and n.table == "copula"]
    assert len(notes) == 1
    assert "never seen in real" in notes[0].message and "Martian" in notes[0].message


def test_align_all_missing_column_notice(adult):
    synthetic = adult.frame.copy()
    synthetic["occupation"] = np.nan
    review = align(adult, [synthetic])
    assert any(
        n.column == "occupation" and "all missing" in n.message and n.table == "synthetic_1"
        for n in review.notices
    )
    rates = missing_rates(review)
    assert rates.loc["occupation", "synthetic_1"] == 1.0
    assert rates.loc["workclass", "real"] == pytest.approx(2 / 40)


def test_align_missing_rate_notices(adult):
    review = align(adult, adult)
    columns = {n.column for n in review.notices if "missing values" in n.message}
    assert columns == {"workclass", "occupation", "native_country"}


def test_align_duplicate_candidate_names(adult):
    review = align(adult, [adult, adult, adult.frame])
    assert review.candidates == ["adult_small", "adult_small-2", "synthetic_3"]


def test_align_casts_synthetic_numbers_and_categories():
    real = read_table(b"age,flag\n39,0\n50,1\n41,0\n")
    synthetic = pd.DataFrame({"age": ["40", "51.5"], "flag": [1.0, 0.0]})
    review = align(real, {"gen": synthetic})
    assert review.schema.kinds["flag"] == "categorical"
    assert review.synthetic["gen"].frame["age"].tolist() == [40.0, 51.5]
    assert review.synthetic["gen"].frame["flag"].tolist() == ["1", "0"]
    assert review.real.frame["flag"].tolist() == ["0", "1", "0"]
    assert not [n for n in review.notices if "never seen" in n.message]


def test_align_schema_override_round_trips(adult):
    review = align(adult, adult)
    schema = review.schema.with_kinds({"education_num": "categorical"})
    again = align(review.real, list(review.synthetic.values()), schema=schema)
    assert again.real.frame["education_num"].iloc[0] == "13"
    back = align(
        again.real,
        list(again.synthetic.values()),
        schema=schema.with_kinds({"education_num": "numeric"}),
    )
    assert back.real.frame["education_num"].iloc[0] == 13.0


def test_align_rejects_schema_with_other_columns(adult):
    with pytest.raises(DataError, match=r"schema columns .* must equal the columns of real"):
        align(adult, adult, schema=Schema({"age": "numeric"}))


def test_align_wraps_dataframes_with_content_digest():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    review = align(frame, frame.copy())
    assert review.real.sha256 == review.synthetic["synthetic_1"].sha256
    other = align(frame.assign(a=[1.0, 3.0]), frame)
    assert other.real.sha256 != review.real.sha256


# --- boundary fixes (issue #12, item 5) -------------------------------------------------------

LONG_IDS = [str(12_345_678_901_234_567_890 + i) for i in range(120)]


def test_integers_beyond_2_53_stay_distinct_text():
    body = "customer,amount\n" + "".join(f"{v},{i % 7}\n" for i, v in enumerate(LONG_IDS))
    table = read_table(body.encode())
    assert table.frame["customer"].dtype == "str"
    assert table.frame["customer"].tolist() == LONG_IDS
    assert table.frame["customer"].nunique() == 120
    assert infer_schema(table.frame).kinds["customer"] == "identifier"
    assert table.frame["amount"].dtype == "float64"


def test_integer_at_2_53_is_still_a_number():
    table = read_table(b"x\n9007199254740992\n-9007199254740992\n1.5e300\n")
    assert table.frame["x"].dtype == "float64"  # exact in float64; "1.5e300" is no whole number


def test_zero_padded_codes_stay_text():
    table = read_table(b"code,n\n007,1\n010,2\n123,3\n")
    assert table.frame["code"].tolist() == ["007", "010", "123"]
    assert table.frame["n"].dtype == "float64"


def test_zero_padded_codes_stay_text_in_semicolon_files():
    table = read_table(b"code;w\n007;1,5\n010;2\n")
    assert table.frame["code"].tolist() == ["007", "010"]
    assert table.frame["w"].tolist() == [1.5, 2.0]


def test_zero_and_decimals_below_one_are_numbers():
    assert read_table(b"x\n0\n0.5\n-0.25\n").frame["x"].tolist() == [0.0, 0.5, -0.25]


def test_parquet_int64_beyond_2_53_stays_text(tmp_path):
    path = tmp_path / "ids.parquet"
    pd.DataFrame({"ref": [2**62 + i for i in range(30)], "n": range(30)}).to_parquet(path)
    frame = read_table(path).frame
    assert frame["ref"].tolist() == [str(2**62 + i) for i in range(30)]
    assert frame["n"].dtype == "float64"


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity", "1e400"])
def test_infinite_numbers_refused_naming_column_and_row(cell):
    with pytest.raises(
        DataError,
        match=r"real table 'table' column 'b' holds 1 infinite value\(s\), the first "
        r"in data row 2 \('.+'\)",
    ):
        read_table(f"a,b\n1,2\n3,{cell}\n5,6\n".encode())


def test_infinite_numbers_in_a_dataframe_refused():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, np.inf, np.inf]})
    with pytest.raises(DataError, match=r"synthetic table 'synthetic_1' column 'b' holds 2 inf"):
        align(frame.assign(b=1.0), frame)


def test_infinite_text_cast_to_numeric_refused():
    real = read_table(b"a,b\n1,2\n3,4\n")
    synthetic = read_table(b"a,b\n1,x\n3,inf\n", role="synthetic", name="gen")
    with pytest.raises(DataError, match=r"synthetic 'gen' column 'b'"):
        align(real, synthetic, schema=Schema({"a": "numeric", "b": "numeric"}))


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([[1, 2], [3]], "list"),
        ([{"x": 1}, {"x": 2}], "struct"),
    ],
)
def test_nested_parquet_columns_refused(tmp_path, values, kind):
    path = tmp_path / "nested.parquet"
    pd.DataFrame({"a": [1, 2], "deep": values}).to_parquet(path)
    with pytest.raises(DataError, match=rf"column 'deep' has the nested Parquet type {kind}"):
        read_table(path)


def test_parquet_map_column_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "map.parquet"
    tags = pa.array([[("k", 1)], [("j", 2)]], type=pa.map_(pa.string(), pa.int64()))
    pq.write_table(pa.table({"a": [1, 2], "tags": tags}), path)
    with pytest.raises(DataError, match=r"column 'tags' has the nested Parquet type map"):
        read_table(path)


def test_wide_table_refused_before_parsing_rows():
    from synthreview.io.table_rules import MAX_COLUMNS

    header = ",".join(f"c{i}" for i in range(MAX_COLUMNS + 1))
    with pytest.raises(DataError, match=rf"has {MAX_COLUMNS + 1:,} columns; at most 999"):
        read_table((header + "\n" + "\n".join(["1," * MAX_COLUMNS + "1"] * 3)).encode())


def test_widest_allowed_table_loads():
    from synthreview.io.table_rules import MAX_COLUMNS

    header = ",".join(f"c{i}" for i in range(MAX_COLUMNS))
    row = ",".join("1" for _ in range(MAX_COLUMNS))
    assert read_table(f"{header}\n{row}\n{row}\n".encode()).frame.shape == (2, MAX_COLUMNS)


def test_wide_dataframe_refused():
    frame = pd.DataFrame(np.zeros((3, 10_000)), columns=[f"c{i}" for i in range(10_000)])
    with pytest.raises(DataError, match=r"real table 'real' has 10,000 columns"):
        align(frame, frame)


def test_wide_parquet_refused(tmp_path):
    path = tmp_path / "wide.parquet"
    pd.DataFrame(np.zeros((2, 1_200)), columns=[f"c{i}" for i in range(1_200)]).to_parquet(path)
    with pytest.raises(DataError, match=r"has 1,200 columns; at most 999"):
        read_table(path)


def test_numeric_identifier_is_aligned_as_written():
    body = "row,x\n" + "".join(f"{i},{i % 3}.5\n" for i in range(25))
    review = align(read_table(body.encode()), read_table(body.encode(), role="synthetic"))
    assert review.schema.kinds["row"] == "identifier"
    assert review.real.frame["row"].tolist()[:3] == ["0", "1", "2"]


def _exported(review, name):
    """The curated CSV and Parquet bytes of every row of candidate ``name`` (nothing removed)."""
    from types import SimpleNamespace

    from synthreview.release.export import curated_csv_bytes, curated_parquet_bytes

    table = review.synthetic[name]
    kept = SimpleNamespace(kept_raw=table.raw, kept_frame=table.frame)
    return curated_csv_bytes(kept, schema=review.schema), curated_parquet_bytes(kept)


def test_long_ids_codes_and_na_markers_export_byte_identical():
    body = "customer,branch,status,age\n" + "".join(
        f"{v},{('007', '010', '123')[i % 3]},{('A', '-', 'B')[i % 3]},{20 + i % 50}\n"
        for i, v in enumerate(LONG_IDS)
    )
    real = read_table(body.encode())
    review = align(real, read_table(body.encode(), role="synthetic", name="gen"))
    assert review.schema.kinds["customer"] == "identifier"
    csv_bytes, parquet_bytes = _exported(review, "gen")
    assert csv_bytes.decode() == body  # "-" is a missing-value marker, not escaped to "'-"
    back = pd.read_parquet(io.BytesIO(parquet_bytes))
    assert back["customer"].tolist() == LONG_IDS
    assert back["branch"].tolist()[:3] == ["007", "010", "123"]
    assert b"e+19" not in parquet_bytes


def test_formula_cells_are_still_escaped_beside_na_markers():
    from synthreview.release.export import escape_formulas

    frame = pd.DataFrame({"note": ["-", " - ", "-x", "=1+1", "NA"]})
    assert escape_formulas(frame)["note"].tolist() == ["-", " - ", "'-x", "'=1+1", "NA"]
