"""Release files: curated CSV / Parquet, audit.csv, report.json, report.html and manifest.json.

The CLI (``--out DIR``) and the dashboard's download buttons both call these builders, so the
files a reviewer downloads and the files a pipeline writes are the same bytes.

CSV cells that a spreadsheet would run as a formula (leading ``=``, ``+``, ``-``, ``@``, tab or
carriage return) in text columns get a leading single quote, as the OWASP "CSV Injection" page
recommends; numeric columns and cells that are plain numbers (``-3.5``) are never changed, and
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
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from synthreview._results import to_jsonable
from synthreview.audit import CurationResult, Thresholds, rule_overlaps, rule_summary
from synthreview.schema import Schema

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
    "with a single quote (OWASP CSV injection guidance); numeric values were not altered; "
    "Parquet files are not escaped."
)


def _escape_cell(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith(FORMULA_TRIGGERS):
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
    import synthreview

    found = {"python": platform.python_version(), "synthreview": synthreview.__version__}
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


def release_dict(
    report_dict: Mapping[str, Any],
    *,
    audits: Mapping[str, pd.DataFrame] | None = None,
    curations: Mapping[str, CurationResult] | None = None,
    verdicts: Mapping[str, Any] | None = None,
    policy: Any = None,
    after: Mapping[str, Any] | None = None,
    after_verdicts: Mapping[str, Any] | None = None,
    references: Mapping[str, pd.DataFrame] | None = None,
    timestamp: datetime | None = None,
) -> dict[str, Any]:
    """``report.json`` content: the report plus audit, thresholds, verdicts, before/after.

    Added top-level keys: ``audit`` ``{name: {thresholds, rules, overlaps, n_rows, n_removed}}``
    (``rules`` carries ``reference_share`` when ``references`` gives the candidate's
    ``audit.holdout_audit``),
    ``curation`` ``{name: CurationResult.to_dict()}``, ``policy``, ``verdicts``
    ``{name: Verdicts.to_dict()}``, ``curated`` ``{name: candidate dict after curation}``
    (from ``audit.evaluate_curated``), ``curated_verdicts`` (the policy applied to those),
    ``generated_at`` and ``csv_formula_escaping``.
    """
    content = dict(report_dict)
    if audits:
        content["audit"] = {
            name: {
                "thresholds": audit.attrs.get("thresholds"),
                "n_rows": len(audit),
                "n_removed": int(audit["removed"].sum()),
                "rules": rule_summary(audit, (references or {}).get(name))
                .reset_index(names="rule")
                .to_dict(orient="records"),
                "overlaps": rule_overlaps(audit)[["rules", "n_rows"]].to_dict(orient="records"),
            }
            for name, audit in audits.items()
        }
    if curations:
        content["curation"] = {name: c.to_dict() for name, c in curations.items()}
    if policy is not None:
        content["policy"] = policy.to_dict()
    if verdicts:
        content["verdicts"] = {name: v.to_dict() for name, v in verdicts.items()}
    if after:
        content["curated"] = dict(after)
    if after_verdicts:
        content["curated_verdicts"] = {name: v.to_dict() for name, v in after_verdicts.items()}
    content["generated_at"] = (timestamp or datetime.now(UTC)).isoformat(timespec="seconds")
    content["csv_formula_escaping"] = ESCAPE_STATEMENT
    return to_jsonable(content)


def build_release(
    report_dict: Mapping[str, Any],
    *,
    audits: Mapping[str, pd.DataFrame] | None = None,
    curations: Mapping[str, CurationResult] | None = None,
    verdicts: Mapping[str, Any] | None = None,
    policy: Any = None,
    after: Mapping[str, Any] | None = None,
    after_verdicts: Mapping[str, Any] | None = None,
    references: Mapping[str, pd.DataFrame] | None = None,
    schema: Schema | None = None,
    params: Mapping[str, Any] | None = None,
    figures: Sequence[Any] | None = None,
    timestamp: datetime | None = None,
) -> dict[str, bytes]:
    """Every release file in memory: ``{relative path: bytes}`` (manifest last).

    Paths: ``report.json``, ``report.html``, per candidate ``NAME/audit.csv`` (when audited),
    ``NAME/curated.csv``, ``NAME/curated.parquet`` and ``NAME/removed.csv`` (when curated), and
    ``manifest.json``. ``NAME`` is ``safe_name(candidate)``. ``figures`` defaults to
    ``html_report.key_figures`` of the report.
    """
    from synthreview.html_report import key_figures, render_html

    moment = timestamp or datetime.now(UTC)
    content = release_dict(
        report_dict,
        audits=audits,
        curations=curations,
        verdicts=verdicts,
        policy=policy,
        after=after,
        after_verdicts=after_verdicts,
        references=references,
        timestamp=moment,
    )
    files: dict[str, bytes] = {"report.json": dumps(content)}
    figs = list(figures) if figures is not None else key_figures(content)
    files["report.html"] = render_html(content, figs, verdicts or {}).encode("utf-8")
    folders: dict[str, str] = {}
    for name in list(audits or {}) + [n for n in curations or {} if n not in (audits or {})]:
        folders[name] = safe_name(name, folders.values())
    for name, folder in folders.items():
        if audits and name in audits:
            files[f"{folder}/audit.csv"] = audit_csv_bytes(audits[name])
        if curations and name in curations:
            files[f"{folder}/curated.csv"] = curated_csv_bytes(curations[name], schema=schema)
            files[f"{folder}/curated.parquet"] = curated_parquet_bytes(curations[name])
            files[f"{folder}/removed.csv"] = removed_csv_bytes(curations[name], schema=schema)
    run_params = {
        "options": report_dict.get("options"),
        "sections": report_dict.get("sections"),
        "thresholds": {n: a.attrs.get("thresholds") for n, a in (audits or {}).items()},
        "policy": policy.to_dict() if policy is not None else None,
        **(params or {}),
    }
    files["manifest.json"] = dumps(
        manifest(
            report_dict.get("inputs") or [],
            files,
            run_params,
            int(report_dict.get("seed") or 0),
            timestamp=moment,
        )
    )
    return files


def write_files(out_dir: str | Path, files: Mapping[str, bytes]) -> list[Path]:
    """Write ``{relative path: bytes}`` (e.g. ``Release.files``) under ``out_dir``."""
    out = Path(out_dir)
    written = []
    for rel, data in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def write_release(out_dir: str | Path, report_dict: Mapping[str, Any], **kwargs: Any) -> list[Path]:
    """Write ``build_release(report_dict, **kwargs)`` under ``out_dir``; return the paths."""
    return write_files(out_dir, build_release(report_dict, **kwargs))


def zip_bytes(files: Mapping[str, bytes]) -> bytes:
    """All release files in one ZIP (fixed timestamps, so equal files give an equal archive)."""
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buf.getvalue()


@dataclass(frozen=True)
class Release:
    """All a release produces, in memory: the CLI writes ``files``, the dashboard serves them.

    Attributes
    ----------
    files : dict of str to bytes
        ``build_release`` output.
    audits : dict of str to DataFrame
    curations : dict of str to CurationResult
        Empty unless curated.
    verdicts, after_verdicts : dict of str to Verdicts
        The policy applied to the candidates as submitted, and to their curated versions.
    policy : Policy
    """

    files: dict[str, bytes]
    audits: dict[str, pd.DataFrame]
    curations: dict[str, CurationResult]
    verdicts: dict[str, Any]
    after_verdicts: dict[str, Any]
    policy: Any

    @property
    def failed(self) -> dict[str, list[Any]]:
        """Candidate -> the rules it fails (as submitted), for candidates that fail."""
        return {n: v.failed for n, v in self.verdicts.items() if v.overall == "fail"}

    @property
    def exit_code(self) -> int:
        """1 when any candidate as submitted fails the policy, else 0 (the CLI's contract).

        Judged before curation on purpose: a generator that memorises must not pass because the
        audit happened to strip most of its copies.
        """
        return 1 if self.failed else 0


def review_release(
    review: Any,
    report: Any,
    *,
    policy: Any = None,
    thresholds: Thresholds | Mapping[str, Thresholds] | None = None,
    curate: bool = False,
    params: Mapping[str, Any] | None = None,
    device: str = "cpu",
    progress: Any = None,
    timestamp: datetime | None = None,
) -> Release:
    """Audit, optionally curate and re-evaluate, apply the policy and build every release file.

    Parameters
    ----------
    review : Review
    report : report.Report
        From ``report.evaluate(review, ...)``; its seed, options, sections and context are re-used
        for the "after curation" evaluation.
    policy : Policy, optional
        Default: ``policy.load_policy()``.
    thresholds : Thresholds or mapping of candidate name to Thresholds, optional
        Default per candidate: ``audit.default_thresholds(privacy)``.
    curate : bool
        Write curated files and before/after metrics.
    """
    from synthreview.audit import audit_table, default_thresholds, evaluate_curated, holdout_audit
    from synthreview.audit import curate as curate_table
    from synthreview.policy import apply_policy, load_policy

    policy = policy if policy is not None else load_policy()
    content = report.to_dict()
    verdicts = {n: apply_policy(policy, c) for n, c in content["candidates"].items()}
    audits: dict[str, pd.DataFrame] = {}
    references: dict[str, pd.DataFrame] = {}
    for name, result in report.candidates.items():
        if result.fidelity is None and result.privacy is None:
            continue
        chosen = thresholds.get(name) if isinstance(thresholds, Mapping) else thresholds
        chosen = chosen or default_thresholds(result.privacy)
        audits[name] = audit_table(result.fidelity, result.privacy, chosen)
        references[name] = holdout_audit(result.fidelity, result.privacy, chosen)
    curations: dict[str, CurationResult] = {}
    after: dict[str, Any] = {}
    after_verdicts: dict[str, Any] = {}
    if curate and audits:
        curations = {n: curate_table(review.synthetic[n], a) for n, a in audits.items()}
        after_report = evaluate_curated(
            review,
            curations,
            context=report.context,
            sections=report.sections,
            options=report.options,
            seed=report.seed,
            device=device,
            progress=progress,
        )
        after = after_report.to_dict()["candidates"]
        for name, curation in curations.items():
            if not len(curation.kept_rows):
                after[name] = {"errors": {"curation": "every row was removed; nothing to measure"}}
        after_verdicts = {n: apply_policy(policy, c) for n, c in after.items()}
    files = build_release(
        content,
        audits=audits,
        curations=curations,
        verdicts=verdicts,
        policy=policy,
        after=after,
        after_verdicts=after_verdicts,
        references=references,
        schema=review.schema,
        params=params,
        timestamp=timestamp,
    )
    return Release(files, audits, curations, verdicts, after_verdicts, policy)
