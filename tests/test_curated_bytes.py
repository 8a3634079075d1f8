"""curated.csv and removed.csv rows are the input file's bytes (issue 22, item 7)."""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError
from synthreview.io.tables import read_table
from synthreview.judgement.policy import Verdicts
from synthreview.release.audit import Thresholds
from synthreview.release.curation import curate
from synthreview.release.export import (
    ESCAPE_STATEMENT,
    curated_csv_bytes,
    input_records,
    removed_csv_bytes,
)


def _audit(n: int, removed: list[int]) -> pd.DataFrame:
    flags = np.zeros(n, dtype=bool)
    flags[removed] = True
    audit = pd.DataFrame(
        {"row": np.arange(n), "removed": flags, "reasons": ["copy" if f else "" for f in flags]}
    )
    audit.attrs["thresholds"] = Thresholds().to_dict()
    return audit


def _rows(data: bytes, delimiter: str) -> list[bytes]:
    """The input's data records by hand-checked spans (header first)."""
    records = input_records(data, delimiter=delimiter)
    head = data[records.header[0] : records.header[1]]
    return [head] + [data[a:b] for a, b in zip(records.starts, records.stops, strict=True)]


CASES = {
    # name: (file bytes, delimiter)
    "crlf": (b"id,name,score\r\n1,ann,2.50\r\n2,bob,3\r\n3,cy,4\r\n4,dee,5\r\n", ","),
    "quoted_crlf_in_cell": (
        b'id,note,score\r\n1,"two\r\nlines",2\r\n2,plain,3\r\n3,"say ""hi""",4\r\n4,"a,b",5\r\n',
        ",",
    ),
    "semicolon": (b'id;name;amount\n1;ann;2,5\n2;"b;c";3,0\n3;cy;4\n4;dee;5,25\n', ";"),
    "latin1": ("id,name,n\n1,café,2\n2,naïve,3\n3,señor,4\n4,über,5\n".encode("latin-1"), ","),
    "bom_mixed_ends": (b"\xef\xbb\xbfid,name\n1,ann\r\n2,bob\n\n3,cy\r\n4,dee", ","),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_curated_rows_are_the_input_bytes(case, tmp_path):
    data, delimiter = CASES[case]
    path = tmp_path / f"{case}.csv"
    path.write_bytes(data)
    (tmp_path / "other.csv").write_bytes(b"id\n1\n2\n")  # another input: not this candidate
    table = read_table(str(path), role="synthetic")
    assert table.delimiter == delimiter
    curation = curate(table, _audit(table.n_rows, [1]))
    rows = _rows(data, delimiter)
    assert len(rows) == table.n_rows + 1  # the loader's rows, one record each
    kept = [rows[0]] + [rows[1 + i] for i in curation.kept_rows]
    assert curated_csv_bytes(curation, sources=[tmp_path / "other.csv", path]) == b"".join(kept)
    # removed.csv: row number and reasons, then the removed row's own bytes
    end = b"\r\n" if rows[0].endswith(b"\r\n") else b"\n"
    sep = delimiter.encode()
    removed = removed_csv_bytes(curation, sources=[path])
    assert removed.endswith(sep.join([b"1", b"copy", rows[2]]))
    bom = b"\xef\xbb\xbf"
    assert removed.startswith(bom) == data.startswith(bom)  # the BOM stays at the file's start
    assert removed.split(end, 1)[0].endswith(rows[0].removeprefix(bom).rstrip(b"\r\n"))


def test_escaped_cells_rewrite_only_their_row_and_keep_the_dialect(tmp_path):
    data = b'id;cmd;n\r\n1;=SUM(A1);2\r\n2;plain;3\r\n3;"x;y";4\r\n4;-5;5\r\n'
    path = tmp_path / "formula.csv"
    path.write_bytes(data)
    table = read_table(str(path), role="synthetic")
    curation = curate(table, _audit(table.n_rows, []))
    out = curated_csv_bytes(curation, schema=None, sources=[path])
    rows = _rows(data, ";")
    # the formula row gains its quote and stays in ';' with CRLF; every other row is untouched
    assert out == rows[0] + b"1;'=SUM(A1);2\r\n" + rows[2] + rows[3] + rows[4]
    assert "re-written" in ESCAPE_STATEMENT and "input file's bytes" in ESCAPE_STATEMENT
    # the same file read back keeps the cells (the escaped one with its quote)
    back = pd.read_csv(io.BytesIO(out), sep=";", dtype=str, keep_default_na=False)
    assert back["cmd"].tolist() == ["'=SUM(A1)", "plain", "x;y", "-5"]


def test_gzip_source_and_missing_source_fall_back(tmp_path):
    data = b"id,name\r\n1,ann\r\n2,bob\r\n3,cy\r\n"
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(data, mtime=0))
    table = read_table(str(gz), role="synthetic")
    curation = curate(table, _audit(table.n_rows, [0]))
    assert curated_csv_bytes(curation, sources=[gz]) == b"id,name\r\n2,bob\r\n3,cy\r\n"
    # no source given (or none with the candidate's digest): cells as written, UTF-8, LF
    assert curated_csv_bytes(curation) == b"id,name\n2,bob\n3,cy\n"
    other = tmp_path / "other.csv"
    other.write_bytes(data + b"4,dee\r\n")
    assert curated_csv_bytes(curation, sources=[other]) == b"id,name\n2,bob\n3,cy\n"


def test_records_follow_quotes_and_a_mismatched_source_is_refused():
    data = b"id,name\n1,ann\n2,bob\n"
    table = read_table(data, name="t", role="synthetic")
    curation = curate(table, _audit(table.n_rows, []))
    assert curated_csv_bytes(curation, sources=[data]) == data
    # an unterminated quote runs to the end of the file; a quote inside a field is literal
    assert len(input_records(b'id,name\n1,"open\n2,bob\n', delimiter=",").starts) == 1
    assert len(input_records(b'id,name\n1,5" tall\n2,bob\n', delimiter=",").starts) == 2
    with pytest.raises(ValueError, match="delimiter"):
        input_records(data, delimiter=";;")
    # a source that splits into another number of rows is reported, never guessed
    other = b"id,name\n1,ann\n"
    wrong = replace(curation, source_sha256=hashlib.sha256(other).hexdigest())
    with pytest.raises(DataError, match="expected its 2 rows"):
        curated_csv_bytes(wrong, sources=[other])


def test_a_release_of_several_candidates_hashes_each_source_once(tmp_path, monkeypatch):
    """build_release finds every curated candidate's own file among the sources after hashing
    each source once (not once per candidate and file), and each candidate gets its bytes."""
    from synthreview.release import bundle
    from synthreview.release.export import source_index

    paths = {}
    for name, data in {"a": CASES["crlf"][0], "b": CASES["semicolon"][0]}.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_bytes(data)
    (tmp_path / "other.csv").write_bytes(b"id\n1\n2\n")
    curations = {}
    for name, path in paths.items():
        table = read_table(str(path), role="synthetic")
        curations[name] = curate(table, _audit(table.n_rows, [1]))
    sources = [tmp_path / "other.csv", paths["a"], paths["b"], tmp_path]  # a folder: skipped
    assert set(source_index(sources)) == {c.source_sha256 for c in curations.values()} | {
        hashlib.sha256(b"id\n1\n2\n").hexdigest()
    }
    opened = []
    real_digest = hashlib.file_digest

    def counting(handle, digest):
        opened.append(handle.name)
        return real_digest(handle, digest)

    monkeypatch.setattr(hashlib, "file_digest", counting)
    report = {"candidates": {"a": {}, "b": {}}, "inputs": [], "seed": 0}
    files = bundle.build_release(
        report,
        curations=curations,
        verdicts=dict.fromkeys(curations, Verdicts("pass")),
        sources=sources,
    )
    # three files hashed for the index, then each candidate's own file once per CSV written
    assert sorted(opened[:3]) == sorted(str(p) for p in sources[:3])
    assert sorted(opened[3:]) == sorted([str(paths["a"])] * 2 + [str(paths["b"])] * 2)
    for name, path in paths.items():
        data, delimiter = path.read_bytes(), ("," if name == "a" else ";")
        rows = _rows(data, delimiter)
        kept = [rows[0]] + [rows[1 + i] for i in curations[name].kept_rows]
        assert files[f"{name}/curated.csv"] == b"".join(kept)
        assert files[f"{name}/removed.csv"].endswith(rows[2])
