"""Release files: curated CSV / Parquet, audit.csv, report.json, report.html and manifest.json.

The CLI (``--out DIR``) and the dashboard's download buttons both call these builders, so the
files a reviewer downloads and the files a pipeline writes are the same bytes. Putting a whole
release together (``review_release``, ``build_release``) lives in :mod:`synthreview.release.bundle`.

CSV cells that a spreadsheet would run as a formula (leading ``=``, ``+``, ``-``, ``@``, tab or
carriage return) in text columns get a leading single quote, as the OWASP "CSV Injection" page
recommends; numeric columns, cells that are plain numbers (``-3.5``) and missing-value markers
(``-``, see :data:`synthreview.io.textfile.NA_MARKERS`) are never changed, and
Parquet files are never escaped (they are typed, not parsed by spreadsheets as formulas).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import platform
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import pandas as pd

from synthreview.io.schema import Schema
from synthreview.io.textfile import NA_MARKERS
from synthreview.release.curation import CurationResult
from synthreview.results import to_jsonable
from synthreview.version import __version__

__all__ = [
    "ESCAPE_STATEMENT",
    "FORMULA_TRIGGERS",
    "VERSIONED",
    "audit_csv_bytes",
    "curated_csv_bytes",
    "curated_parquet_bytes",
    "dumps",
    "escape_formulas",
    "manifest",
    "removed_csv_bytes",
    "safe_name",
    "versions",
]

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
#: distributions whose versions the manifest records (streamlit only when installed)
VERSIONED = (
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "torch",
    "plotly",
    "pyarrow",
    "faiss-cpu",
    "streamlit",
)
ESCAPE_STATEMENT = (
    "CSV cells in text columns that begin with =, +, -, @, tab or carriage return were prefixed "
    "with a single quote (OWASP CSV injection guidance); numeric values and missing-value "
    "markers such as '-' were not altered; "
    "Parquet files are not escaped."
)


def _escape_cell(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith(FORMULA_TRIGGERS):
        return value
    if value.strip() in NA_MARKERS:  # a missing-value marker ("-") is no formula: keep it
        return value
    if _PLAIN_NUMBER.match(value):  # "-3.5" is a number to a spreadsheet, never a formula
        return value
    return "'" + value


def escape_formulas(frame: pd.DataFrame, *, schema: Schema | None = None) -> pd.DataFrame:
    """Copy of ``frame`` with formula-like text cells prefixed by ``'``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Typed or raw (all-string) rows.
    schema : Schema, optional
        Columns of kind ``"numeric"`` are left untouched even when ``frame`` holds them as
        strings (so ``-3`` in a raw numeric column stays ``-3``). Without a schema, columns with
        a numeric, boolean or datetime dtype are skipped.

    Returns
    -------
    pandas.DataFrame
        Same shape, columns and index. Header names are escaped the same way.
    """
    numeric = set(schema.numeric) if schema is not None else set()
    out = frame.copy()
    for col in out.columns:
        series = out[col]
        if col in numeric or not (
            pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
        ):
            continue
        out[col] = series.map(_escape_cell, na_action="ignore").astype(series.dtype)
    out.columns = [_escape_cell(c) for c in out.columns]
    return out


def _has_cr(frame: pd.DataFrame) -> bool:
    texts = [str(c) for c in frame.columns]
    for col in frame.columns:
        if pd.api.types.is_object_dtype(frame[col]) or pd.api.types.is_string_dtype(frame[col]):
            texts += [v for v in frame[col].dropna() if isinstance(v, str)]
    return any("\r" in t for t in texts)


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    # the csv module quotes only characters of the line terminator ("\n"), so a bare "\r" inside
    # a cell would split the row on reading; quote every cell in that rare case instead
    quoting = csv.QUOTE_ALL if _has_cr(frame) else csv.QUOTE_MINIMAL
    return frame.to_csv(index=False, lineterminator="\n", quoting=quoting).encode("utf-8")


def curated_csv_bytes(curation: CurationResult, *, schema: Schema | None = None) -> bytes:
    """The kept rows as written in the input file, formula-escaped, UTF-8, comma-separated.

    Values are the input's strings (``LoadedTable.raw``); only rows are removed and formula-like
    text cells escaped, so reading the file back with ``dtype=str, keep_default_na=False`` gives
    the kept rows' strings unchanged.
    """
    return _csv_bytes(escape_formulas(curation.kept_raw, schema=schema))


def curated_parquet_bytes(curation: CurationResult) -> bytes:
    """The kept rows of the typed frame as Parquet (dtypes kept, nothing escaped)."""
    buf = io.BytesIO()
    curation.kept_frame.to_parquet(buf, index=False)
    return buf.getvalue()


def audit_csv_bytes(audit: pd.DataFrame) -> bytes:
    """The audit table (one row per synthetic row, with reasons) as formula-escaped CSV."""
    return _csv_bytes(escape_formulas(audit))


def removed_csv_bytes(curation: CurationResult, *, schema: Schema | None = None) -> bytes:
    """Removed rows as in the input file, preceded by their row number and reasons."""
    return _csv_bytes(escape_formulas(curation.removed_table(), schema=schema))


def dumps(content: Mapping[str, Any]) -> bytes:
    """Canonical JSON bytes: sorted keys, 2-space indent, NaN as null, trailing newline."""
    text = json.dumps(
        to_jsonable(content), indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False
    )
    return (text + "\n").encode("utf-8")


def versions() -> dict[str, str]:
    """Versions of Python, synthreview and its main dependencies that are installed."""

    found = {"python": platform.python_version(), "synthreview": __version__}
    for dist in VERSIONED:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def _input_digests(inputs: Mapping[str, bytes | str] | Sequence[Mapping[str, Any]]) -> dict:
    if isinstance(inputs, Mapping):
        return {
            name: {"sha256": hashlib.sha256(v).hexdigest() if isinstance(v, bytes) else str(v)}
            for name, v in inputs.items()
        }
    return {f"{i.get('role', 'input')}:{i['name']}": dict(i) for i in inputs}


def manifest(
    inputs: Mapping[str, bytes | str] | Sequence[Mapping[str, Any]],
    outputs: Mapping[str, bytes],
    params: Mapping[str, Any],
    seed: int,
    *,
    timestamp: datetime | None = None,
) -> dict[str, Any]:
    """Provenance of a release: digests, parameters, seed, versions, time, escaping statement.

    Parameters
    ----------
    inputs : mapping or sequence
        ``{name: file bytes or sha256 hex}``, or ``Report.to_dict()["inputs"]`` (entries with
        ``name``, ``role`` and ``sha256``).
    outputs : mapping of str to bytes
        Release file name -> content (the manifest itself excluded).
    params : mapping
        Options, thresholds and policy that produced the release.
    seed : int
    timestamp : datetime, optional
        Defaults to now (UTC).
    """
    moment = timestamp or datetime.now(UTC)
    return to_jsonable(
        {
            "generated_at": moment.astimezone(UTC).isoformat(timespec="seconds"),
            "seed": int(seed),
            "parameters": params,
            "inputs": _input_digests(inputs),
            "outputs": {
                name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                for name, data in sorted(outputs.items())
            },
            "versions": versions(),
            "csv_formula_escaping": ESCAPE_STATEMENT,
        }
    )


def safe_name(name: str, taken: Iterable[str] = ()) -> str:
    """A folder name for a candidate: unsafe characters replaced, unique among ``taken``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "candidate"
    taken = set(taken)
    candidate, i = base, 2
    while candidate in taken:
        candidate, i = f"{base}_{i}", i + 1
    return candidate
