"""Bad inputs for ``python -m synthreview review``: the cases, and running one in-process.

One list of cases feeds ``tests/test_bad_inputs.py`` (which asserts each case's exit code, that
the message names what is wrong and that no traceback is printed) and
``scripts/bad_inputs_table.py`` (which writes the table in ``docs/bad_inputs.md``).

Each case builds its files in a fresh folder and gives the command-line arguments after
``review``; inputs not named by the case are valid (``tests/data/adult_small.csv`` for tables,
a generated 3-subject x 2-day CGM file for traces). :func:`run_case` calls
:func:`synthreview.cli.main` with ``evaluate`` replaced by a stand-in that stops the run: a bad
input must be refused *before* any metric is computed, and an accepted input shows as
"accepted" (the review would start) with the loading notices it raised.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd

DATA = Path(__file__).parent / "data"
ADULT = DATA / "adult_small.csv"
#: ``Outcome.code`` of an input the CLI accepts: loading succeeded and the review would start
ACCEPTED = "accepted"


class ReachedComputation(BaseException):
    """Raised by the stand-in for ``evaluate``: the CLI accepted every input and option."""

    def __init__(self, review: object) -> None:
        super().__init__("evaluate() was called")
        self.review = review


@dataclass(frozen=True)
class Case:
    """One bad (or unusual) input and what the CLI must do with it.

    Attributes
    ----------
    name : str
        Test id.
    what : str
        The input, in a few words (a row of the table).
    build : callable
        ``build(folder) -> argv`` after ``review`` (``--out`` is added when not given).
    expect : int or "accepted"
        Exit code (2 = bad input or option), or :data:`ACCEPTED`.
    match : str
        Regular expression the message (or, for accepted inputs, a loading notice) must match.
    needs_option_checks : bool
        True for cases refused by the CLI's option validation (not by the loaders).
    """

    name: str
    what: str
    build: Callable[[Path], list[str]]
    expect: int | str
    match: str
    needs_option_checks: bool = False


@dataclass
class Outcome:
    """What one run gave: exit code (or ACCEPTED), message, traceback flag, seconds."""

    code: int | str
    message: str
    output: str
    traceback: bool
    seconds: float
    notices: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# files


def _write(folder: Path, name: str, content: bytes | str) -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def _parquet(folder: Path, name: str, table: object) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / name
    if isinstance(table, pd.DataFrame):
        table = pa.Table.from_pandas(table, preserve_index=False)
    pq.write_table(table, path)
    return str(path)


def _adult() -> str:
    return ADULT.read_text(encoding="utf-8")


def _other_people() -> str:
    """The Adult sample with every final weight moved by one: no row equals a real row.

    A holdout must hold people the generator did not see; one identical to the real table is
    refused (``synthreview.io.overlap``), so the valid default holdout differs in every row.
    """
    frame = pd.read_csv(ADULT)
    return _csv(frame.assign(fnlwgt=frame["fnlwgt"] + 1))


def _adult_with(row: int, column: str, value: str) -> str:
    lines = _adult().splitlines()
    header = lines[0].split(",")
    cells = lines[row + 1].split(",")
    cells[header.index(column)] = value
    lines[row + 1] = ",".join(cells)
    return "\n".join(lines) + "\n"


def _table_args(
    folder: Path,
    *,
    real: str | None = None,
    holdout: str | None = None,
    synthetic: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """Arguments for a table review; roles not given get the valid Adult sample."""
    real = real or _write(folder, "real.csv", _adult())
    holdout = holdout or _write(folder, "holdout.csv", _other_people())
    synthetic = synthetic or _write(folder, "synthetic.csv", _adult())
    return ["--real", real, "--holdout", holdout, "--synthetic", synthetic, *extra]


def _cgm(
    n_subjects: int = 3,
    days: int = 2,
    *,
    seed: int = 0,
    minutes: int = 5,
    scale: float = 1.0,
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = days * 24 * 60 // minutes
    times = pd.date_range("2021-03-01", periods=n, freq=f"{minutes}min")
    rows = []
    for s in range(n_subjects):
        glucose = 130 + 40 * np.sin(np.arange(n) * 2 * np.pi / n * days) + rng.normal(0, 8, n)
        rows.append(
            pd.DataFrame(
                {
                    "id": f"S{s}",
                    "time": times.strftime("%Y-%m-%d %H:%M"),
                    "gl": np.round(np.clip(glucose, 50, 350) * scale, 1),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False)


def _trace_args(
    folder: Path,
    *,
    real: str | None = None,
    synthetic: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    real = real or _write(folder, "real_cgm.csv", _csv(_cgm(seed=0)))
    holdout = _write(folder, "holdout_cgm.csv", _csv(_cgm(seed=1)))
    synthetic = synthetic or _write(folder, "synthetic_cgm.csv", _csv(_cgm(seed=2)))
    return ["--traces", "--real", real, "--holdout", holdout, "--synthetic", synthetic, *extra]


def _wide_cgm(n_rows: int, *, minutes: int) -> str:
    steps = [f"{m // 60:02d}:{m % 60:02d}" for m in range(0, 24 * 60, minutes)]
    values = 120 + 30 * np.sin(np.arange(len(steps)) / len(steps) * 2 * np.pi)
    frame = pd.DataFrame(np.tile(values.round(1), (n_rows, 1)), columns=steps)
    return _csv(frame.assign(id=[f"W{i}" for i in range(n_rows)])[["id", *steps]])


def _wide(n_rows: int, n_columns: int) -> str:
    header = ",".join(f"c{i}" for i in range(n_columns))
    rng = np.random.default_rng(0)
    rows = [",".join(map(str, r)) for r in rng.integers(0, 9, (n_rows, n_columns))]
    return header + "\n" + "\n".join(rows) + "\n"


def _long_ids(text: str | None = None) -> str:
    body = (text or _adult()).splitlines()
    out = ["customer," + body[0]]
    out += [f"{12_345_678_901_234_567_890 + i},{line}" for i, line in enumerate(body[1:])]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# cases


def _t(name, what, expect, match, **files) -> Case:
    """A table case: ``files`` maps a role to ``fn(folder) -> path``."""

    def build(folder: Path) -> list[str]:
        return _table_args(folder, **{role: fn(folder) for role, fn in files.items()})

    return Case(name, what, build, expect, match)


def _o(name, what, extra, expect, match, *, traces=False) -> Case:
    """An option case on valid inputs."""

    def build(folder: Path) -> list[str]:
        args = (_trace_args if traces else _table_args)(folder)
        return [*args, *(e.format(folder=folder) for e in extra)]

    return Case(name, what, build, expect, match, needs_option_checks=True)


def _tr(name, what, expect, match, *, real=None, synthetic=None, extra=()) -> Case:
    """A traces case: ``real`` / ``synthetic`` are ``fn(folder) -> path``."""

    def build(folder: Path) -> list[str]:
        return _trace_args(
            folder,
            real=real(folder) if real else None,
            synthetic=synthetic(folder) if synthetic else None,
            extra=extra,
        )

    return Case(name, what, build, expect, match)


def _file(name: str, content: bytes | str | Callable[[], bytes | str]) -> Callable[[Path], str]:
    return lambda folder: _write(folder, name, content() if callable(content) else content)


def _pq(name: str, make: Callable[[], object]) -> Callable[[Path], str]:
    return lambda folder: _parquet(folder, name, make())


def _nested(kind: str):
    import pyarrow as pa

    n = 40
    values = {
        "list": pa.array([[i, i + 1] for i in range(n)]),
        "struct": pa.array([{"x": i, "y": "a"} for i in range(n)]),
        "map": pa.array([[("k", i)] for i in range(n)], type=pa.map_(pa.string(), pa.int64())),
        "binary": pa.array([bytes([i]) * 3 for i in range(n)], type=pa.binary()),
    }[kind]
    return lambda: pa.table({"age": list(range(20, 20 + n)), "tags": values})


def _truncated_parquet() -> bytes:
    buf = io.BytesIO()
    pd.read_csv(ADULT).to_parquet(buf)
    data = buf.getvalue()
    return data[: len(data) // 2]


def _missing(folder: Path) -> str:
    return str(folder / "nowhere" / "missing.csv")


def _directory(folder: Path) -> str:
    (folder / "a_folder.csv").mkdir()
    return str(folder / "a_folder.csv")


CASES: list[Case] = [
    # --- files that are not tables --------------------------------------------------------
    _t("empty_file", "real: empty file (0 bytes)", 2, r"is empty", real=_file("r.csv", b"")),
    _t(
        "blank_lines",
        "real: only blank lines and spaces",
        2,
        r"is empty",
        real=_file("r.csv", "\n \n\t\n"),
    ),
    _t("header_only", "real: header, no rows", 2, r"no data rows", real=_file("r.csv", "a,b\n")),
    _t(
        "header_no_newline",
        "real: header without newline",
        2,
        r"no data rows",
        real=_file("r.csv", "a,b"),
    ),
    _t(
        "single_row",
        "real: one data row",
        2,
        r"only 1 data row",
        real=_file("r.csv", "a,b\n1,2\n"),
    ),
    _t(
        "no_header",
        "real: first line empty fields",
        2,
        r"no header row",
        real=_file("r.csv", ",,\n1,2,3\n4,5,6\n"),
    ),
    _t(
        "duplicate_columns",
        "real: duplicated column names",
        2,
        r"duplicated column names \['age'\]",
        real=_file("r.csv", (DATA / "duplicate_columns.csv").read_bytes()),
    ),
    _t(
        "duplicate_after_strip",
        "real: names equal after trimming spaces ('a', ' a')",
        2,
        r"duplicated column names \['a'\]",
        real=_file("r.csv", "a, a\n1,2\n3,4\n"),
    ),
    _t(
        "ragged_short",
        "real: a row with too few fields",
        2,
        r"ragged rows: line 4 has 2 fields, the header has 3",
        real=_file("r.csv", (DATA / "ragged.csv").read_bytes()),
    ),
    _t(
        "ragged_long",
        "real: a row with too many fields",
        2,
        r"ragged rows: line 3 has 4 fields",
        real=_file("r.csv", "a,b,c\n1,2,3\n4,5,6,7\n8,9,10\n"),
    ),
    _t(
        "unterminated_quote",
        "real: a quote never closed (swallows the rest of the file)",
        2,
        r"only 1 data row",
        real=_file("r.csv", 'a,b\n1,"x\n2,y\n'),
    ),
    _t(
        "binary_file",
        "real: binary bytes named .csv",
        2,
        r"binary \(non-text\) content",
        real=_file("r.csv", (DATA / "binary.csv").read_bytes()),
    ),
    _t(
        "png_as_csv",
        "real: a PNG image named .csv",
        2,
        r"binary \(non-text\) content",
        real=_file("r.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))),
    ),
    _t(
        "xlsx_as_csv",
        "real: an Excel (zip) file named .csv",
        2,
        r"binary \(non-text\) content",
        real=_file("r.csv", b"PK\x03\x04\x14\x00\x06\x00" + bytes(200)),
    ),
    _t(
        "csv_named_parquet",
        "real: CSV text named .parquet",
        2,
        r"named like a Parquet file but does not start",
        real=_file("r.parquet", _adult()),
    ),
    _t(
        "damaged_parquet",
        "real: PAR1 magic then garbage",
        2,
        r"cannot be read as Parquet",
        real=_file("r.parquet", b"PAR1 not really parquet PAR1"),
    ),
    _t(
        "truncated_parquet",
        "real: Parquet file cut in half",
        2,
        r"cannot be read as Parquet",
        real=_file("r.parquet", _truncated_parquet),
    ),
    _t(
        "damaged_gzip",
        "real: gzip magic then garbage (.csv.gz)",
        2,
        r"cannot be decompressed",
        real=_file("r.csv.gz", b"\x1f\x8b\x08\x00garbage"),
    ),
    _t(
        "gzip_of_empty",
        "real: gzip of an empty file",
        2,
        r"is empty",
        real=_file("r.csv.gz", gzip.compress(b"")),
    ),
    _t(
        "bad_utf16",
        "real: UTF-16 mark then odd byte count",
        2,
        r"does not decode as UTF-16",
        real=_file("r.csv", b"\xff\xfea\x00,\x00b\x00\n"),
    ),
    _t("missing_real", "real: path does not exist", 2, r"no file at", real=_missing),
    _t(
        "missing_holdout",
        "holdout: path does not exist",
        2,
        r"holdout table .* no file at",
        holdout=_missing,
    ),
    _t(
        "missing_synthetic",
        "synthetic: path does not exist",
        2,
        r"synthetic table .* no file at",
        synthetic=_missing,
    ),
    _t(
        "directory",
        "real: a directory instead of a file",
        2,
        r"is a folder; expected a CSV, TSV or Parquet file",
        real=_directory,
    ),
    # --- Parquet types ------------------------------------------------------------------
    _t(
        "parquet_list",
        "real: Parquet list column",
        2,
        r"column 'tags' has the nested Parquet type list",
        real=_pq("r.parquet", _nested("list")),
    ),
    _t(
        "parquet_struct",
        "real: Parquet struct column",
        2,
        r"column 'tags' has the nested Parquet type struct",
        real=_pq("r.parquet", _nested("struct")),
    ),
    _t(
        "parquet_map",
        "synthetic: Parquet map column",
        2,
        r"column 'tags' has the nested Parquet type map",
        synthetic=_pq("s.parquet", _nested("map")),
    ),
    _t(
        "parquet_binary",
        "real: Parquet bytes column",
        2,
        r"column 'tags' holds raw bytes",
        real=_pq("r.parquet", _nested("binary")),
    ),
    # --- size ---------------------------------------------------------------------------
    _t(
        "wide_10000",
        "real: 140 rows x 10,000 columns (used to hang in l-diversity)",
        2,
        r"has 10,000 columns; at most 999",
        real=_file("r.csv", lambda: _wide(140, 10_000)),
    ),
    _t(
        "wide_1000",
        "real: 40 rows x 1,000 columns",
        2,
        r"has 1,000 columns; at most 999",
        real=_file("r.csv", lambda: _wide(40, 1_000)),
    ),
    _t(
        "wide_parquet",
        "synthetic: Parquet with 1,200 columns",
        2,
        r"has 1,200 columns; at most 999",
        synthetic=_pq("s.parquet", lambda: pd.DataFrame(np.zeros((3, 1200))).add_prefix("c")),
    ),
    # --- values -------------------------------------------------------------------------
    _t(
        "inf_real",
        "real: 'inf' in a numeric column",
        2,
        r"column 'age' holds 1 infinite value\(s\), the first in data row 4",
        real=_file("r.csv", lambda: _adult_with(3, "age", "inf")),
    ),
    _t(
        "minus_inf_holdout",
        "holdout: '-inf' in a numeric column",
        2,
        r"holdout table .* column 'hours_per_week' holds 1 infinite",
        holdout=_file("h.csv", lambda: _adult_with(0, "hours_per_week", "-inf")),
    ),
    _t(
        "infinity_synthetic",
        "synthetic: 'Infinity'",
        2,
        r"synthetic table .* column 'fnlwgt' holds 1 infinite value\(s\), the first in data row 8",
        synthetic=_file("s.csv", lambda: _adult_with(7, "fnlwgt", "Infinity")),
    ),
    _t(
        "overflow",
        "real: '1e400' (overflows float64)",
        2,
        r"column 'capital_gain' holds 1 infinite value\(s\), the first in data row 2 \('1e400'\)",
        real=_file("r.csv", lambda: _adult_with(1, "capital_gain", "1e400")),
    ),
    _t(
        "inf_parquet",
        "real: Parquet float column with inf",
        2,
        r"column 'x' holds 1 infinite value\(s\), the first in data row 2",
        real=_pq("r.parquet", lambda: pd.DataFrame({"x": [1.0, np.inf, 2.0], "y": ["a"] * 3})),
    ),
    _t(
        "text_in_numeric",
        "synthetic: words in a numeric column",
        2,
        r"column 'age' must be numeric .* \['forty'\]",
        synthetic=_file("s.csv", lambda: _adult_with(2, "age", "forty")),
    ),
    _t(
        "inf_text_in_numeric",
        "synthetic: 'inf' beside words in a numeric column",
        2,
        r"column 'age' must be numeric",
        synthetic=_file(
            "s.csv", lambda: _adult_with(2, "age", "old").replace("\n50,", "\ninf,", 1)
        ),
    ),
    # --- tables that do not match -------------------------------------------------------
    _t(
        "synthetic_missing_column",
        "synthetic: lacks a column of real",
        2,
        r"synthetic 'synthetic' is missing columns \['income'\]",
        synthetic=_file("synthetic.csv", lambda: _csv(pd.read_csv(ADULT).drop(columns="income"))),
    ),
    _t(
        "synthetic_extra_column",
        "synthetic: an extra column",
        2,
        r"synthetic 'synthetic' has extra columns \['leak'\]",
        synthetic=_file("synthetic.csv", lambda: _csv(pd.read_csv(ADULT).assign(leak=1))),
    ),
    _t(
        "holdout_missing_column",
        "holdout: lacks a column of real",
        2,
        r"holdout is missing columns \['sex'\]",
        holdout=_file("h.csv", lambda: _csv(pd.read_csv(ADULT).drop(columns="sex"))),
    ),
    _t(
        "holdout_is_real",
        "holdout: the real table itself (rows re-ordered)",
        2,
        r"holdout 'h' holds the same 40 rows as real 'real'.*no non-members",
        holdout=_file("h.csv", lambda: _csv(pd.read_csv(ADULT).iloc[::-1])),
    ),
    _t(
        "holdout_mostly_real",
        "holdout: 30 of its 40 rows are real rows",
        ACCEPTED,
        r"75% of the holdout rows equal a row of real 'real'",
        holdout=_file(
            "h.csv",
            lambda: _csv(
                pd.concat(
                    [pd.read_csv(ADULT).iloc[:30], pd.read_csv(io.StringIO(_other_people()))[30:]]
                )
            ),
        ),
    ),
    _t(
        "synthetic_renamed_column",
        "synthetic: a column renamed",
        2,
        r"is missing columns \['age'\] and has extra columns \['Age'\]",
        synthetic=_file(
            "synthetic.csv", lambda: _csv(pd.read_csv(ADULT).rename(columns={"age": "Age"}))
        ),
    ),
    _t(
        "synthetic_other_table",
        "synthetic: a different data set",
        2,
        r"is missing columns .* and has extra columns \['a', 'b'\]",
        synthetic=_file("synthetic.csv", "a,b\n1,2\n3,4\n"),
    ),
    _t(
        "synthetic_header_only",
        "synthetic: header, no rows",
        2,
        r"synthetic table .* no data rows",
        synthetic=_file("synthetic.csv", lambda: _adult().splitlines()[0] + "\n"),
    ),
    _t(
        "synthetic_single_row",
        "synthetic: one row",
        2,
        r"synthetic table .* only 1 data row",
        synthetic=_file("synthetic.csv", lambda: "\n".join(_adult().splitlines()[:2]) + "\n"),
    ),
    # --- unusual but valid tables: accepted with a notice or unchanged ------------------
    _t(
        "bom",
        "real: UTF-8 byte-order mark",
        ACCEPTED,
        r"",
        real=_file("r.csv", lambda: b"\xef\xbb\xbf" + ADULT.read_bytes()),
    ),
    _t(
        "latin1",
        "real: latin-1 bytes (not UTF-8)",
        ACCEPTED,
        r"not valid UTF-8 .* read as latin-1",
        real=_file(
            "r.csv", lambda: _adult_with(0, "native_country", "Österreich").encode("latin-1")
        ),
    ),
    _t(
        "latin1_column_name",
        "real: non-UTF-8 column name",
        ACCEPTED,
        r"not valid UTF-8",
        real=_file("r.csv", lambda: _adult().replace("age,", "größe,", 1).encode("latin-1")),
        holdout=_file("h.csv", lambda: _other_people().replace("age,", "größe,", 1)),
        synthetic=_file("s.csv", lambda: _adult().replace("age,", "größe,", 1)),
    ),
    _t(
        "empty_column_name",
        "real: a column without a name",
        ACCEPTED,
        r"column 16 has no name; it is called 'unnamed_16'",
        real=_file("r.csv", lambda: _adult().replace("\n", ",\n")),
        holdout=_file("h.csv", lambda: _other_people().replace("\n", ",\n")),
        synthetic=_file("s.csv", lambda: _adult().replace("\n", ",\n")),
    ),
    _t(
        "all_missing_column",
        "synthetic: a column all empty",
        ACCEPTED,
        r"column 'occupation' is all missing",
        synthetic=_file(
            "synthetic.csv", lambda: _csv(pd.read_csv(ADULT).assign(occupation=np.nan))
        ),
    ),
    _t(
        "na_strings",
        "synthetic: NaN / NULL / - / ? as values",
        ACCEPTED,
        r"missing values",
        synthetic=_file(
            "synthetic.csv",
            lambda: (
                _adult_with(1, "workclass", "NULL")
                .replace("State-gov", "-", 1)
                .replace(",Bachelors,", ",NaN,", 1)
            ),
        ),
    ),
    _t(
        "long_ids",
        "real: 20-digit IDs (beyond 2^53)",
        ACCEPTED,
        r"",
        real=_file("r.csv", _long_ids),
        holdout=_file("h.csv", lambda: _long_ids(_other_people())),
        synthetic=_file("s.csv", _long_ids),
    ),
    _t(
        "unseen_category",
        "synthetic: categories never seen in real",
        ACCEPTED,
        r"categories never seen in real",
        synthetic=_file("synthetic.csv", lambda: _adult().replace("State-gov", "Martian-gov")),
    ),
    # --- glucose traces -----------------------------------------------------------------
    _tr(
        "cgm_out_of_range",
        "traces: glucose 1500 mg/dL",
        2,
        r"outside 10-1000 mg/dL|out of range|1500",
        real=_file("r.csv", (DATA / "glucose_out_of_range.csv").read_bytes()),
    ),
    _tr(
        "cgm_negative",
        "traces: negative glucose",
        2,
        r"outside 10-1000 mg/dL|-5",
        synthetic=_file(
            "s.csv", lambda: _csv(_cgm(seed=2).assign(gl=lambda f: f["gl"].where(f.index != 9, -5)))
        ),
    ),
    _tr(
        "cgm_bad_timestamps",
        "traces: unparseable timestamps",
        2,
        r"cannot be parsed as date-times",
        real=_file("r.csv", (DATA / "bad_timestamps.csv").read_bytes()),
    ),
    _tr(
        "cgm_numeric_time",
        "traces: time column holds numbers",
        2,
        r"time column 'time' holds numbers",
        real=_file("r.csv", lambda: _csv(_cgm().assign(time=lambda f: range(len(f))))),
    ),
    _tr(
        "cgm_text_glucose",
        "traces: 'High' / 'Low' glucose words",
        2,
        r"glucose column 'gl' must be numeric.*'High'",
        real=_file(
            "r.csv",
            lambda: _csv(
                _cgm()
                .astype({"gl": "str"})
                .assign(gl=lambda f: f["gl"].where(f.index != 5, "High"))
            ),
        ),
    ),
    _tr(
        "cgm_inf",
        "traces: glucose 'inf'",
        2,
        r"traces 's' column 'gl' holds 1 infinite",
        synthetic=_file(
            "s.csv",
            lambda: _csv(
                _cgm(seed=2)
                .astype({"gl": "str"})
                .assign(gl=lambda f: f["gl"].where(f.index != 7, "inf"))
            ),
        ),
    ),
    _tr(
        "cgm_no_full_day",
        "traces: 3 hours of readings only",
        2,
        r"no window|no day|enough|at least 2",
        synthetic=_file("s.csv", lambda: _csv(_cgm(days=1).groupby("id").head(36))),
    ),
    _tr(
        "cgm_one_trace",
        "traces: synthetic holds 1 day trace",
        2,
        r"has 1 trace; at least 2 are needed",
        synthetic=_file("s.csv", lambda: _csv(_cgm(n_subjects=1, days=1))),
    ),
    _tr(
        "cgm_no_columns",
        "traces: a table file, no time/glucose columns",
        2,
        r"traces .*(named like|non-numeric value columns)",
        real=_file("r.csv", _adult),
    ),
    _tr(
        "cgm_empty",
        "traces: empty file",
        2,
        r"is empty",
        real=_file("r.csv", b""),
    ),
    _tr(
        "cgm_15_minute_synthetic",
        "traces: 15-minute synthetic vs 5-minute real",
        2,
        r"synthetic 's' has traces of 96 steps of 15 min; expected 288 steps of 5 min",
        synthetic=_file("s.csv", lambda: _wide_cgm(3, minutes=15)),
    ),
    _tr(
        "cgm_mmol",
        "traces: mmol/L values",
        ACCEPTED,
        r"mmol/L",
        synthetic=_file("s.csv", lambda: _csv(_cgm(seed=2, scale=1 / 18.016))),
    ),
    _tr(
        "cgm_duplicated_timestamps",
        "traces: every reading written twice",
        ACCEPTED,
        r"",
        synthetic=_file(
            "s.csv", lambda: _csv(pd.concat([_cgm(seed=2)] * 2).sort_values(["id", "time"]))
        ),
    ),
    # --- options --------------------------------------------------------------------------
    _o("alpha_2", "--alpha 2", ["--alpha", "2"], 2, r"--alpha"),
    _o("alpha_negative", "--alpha -0.1", ["--alpha", "-0.1"], 2, r"--alpha"),
    _o("alpha_text", "--alpha abc", ["--alpha", "abc"], 2, r"--alpha"),
    _o("max_attack_negative", "--max-attack -5", ["--max-attack", "-5"], 2, r"max.attack"),
    _o("max_attack_zero", "--max-attack 0", ["--max-attack", "0"], 2, r"max.attack"),
    _o("target_typo", "--target incme (typo)", ["--target", "incme"], 2, r"--target|incme"),
    _o("sensitive_typo", "--sensitive rac (typo)", ["--sensitive", "rac"], 2, r"sensitive|rac"),
    _o("groups_typo", "--groups sex rase (typo)", ["--groups", "sex", "rase"], 2, r"groups|rase"),
    _o(
        "formula_unknown_column",
        "--formula with an unknown column",
        ["--formula", "hours_per_week ~ agee"],
        2,
        r"formula|agee",
    ),
    _o("formula_malformed", "--formula 'y ~'", ["--formula", "age ~"], 2, r"formula"),
    _o("device_unknown", "--device potato", ["--device", "potato"], 2, r"device"),
    _o("out_is_file", "--out an existing file", ["--out", "{folder}/real.csv"], 2, r"--out|out"),
    _o(
        "out_under_file",
        "--out inside a file's path",
        ["--out", "{folder}/real.csv/sub"],
        2,
        r"--out|out",
    ),
    _o("sections_unknown", "--sections fidelty (typo)", ["--sections", "fidelty"], 2, r"sections"),
    _o("embedding_unknown", "--embedding pca", ["--embedding", "pca"], 2, r"embedding"),
    _o("policy_missing", "--policy missing file", ["--policy", "{folder}/none.toml"], 2, r"polic"),
    _o(
        "seed_text",
        "--seed abc",
        ["--seed", "abc"],
        2,
        r"--seed",
    ),
    _o("motif_length_1", "--motif-length 1", ["--motif-length", "1"], 2, r"motif", traces=True),
    _o(
        "motif_tolerance_0",
        "--motif-tolerance 0",
        ["--motif-tolerance", "0"],
        2,
        r"motif",
        traces=True,
    ),
    _o(
        "distance_percentile_200",
        "--distance-percentile 200",
        ["--distance-percentile", "200"],
        2,
        r"distance.percentile",
    ),
    _o("unknown_option", "--frobnicate", ["--frobnicate"], 2, r"unrecognized arguments"),
]


def _policy_case(name: str, what: str, text: str) -> Case:
    def build(folder: Path) -> list[str]:
        return [*_table_args(folder), "--policy", _write(folder, "policy.toml", text)]

    return Case(name, what, build, 2, r"polic", needs_option_checks=True)


CASES += [
    _policy_case("policy_malformed", "--policy not TOML", "this is [ not toml"),
    _policy_case(
        "policy_unknown_rule", "--policy with an unknown rule", "[rules.nonsense]\nmax = 1\n"
    ),
]


def _device_case() -> Case:
    import torch

    if torch.cuda.is_available():  # then --device cuda is valid and the review would start
        return _o(
            "device_cuda", "--device cuda (a GPU is present)", ["--device", "cuda"], ACCEPTED, r""
        )
    return _o("device_cuda", "--device cuda without a GPU", ["--device", "cuda"], 2, r"cuda|device")


def _missing_required(name: str, what: str, drop: str) -> Case:
    def build(folder: Path) -> list[str]:
        args = _table_args(folder)
        i = args.index(drop)
        return args[:i] + args[i + 2 :]

    return Case(
        name, what, build, 2, rf"{drop}.*required|required.*{drop}", needs_option_checks=True
    )


CASES += [
    _device_case(),
    _missing_required("no_real", "--real not given", "--real"),
    _missing_required("no_synthetic", "--synthetic not given", "--synthetic"),
]


# --- the output folder: never an input, never a half-written or foreign folder ----------------


def _out_case(name: str, what: str, build: Callable[[Path], list[str]], match: str) -> Case:
    return Case(name, what, build, 2, match, needs_option_checks=True)


def _synthetic_inside_out(folder: Path) -> list[str]:
    synthetic = _write(folder, "OUT/curated/curated.csv", _adult())
    return _table_args(
        folder, synthetic=synthetic, extra=["--out", str(folder / "OUT"), "--curate"]
    )


def _real_at_report_json(folder: Path) -> list[str]:
    real = _write(folder, "OUT/report.json", _adult())
    return _table_args(folder, real=real, extra=["--out", str(folder / "OUT")])


def _symlink_loop(folder: Path) -> list[str]:
    (folder / "loop_a").symlink_to(folder / "loop_b")
    (folder / "loop_b").symlink_to(folder / "loop_a")
    return _table_args(folder, extra=["--out", str(folder / "loop_a")])


def _foreign_folder(folder: Path) -> list[str]:
    mine = Path(_write(folder, "mine/thesis.tex", "years of work")).parent
    return _table_args(folder, extra=["--out", str(mine), "--overwrite"])


def _earlier_review(folder: Path, *, own_file: bool = False) -> str:
    from synthreview.release.folder import write_review_folder

    out = folder / "out"
    write_review_folder(out, {"report.json": b"{}\n", "old/audit.csv": b"row\n"})
    if own_file:
        _write(out, "notes.txt", "mine")
    return str(out)


CASES += [
    _out_case(
        "out_holds_synthetic",
        "--out OUT --curate with the synthetic file at OUT/curated/curated.csv",
        _synthetic_inside_out,
        r"--out must not hold an input",
    ),
    _out_case(
        "out_real_is_report_json",
        "--out OUT with the real file at OUT/report.json",
        _real_at_report_json,
        r"--out must not hold an input \(the review writes 'report.json' there\)",
    ),
    _out_case("out_symlink_loop", "--out a symbolic link loop", _symlink_loop, r"link loop"),
    _o("out_under_proc", "--out /proc/x", ["--out", "/proc/x"], 2, r"--out .*under /proc"),
    _out_case(
        "out_earlier_review",
        "--out holds an earlier review, no --overwrite",
        lambda folder: _table_args(folder, extra=["--out", _earlier_review(folder)]),
        r"--out holds an earlier review .*pass --overwrite",
    ),
    _out_case(
        "out_earlier_review_and_own_file",
        "--out holds an earlier review and a file of the user's, --overwrite",
        lambda folder: _table_args(
            folder, extra=["--out", _earlier_review(folder, own_file=True), "--overwrite"]
        ),
        r"--overwrite replaces only files an earlier review wrote.*notes\.txt",
    ),
    _out_case(
        "out_foreign_folder",
        "--out a non-empty folder that is no review, --overwrite",
        _foreign_folder,
        r"--out must be a new, empty or earlier review folder.*even --overwrite",
    ),
]


# ---------------------------------------------------------------------------------------------
# loader edges and early option checks (issue 22): valid files load, the rest exit 2 in seconds


def gzip_bomb(expanded: int, *, trailer: int | None = None) -> bytes:
    """A gzip member of ``expanded`` bytes ("a,b" then zeros), built without compressing them.

    After a full flush deflate starts afresh, so every 16 MiB of zeros compresses to the same
    bytes and the member repeats them. The trailer states ``trailer`` bytes when given (several
    members or a forged trailer can state anything); its CRC is never reached before the limit.
    """
    import struct
    import zlib

    unit = 1 << 24
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(b"a,b\n") + packer.flush(zlib.Z_FULL_FLUSH)
    zeros = packer.compress(b"0" * unit) + packer.flush(zlib.Z_FULL_FLUSH)
    n = expanded // unit
    body = head + zeros * n + packer.flush()
    size = (4 + n * unit) if trailer is None else trailer
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + struct.pack("<II", 0, size % 2**32)


def _adult_renamed(shift: int) -> str:
    """Adult with the quoted header name "job<newline>title" (fnlwgt + ``shift``: other people)."""
    frame = pd.read_csv(ADULT)
    frame = frame.assign(fnlwgt=frame["fnlwgt"] + shift)
    return _csv(frame.rename(columns={"occupation": "job\ntitle"}))


def _adult_timed(shift: int, offsets: Sequence[str]) -> str:
    """Adult with a first column of date-times written with ``offsets`` in turn."""
    frame = pd.read_csv(ADULT)
    frame = frame.assign(fnlwgt=frame["fnlwgt"] + shift)
    times = [
        f"2021-03-{1 + i % 28:02d}T{i % 24:02d}:15:00{offsets[i % len(offsets)]}"
        for i in range(len(frame))
    ]
    frame.insert(0, "visited", times)
    return _csv(frame)


def _adult_long_cell(size: int) -> str:
    """Adult with ``size`` bytes in data row 3's occupation cell."""
    return _adult_with(2, "occupation", "z" * size)


def _cgm_across_dst() -> str:
    frame = _cgm(seed=0)
    stamps = pd.to_datetime(frame["time"])
    switch = pd.Timestamp("2021-03-02 02:00")  # the clocks go forward in the second day
    zone = np.where(stamps < switch, "+01:00", "+02:00")
    return _csv(frame.assign(time=stamps.dt.strftime("%Y-%m-%dT%H:%M:%S") + zone))


CASES += [
    _t(
        "cr_only_line_endings",
        "real: CR-only line endings (old Mac)",
        ACCEPTED,
        r"",
        real=_file("r.csv", lambda: _adult().replace("\n", "\r")),
    ),
    _t(
        "header_quoted_line_break",
        "every table: a quoted header name holding a line break (valid RFC 4180)",
        ACCEPTED,
        r"column 7 has a line break in its name",
        real=_file("r.csv", lambda: _adult_renamed(0)),
        holdout=_file("h.csv", lambda: _adult_renamed(1)),
        synthetic=_file("s.csv", lambda: _adult_renamed(0)),
    ),
    _t(
        "header_name_200k",
        "real: a 200,000-character column name",
        2,
        r"header row that cannot be read .*field limit",
        real=_file("r.csv", lambda: "a" * 200_000 + ",b\n1,2\n3,4\n"),
    ),
    _t(
        "row_at_limit",
        "real: a cell filling data row 3 to 4 MiB (the limit)",
        ACCEPTED,
        r"",
        real=_file("r.csv", lambda: _adult_long_cell(4 * 1024**2 - 2000)),
    ),
    _t(
        "cell_5mb",
        "real: a 5 MB cell (beyond the 4 MiB row limit)",
        2,
        r"data row 3 holds 5,000,\d{3} bytes; .* at most 4,194,304 bytes .*column 'occupation'",
        real=_file("r.csv", lambda: _adult_long_cell(5_000_000)),
    ),
    _t(
        "cell_10mb",
        "real: a 10 MB cell",
        2,
        r"data row 3 is longer than 4,194,304 bytes",
        real=_file("r.csv", lambda: _adult_long_cell(10_000_000)),
    ),
    _t(
        "mixed_utc_offsets",
        "every table: a date-time column written with +01:00 and +02:00",
        ACCEPTED,
        r"column 'visited' mixes UTC offsets \['\+01:00', '\+02:00'\]",
        real=_file("r.csv", lambda: _adult_timed(0, ["+01:00", "+02:00"])),
        holdout=_file("h.csv", lambda: _adult_timed(1, ["+01:00", "+02:00"])),
        synthetic=_file("s.csv", lambda: _adult_timed(0, ["+01:00"])),
    ),
    _tr(
        "traces_mixed_utc_offsets",
        "real traces: times across a daylight-saving change (+01:00, then +02:00)",
        ACCEPTED,
        r"time column 'time' mixes UTC offsets .*local wall-clock time",
        real=_file("r.csv", _cgm_across_dst),
    ),
    _t(
        "gzip_bomb",
        "real: a 3 MB gzip that expands to 3.2 GB",
        2,
        r"decompresses to 3,187,671,044 bytes \(gzip trailer\); the limit is 2,147,483,648",
        real=_file("r.csv.gz", lambda: gzip_bomb(3_200_000_000)),
    ),
    _o("seed_negative", "--seed -1", ["--seed", "-1"], 2, r"--seed: .*from 0 to 4294967295"),
    _o(
        "seed_20_digits",
        "--seed with 20 digits",
        ["--seed", "12345678901234567890"],
        2,
        r"--seed: .*from 0 to 4294967295.*got 12345678901234567890",
    ),
    _o(
        "sections_glucose_on_table",
        "--sections glucose on a table review",
        ["--sections", "glucose"],
        2,
        r"option sections must be among .* for a table review; got \['glucose'\]",
    ),
    _o(
        "sections_utility_on_traces",
        "--sections utility on a trace review",
        ["--sections", "utility"],
        2,
        r"option sections must be among .* for a traces review; got \['utility'\]",
        traces=True,
    ),
]


# ---------------------------------------------------------------------------------------------
# security (issue 35): special files, credentials, control characters


def _fifo_partitions(folder: Path) -> str:
    """A Parquet folder with one partition and a FIFO named like the next (no writer ever comes)."""
    import os

    parts = folder / "real_parts"
    parts.mkdir()
    pd.read_csv(ADULT).to_parquet(parts / "part.0.parquet", index=False)
    os.mkfifo(parts / "part.1.parquet")
    return str(parts)


def _control_name(folder: Path) -> str:
    """The Adult sample as a candidate whose file name holds a carriage return and an escape."""
    return _write(folder, "cand\rRELEASE (pass)\x1b[2K.csv", _other_people())


#: a password that must never be printed (it is on the command line of these cases)
SECRET = "hunter2-35"

CASES += [
    _t(
        "parquet_folder_fifo",
        "real: a Parquet folder holding a FIFO named part.1.parquet",
        2,
        r"'part\.1\.parquet', which is not a regular file \(a FIFO, socket or device\)",
        real=_fifo_partitions,
    ),
    _o(
        "register_url_password",
        "--register postgresql://USER:PASSWORD@HOST (no server there)",
        ["--register", f"postgresql://me:{SECRET}@127.0.0.1:1/register"],
        2,
        rf"^(?!.*{SECRET}).*postgresql://me:\*\*\*@127\.0\.0\.1:1/register",
    ),
    _o(
        "register_url_password_query",
        "--register postgresql://HOST/DB?password=PASSWORD (no server there)",
        ["--register", f"postgresql://me@127.0.0.1:1/register?password={SECRET}&sslmode=disable"],
        2,
        rf"^(?!.*{SECRET}).*register\?password=\*\*\*&sslmode=disable",
    ),
    _o(
        "register_url_password_unparseable",
        "--register postgresql://USER:PASSWORD@[HOST (libpq quotes the URL in its message)",
        ["--register", f"postgresql://me:{SECRET}@[broken/register"],
        2,
        rf"^(?!.*{SECRET}).*IPv6 host address in URI: \"postgresql://me:\*\*\*@\[broken",
    ),
    _t(
        "synthetic_name_control_characters",
        "synthetic: file name with a carriage return and an ANSI escape",
        ACCEPTED,
        r"",
        synthetic=_control_name,
    ),
]


# ---------------------------------------------------------------------------------------------
# running


def _first_message(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in lines:  # argparse prints its usage first, the error last
        if re.match(r"(error|synthreview\b.*error):", line):
            return line
    return lines[0] if lines else ""


def run_case(case: Case, folder: Path) -> Outcome:
    """Run ``synthreview review`` on the case's files in-process; computing is never started."""
    from synthreview import cli
    from synthreview import review as review_module

    argv = case.build(folder)
    if "--out" not in argv:
        argv += ["--out", str(folder / "out")]
    captured = io.StringIO()

    def stop(review, *args, **kwargs):
        raise ReachedComputation(review)

    # wherever the CLI looks ``evaluate`` up, the stand-in answers
    patches = [mock.patch.object(review_module, "evaluate", stop)]
    if hasattr(cli, "evaluate"):
        patches.append(mock.patch.object(cli, "evaluate", stop))
    reached, crashed, notices = None, False, []
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        for p in patches:
            stack.enter_context(p)
        stack.enter_context(contextlib.redirect_stderr(captured))
        stack.enter_context(contextlib.redirect_stdout(captured))
        try:
            code: int | str = cli.main(["review", *argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except ReachedComputation as exc:
            code, reached = ACCEPTED, exc.review
        except Exception:
            crashed = True
            captured.write(traceback.format_exc())
            code = 1  # what ``python -m synthreview`` exits with on an uncaught exception
    seconds = time.perf_counter() - start
    output = captured.getvalue()
    if reached is not None:
        notices = [n.message for n in getattr(reached, "notices", ())]
    return Outcome(
        code=code,
        message=_first_message(output),
        output=output,
        traceback=crashed or "Traceback (most recent call last)" in output,
        seconds=seconds,
        notices=notices,
    )
