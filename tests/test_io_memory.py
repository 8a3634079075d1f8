"""Cells as written without a second copy of the text (synthreview.io.schema.WrittenCells).

A column of numbers keeps its float64 values and only the cells whose text differs from the
values' derived text; every cell must still come back exactly as written (exports depend on it).
Peak memory itself is measured by ``benchmarks/bench_data.py``, not here.
"""

from __future__ import annotations

import io
import pickle
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from synthreview.errors import DataError
from synthreview.io.schema import DerivedCells, LoadedTable, WrittenCells, number_strings
from synthreview.io.tables import align, read_table
from synthreview.io.textfile import parse_delimited

#: number-like cells whose text a float does not give back, and NA markers
ODD_CELLS = [
    "1.50", " 5", "+4", ".5", "5.", "1e3", "1E3", "-0", "NA", "", "-", "nan", "Nan", "1e-05",
    "0.00001", "1000000000000000", "2.5e-7", "0.30000000000000001", "7 ",
]  # fmt: skip


def _as_written(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)


def _mixed_csv(n: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    odd = rng.random(n) < 0.05
    frame = pd.DataFrame(
        {
            "count": np.where(odd, rng.choice(ODD_CELLS, n), rng.integers(0, 1000, n).astype(str)),
            "hours": np.round(rng.normal(40, 10, n), 1).astype(str),  # "40.0": pandas' style
            "late_text": rng.integers(0, 100, n).astype(str),
            "dense_odd": rng.choice(ODD_CELLS, n),
            "word": rng.choice(["a", " b", "NA", "c"], n),
        }
    )
    frame.loc[n - 1, "late_text"] = "not a number"  # turns text in the last block
    return frame.to_csv(index=False).encode()


@pytest.mark.parametrize("block_bytes", [2048, 1 << 22])
def test_every_cell_comes_back_as_written(block_bytes):
    data = _mixed_csv(3000, seed=0)
    header = ["count", "hours", "late_text", "dense_odd", "word"]
    written, frame = parse_delimited(data, header, ",", "t", block_bytes=block_bytes)
    expected = _as_written(data)
    table = LoadedTable("t", "real", frame, written, "0" * 64)
    pd.testing.assert_frame_equal(table.raw.astype(object), expected.astype(object))
    rows = np.random.default_rng(1).integers(0, len(expected), 400)
    picked = table.raw_rows(rows).astype(object)
    pd.testing.assert_frame_equal(picked, expected.iloc[rows].reset_index(drop=True).astype(object))
    kept = np.arange(3, len(expected), 7)  # increasing rows, as a curation keeps them
    pd.testing.assert_frame_equal(
        table.raw_rows(kept).astype(object),
        expected.iloc[kept].reset_index(drop=True).astype(object),
    )
    assert frame["count"].dtype == "float64" and frame["late_text"].dtype == "str"


def test_numbers_keep_only_the_cells_that_differ():
    data = _mixed_csv(3000, seed=2)
    written = read_table(data).written
    count, hours = written.columns["count"], written.columns["hours"]
    assert isinstance(count, DerivedCells) and isinstance(hours, DerivedCells)
    expected = _as_written(data)["count"]
    derived = number_strings(pa.array(count.values, from_pandas=True), "shortest")
    # exactly the cells a float does not give back are kept, with their text
    differs = np.flatnonzero(np.array(derived.to_pylist()) != expected.to_numpy(dtype=str))
    assert np.array_equal(count.positions, differs)
    assert count.texts.to_pylist() == expected.iloc[differs].tolist()
    assert 0 < len(count.positions) < 0.1 * len(expected)
    assert hours.style == "point_zero" and len(hours.positions) == 0
    # a column most of whose cells differ keeps its text instead; text columns stay text
    assert isinstance(written.columns["dense_odd"], pd.Series)
    assert isinstance(written.columns["word"], pd.Series)


def test_text_columns_share_the_typed_frame_buffers():
    table = read_table(b"word,n\n" + b"".join(b"w%d,%d\n" % (i % 7, i) for i in range(500)))
    raw_chunks = table.written.columns["word"].array._pa_array.chunks
    typed_chunks = table.frame["word"].array._pa_array.chunks
    assert raw_chunks[0].buffers()[2].address == typed_chunks[0].buffers()[2].address


def test_number_strings_styles():
    values = pa.array([79.0, 38.7, -0.0, np.nan, 1e-05], from_pandas=True)
    assert number_strings(values, "shortest").to_pylist() == ["79", "38.7", "-0", "", "0.00001"]
    assert number_strings(values, "point_zero").to_pylist() == [
        "79.0",
        "38.7",
        "-0.0",
        "",
        "0.00001",
    ]
    with pytest.raises(ValueError, match="style must be 'shortest' or 'point_zero'; got 'x'"):
        number_strings(values, "x")


def test_loaded_table_takes_a_raw_frame_and_replace_keeps_working():
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    raw = pd.DataFrame({"a": ["1.0", "2"]}, index=[5, 6])
    table = LoadedTable("t", "real", frame, raw, "0" * 64)
    assert table.raw.equals(raw)  # a given frame comes back as it was, index included
    assert table.raw_rows([1])["a"].tolist() == ["2"]
    other = replace(table, raw=pd.DataFrame({"a": ["x", "y"]}))
    assert other.raw["a"].tolist() == ["x", "y"] and other.frame is frame
    assert replace(table, name="u").raw.equals(raw)
    back = pickle.loads(pickle.dumps(table))
    assert back.raw.equals(raw) and back.name == "t"
    with pytest.raises(TypeError, match="needs the cells as written"):
        LoadedTable("t", "real", frame, sha256="0" * 64)


def test_in_memory_frames_are_written_as_pandas_writes_them():
    frame = pd.DataFrame({"x": [1.0, np.nan, 2.5], "k": ["a", None, "b"], "i": [1, 2, 3]})
    table = align(frame, frame.copy()).real
    # the same strings the eager astype("str") gave before cells were derived on demand
    assert table.raw["x"].tolist() == ["1.0", "", "2.5"]
    assert table.raw["k"].tolist() == ["a", "", "b"]
    assert table.raw["i"].tolist() == ["1", "2", "3"]
    assert table.written.derived_share() == 0.0


def test_written_cells_select_and_cell():
    cells = WrittenCells(
        {
            "a": pd.Series(["x", "y"]),
            "b": DerivedCells(
                pd.Series([1.0, 2.0]),
                "shortest",
                np.array([1]),
                pa.array(["2.00"], pa.large_string()),
            ),
        },
        pd.RangeIndex(2),
    )
    assert cells.select(["b", "a"]).names == ["b", "a"]
    assert cells.cell("b", 0) == "1" and cells.cell("b", 1) == "2.00"
    assert cells.frame()["b"].tolist() == ["1", "2.00"]
    assert cells.derived_share() == 0.5


@pytest.mark.parametrize("body", [b"a,b\n1,x\n2,y\n", b"a,b\n1,x\n2,y,z\n3,w\n"])
def test_parsing_restores_arrows_memory_pool(body):
    """The parse allocates from the system allocator and gives the previous pool back."""
    before = pa.default_memory_pool().backend_name
    try:
        read_table(body)
    except DataError:
        pass  # the ragged file is refused; the pool must be restored all the same
    assert pa.default_memory_pool().backend_name == before


def test_curated_csv_of_numbers_written_many_ways_is_byte_identical():
    from synthreview.release.export import curated_csv_bytes

    cells = ["12.50", "7", "7.0", " 3", "1e3", "-0", "+4", "", "NA", "0.1", "1000000"]
    body = "amount,label\n" + "".join(
        f"{cells[i % len(cells)] if i % 5 == 0 else i},{'ab'[i % 2]}\n" for i in range(400)
    )
    review = align(read_table(body.encode()), read_table(body.encode(), name="gen"))
    table = review.synthetic["gen"]
    assert review.schema.kinds["amount"] == "numeric"
    assert isinstance(table.written.columns["amount"], DerivedCells)
    rows = np.arange(table.n_rows)
    kept = SimpleNamespace(kept_raw=table.raw_rows(rows), kept_frame=table.frame)
    assert curated_csv_bytes(kept, schema=review.schema).decode() == body
