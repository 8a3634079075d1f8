"""Record version 2: columns as arrays, large arrays once in a blob table read from disk on demand.

A million-row record held every text cell as a JSON string and each curated table four times
(1.2 GB of record.json); these tests pin what replaced that (``record.codec``, ``record.store``).
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError
from synthreview.record import codec, store
from synthreview.record.codec import RecordFormatError, from_jsonable, to_record_json
from synthreview.record.store import FolderFiles, open_review, write_record


def _table(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    text = pd.Series(np.array(["level0", "level1", "été"])[rng.integers(0, 3, n)], dtype="str")
    text[1] = None
    return pd.DataFrame(
        {
            "x": rng.standard_normal(n),
            "text": text,
            "count": pd.array(rng.integers(0, 9, n), dtype="Int64"),
            "flag": pd.array([True, None, False, True] * (n // 4), dtype="boolean"),
            "na_string": pd.Series(["a", None] * (n // 2), dtype="string"),
        }
    )


def test_large_columns_are_held_once_and_read_back_exactly():
    table = _table(40_000)
    data = json.loads(json.dumps(to_record_json({"kept": table, "again": table.copy()})))
    assert list(data) == ["__root__", "__sizes__", "__blobs__"]  # the table last
    # one blob per large array, whichever table holds it
    digests = [d for d, _ in data["__sizes__"]]
    assert len(digests) == len(set(digests))
    assert json.dumps(data).count(digests[0]) == 4  # two uses, its size, its blob
    back = from_jsonable(dict[str, pd.DataFrame], data)
    for frame in back.values():
        pd.testing.assert_frame_equal(frame, table)
    assert to_record_json(back) == to_record_json({"kept": table, "again": table})
    # one array in memory; a change to one table stays out of the other (copy-on-write)
    kept, again = back["kept"], back["again"]
    assert np.shares_memory(kept["x"].to_numpy(), again["x"].to_numpy())
    kept.loc[0, "x"] = 99.0
    assert again.loc[0, "x"] == table.loc[0, "x"]


def test_small_values_stay_inline_and_old_item_columns_still_read():
    small = _table(8)
    data = to_record_json(small)
    assert "__root__" not in data and "__blobs__" not in json.dumps(data)
    pd.testing.assert_frame_equal(from_jsonable(pd.DataFrame, data), small)
    # version 1 wrote text item by item
    old = {
        "__frame__": {
            "columns": {"__index__": {"values": {"dtype": "str", "items": ["s"]}, "name": None}},
            "index": {"__index__": {"range": [0, 2, 1], "name": None}},
            "data": [{"dtype": "str", "items": ["a", None]}],
            "attrs": {},
        }
    }
    pd.testing.assert_frame_equal(
        from_jsonable(pd.DataFrame, old), pd.DataFrame({"s": ["a", None]}, dtype="str")
    )


def test_a_changed_blob_is_refused_by_its_digest():
    data = json.loads(json.dumps(to_record_json(_table(40_000))))
    digest = next(iter(data["__blobs__"]))
    text = data["__blobs__"][digest]
    data["__blobs__"][digest] = ("B" if text[0] != "B" else "C") + text[1:]
    with pytest.raises(RecordFormatError, match=f"blob {digest} must have that sha256"):
        from_jsonable(pd.DataFrame, data)


def test_a_record_with_blobs_opens_from_disk_whole(demo_record_folder, tmp_path, monkeypatch):
    """The demo record with every array of 256 bytes or more in the blob table and every file
    above 4 kB left on disk: it opens to the same record, and refuses what changed."""
    record, _ = demo_record_folder
    monkeypatch.setattr(codec, "BLOB_BYTES", 256)
    monkeypatch.setattr(store, "LAZY_BYTES", 4096)
    folder = tmp_path / "blobs"
    # without the bytes built under the default blob size: made again under the one set here
    write_record(dataclasses.replace(record, serialised=None), folder)
    assert b',"__blobs__":{' in (folder / "record.json").read_bytes()
    opened = open_review(folder)
    assert opened.equivalent(record), opened.differences(record)
    assert isinstance(opened.files, FolderFiles)
    assert opened.decisions.keys() == record.decisions.keys() and not opened.notices
    # a file changed after opening is refused when a page asks for it, never shown
    large = next(n for n in opened.files if (folder / n).stat().st_size > 4096)
    (folder / large).write_bytes((folder / large).read_bytes() + b" ")
    with pytest.raises(DataError, match="changed after the review was opened"):
        opened.files[large]
    # a damaged or cut blob table is refused with the file named
    data = (folder / "record.json").read_bytes()
    (folder / "record.json").write_bytes(data[:-10])
    with pytest.raises(DataError, match=r"record\.json is not JSON"):
        open_review(folder)
    at = data.index(b',"__blobs__":{') + 200
    (folder / "record.json").write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    with pytest.raises(DataError, match=r"record\.json"):
        open_review(folder)
