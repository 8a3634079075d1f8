"""Release orchestration: audit, curate, apply the policy and build every release file at once.

``review_release`` is what the CLI (``--out DIR``) and the dashboard call; ``build_release`` lays
out the files (``report.json``, ``report.html``, per-candidate CSV / Parquet, ``manifest.json``)
from the byte builders of ``synthreview.release.export``, which re-exports every name here.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from synthreview.io.schema import Schema
from synthreview.judgement.decision import Decision, decide_all, exit_code
from synthreview.judgement.policy import load_policy
from synthreview.metrics.glucose.trace_rules import trace_rule_columns
from synthreview.release.audit import (
    Thresholds,
    audit_table,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.controls import planted_controls
from synthreview.release.curation import CurationResult, evaluate_curated
from synthreview.release.curation import curate as curate_table
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.export import (
    ESCAPE_STATEMENT,
    audit_csv_bytes,
    curated_csv_bytes,
    curated_parquet_bytes,
    dumps,
    manifest,
    removed_csv_bytes,
    safe_name,
)
from synthreview.release.html import key_figures, render_html
from synthreview.release.reattack import compare_attacks
from synthreview.release.verdicts import copy_excess, judge_audited
from synthreview.results import to_jsonable


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
    reattacks: Mapping[str, Any] | None = None,
    controls: Any = None,
    timestamp: datetime | None = None,
) -> dict[str, Any]:
    """``report.json`` content: the report plus audit, thresholds, verdicts, before/after.

    Added top-level keys: ``audit`` ``{name: {thresholds, rules, overlaps, n_rows, n_removed}}``
    (``rules`` carries ``reference_share`` when ``references`` gives the candidate's
    ``audit.holdout_audit``),
    ``curation`` ``{name: CurationResult.to_dict()}``, ``policy``, ``verdicts``
    ``{name: Verdicts.to_dict()}``, ``curated`` ``{name: candidate dict after curation}``
    (from ``audit.evaluate_curated``), ``curated_verdicts`` (the policy applied to those),
    ``reattack`` ``{name: Reattack.to_dict()}`` (every attack before -> after curation),
    ``controls`` (``PlantedControls.to_dict()``), ``generated_at`` and
    ``csv_formula_escaping``. Each audit rule carries its ``threshold`` and ``expected_fpr``
    (the share of a fresh real sample it removes).
    """
    # synthreview.release.export re-exports this module, so its names are imported at call time

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
                "copies": copy_excess(audit, (references or {}).get(name)).to_dict(),
                "ratio_space": (audit.attrs.get("calibration") or {}).get("ratio_space"),
            }
            for name, audit in audits.items()
        }
    if curations:
        content["curation"] = {name: c.to_dict() for name, c in curations.items()}
    if policy is not None:
        content["policy"] = policy.to_dict()
    if verdicts:
        content["verdicts"] = {name: v.to_dict() for name, v in verdicts.items()}
        # one decision per candidate, the same the CLI prints and exits with
        decisions = decide_all(verdicts, after_verdicts)
        content["decisions"] = {name: d.to_dict() for name, d in decisions.items()}
    if after:
        content["curated"] = dict(after)
    if after_verdicts:
        content["curated_verdicts"] = {name: v.to_dict() for name, v in after_verdicts.items()}
    if reattacks:
        content["reattack"] = {name: r.to_dict() for name, r in reattacks.items()}
    if controls is not None:
        content["controls"] = controls.to_dict()
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
    reattacks: Mapping[str, Any] | None = None,
    controls: Any = None,
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
        reattacks=reattacks,
        controls=controls,
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
        The policy (plus the audit's ``audit_copies`` rule) applied to the candidates as
        submitted, and to their curated versions (plus ``reattack``).
    policy : Policy
    reattacks : dict of str to Reattack
        Every attack before -> after curation (empty unless curated).
    controls : PlantedControls or None
    """

    files: dict[str, bytes]
    audits: dict[str, pd.DataFrame]
    curations: dict[str, CurationResult]
    verdicts: dict[str, Any]
    after_verdicts: dict[str, Any]
    policy: Any
    reattacks: dict[str, Any] = field(default_factory=dict)
    controls: Any = None

    @property
    def failed(self) -> dict[str, list[Any]]:
        """Candidate -> the rules it fails (as submitted), for candidates that fail."""
        return {n: v.failed for n, v in self.verdicts.items() if v.overall == "fail"}

    @property
    def decisions(self) -> dict[str, Decision]:
        """One decision per candidate (``judgement.decision``), as the CLI prints it."""
        return decide_all(self.verdicts, self.after_verdicts)

    @property
    def exit_code(self) -> int:
        """1 when a candidate as submitted fails the policy, else 3 when one is incomplete, else 0.

        Judged before curation on purpose: a generator that memorises must not pass because the
        audit happened to strip most of its copies.
        """
        return exit_code(self.decisions)


def audit_candidate(
    report: Any, name: str, thresholds: Thresholds | None = None
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Audit table and holdout audit of candidate ``name`` (None without fidelity or privacy).

    The authenticity ratio is taken in the encoder space of the report's fitted context
    (``evidence.copy_evidence_for``) when there is one. The CLI, the release bundle and the
    dashboard's run all audit through here, so they flag the same rows.
    """
    result = report.candidates[name]
    if result.fidelity is None and result.privacy is None:
        return None
    chosen = thresholds or Thresholds()
    copies = copy_evidence_for(report, name)
    # trace reviews: plausibility and memorised-subject rules from the glucose section
    glucose = getattr(result, "glucose", None)
    traces = trace_rule_columns(glucose) if glucose is not None else None
    held = trace_rule_columns(glucose, holdout=True) if glucose is not None else None
    audit = audit_table(result.fidelity, result.privacy, chosen, copies=copies, traces=traces)
    reference = holdout_audit(result.fidelity, result.privacy, chosen, copies=copies, traces=held)
    return audit, reference


def audit_candidates(
    report: Any, thresholds: Thresholds | Mapping[str, Thresholds] | None = None
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """:func:`audit_candidate` of every candidate with fidelity or privacy results."""
    audits: dict[str, pd.DataFrame] = {}
    references: dict[str, pd.DataFrame] = {}
    for name in report.candidates:
        chosen = thresholds.get(name) if isinstance(thresholds, Mapping) else thresholds
        found = audit_candidate(report, name, chosen)
        if found is not None:
            audits[name], references[name] = found
    return audits, references


def review_release(
    review: Any,
    report: Any,
    *,
    policy: Any = None,
    thresholds: Thresholds | Mapping[str, Thresholds] | None = None,
    curate: bool = False,
    controls: bool = False,
    control_rows: int | None = None,
    params: Mapping[str, Any] | None = None,
    device: str = "cpu",
    progress: Any = None,
    timestamp: datetime | None = None,
) -> Release:
    """Audit, optionally curate, re-evaluate and re-attack, apply the policy, build the files.

    Parameters
    ----------
    review : Review
    report : report.Report
        From ``report.evaluate(review, ...)``; its seed, options, sections and context are re-used
        for the "after curation" evaluation and the controls.
    policy : Policy, optional
        Default: ``policy.load_policy()``.
    thresholds : Thresholds or mapping of candidate name to Thresholds, optional
        Default: ``Thresholds()`` (holdout-calibrated rules, 1 % quantile).
    curate : bool
        Write curated files, before/after metrics and the re-attack table.
    controls : bool
        Add the planted-leak control table (``controls.planted_controls``; table reviews with
        a holdout of at least 20 rows).
    control_rows : int, optional
        Rows per control candidate (default ``min(n_holdout // 2, 1000)``).
    """

    policy = policy if policy is not None else load_policy()
    content = report.to_dict()
    audits, references = audit_candidates(report, thresholds)
    verdicts = {}
    excess = {n: copy_excess(audits[n], references[n]) for n in audits}
    for name, candidate in content["candidates"].items():
        verdicts[name] = judge_audited(
            policy, candidate, copies=excess.get(name), kind=content.get("kind")
        )
    curations: dict[str, CurationResult] = {}
    after: dict[str, Any] = {}
    after_verdicts: dict[str, Any] = {}
    reattacks: dict[str, Any] = {}
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
        after_audits, after_refs = audit_candidates(after_report, thresholds)
        after_excess = {n: copy_excess(after_audits[n], after_refs[n]) for n in after_audits}
        for name, curation in curations.items():
            if not len(curation.kept_rows):
                after[name] = {"errors": {"curation": "every row was removed; nothing to measure"}}
        for name, candidate in after.items():
            if name in content["candidates"] and len(curations[name].kept_rows):
                reattacks[name] = compare_attacks(content["candidates"][name], candidate)
            after_verdicts[name] = judge_audited(
                policy,
                candidate,
                copies=after_excess.get(name),
                reattack=reattacks.get(name),
                kind=content.get("kind"),
            )
    control_table = None
    if controls and review.kind == "table" and review.holdout is not None:
        control_table = planted_controls(
            review,
            report,
            n_rows=control_rows,
            policy=policy,
            thresholds=thresholds if isinstance(thresholds, Thresholds) else None,
        )
    files = build_release(
        content,
        audits=audits,
        curations=curations,
        verdicts=verdicts,
        policy=policy,
        after=after,
        after_verdicts=after_verdicts,
        references=references,
        reattacks=reattacks,
        controls=control_table,
        schema=review.schema,
        params=params,
        timestamp=timestamp,
    )
    return Release(
        files, audits, curations, verdicts, after_verdicts, policy, reattacks, control_table
    )
