"""Every release file of one review, in memory: the record and the data that may ship.

:func:`build_release` lays out ``report.json``, ``report.html``, per-candidate CSV / Parquet and
``manifest.json`` (last) from the byte builders of :mod:`synthreview.release.export` and the HTML
record of :mod:`synthreview.release.html`. It files what it is given, except a curated file of a
candidate whose decision does not ship; what is released and why is decided by the one pipeline,
:mod:`synthreview.release.pipeline`.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from synthreview.io.schema import Schema
from synthreview.judgement.context import ReleaseContext
from synthreview.judgement.decision import Decision
from synthreview.judgement.ledger import PriorRelease, cap_decisions
from synthreview.judgement.policy import LedgerLimits, Policy, Verdicts
from synthreview.judgement.waivers import Waiver, decide_with_waivers
from synthreview.release.audit import Thresholds, copy_counts, rule_overlaps, rule_summary
from synthreview.release.controls import PlantedControls
from synthreview.release.croissant import croissant_card
from synthreview.release.curation import CurationResult
from synthreview.release.export import (
    ESCAPE_STATEMENT,
    audit_csv_bytes,
    curated_csv_bytes,
    curated_parquet_bytes,
    dumps,
    manifest,
    removed_csv_bytes,
    safe_name,
    source_index,
)
from synthreview.release.html import key_figures, render_html
from synthreview.release.reattack import Reattack
from synthreview.release.signoff import SignOff
from synthreview.release.verdicts import CopyExcess
from synthreview.results import to_jsonable

JsonDict = dict[str, object]


@dataclass(frozen=True)
class AuditRecord:
    """One candidate's audit as the record files it.

    Attributes
    ----------
    audit, reference : pandas.DataFrame
        ``release.audit.audit_table`` and ``holdout_audit``.
    thresholds : Thresholds
    copies : CopyExcess
        What the ``audit_copies`` rule judged.
    """

    audit: pd.DataFrame
    reference: pd.DataFrame
    thresholds: Thresholds
    copies: CopyExcess

    def to_dict(self) -> JsonDict:
        """``report.json``'s ``audit.NAME`` entry."""
        calibration = self.audit.attrs.get("calibration") or {}
        return {
            "thresholds": self.thresholds.to_dict(),
            "n_rows": len(self.audit),
            "n_removed": int(self.audit["removed"].sum()),
            "rules": rule_summary(self.audit, self.reference)
            .reset_index(names="rule")
            .to_dict(orient="records"),
            "overlaps": rule_overlaps(self.audit)[["rules", "n_rows"]].to_dict(orient="records"),
            "copies": self.copies.to_dict(),
            "copy_counts": copy_counts(self.audit).to_dict(),
            "ratio_space": calibration.get("ratio_space"),
            # a review estimated on samples audits every row through a faiss index: its
            # measured recall is part of the record (absent on the exact path)
            **(
                {"neighbour_search": list(self.audit.attrs["search"])}
                if self.audit.attrs.get("search")
                else {}
            ),
        }


def release_dict(
    report_dict: Mapping[str, object],
    *,
    audits: Mapping[str, AuditRecord] | None = None,
    curations: Mapping[str, CurationResult] | None = None,
    verdicts: Mapping[str, Verdicts] | None = None,
    policy: Policy | None = None,
    after: Mapping[str, Mapping[str, object]] | None = None,
    after_verdicts: Mapping[str, Verdicts] | None = None,
    reattacks: Mapping[str, Reattack] | None = None,
    controls: PlantedControls | None = None,
    signoff: Mapping[str, SignOff] | None = None,
    context: ReleaseContext | None = None,
    prior: Sequence[PriorRelease] = (),
    waivers: Sequence[Waiver] = (),
    timestamp: datetime | None = None,
) -> JsonDict:
    """``report.json`` content: the report plus audit, policy, verdicts, decisions, before/after.

    Added top-level keys: ``audit`` ``{name: AuditRecord.to_dict()}`` (each rule with its
    ``threshold``, ``expected_fpr`` and the holdout's ``reference_share``), ``curation``
    ``{name: CurationResult.to_dict()}``, ``policy``, ``verdicts`` ``{name: Verdicts.to_dict()}``,
    ``decisions`` (one per candidate: ``judgement.decision.decide``, the same the screen shows
    and the CLI exits with), ``curated`` ``{name: candidate dict after curation}``,
    ``curated_verdicts``, ``reattack`` ``{name: Reattack.to_dict()}``, ``controls``,
    ``signoff`` ``{name: SignOff.to_dict()}`` (the meeting's decision, when given),
    ``context`` (``ReleaseContext.to_dict()``, or None: no context was given), ``ledger``
    (the earlier releases from the same source, ``prior``, and the policy's caps: a candidate
    that would ship past them is *do not release*, ``judgement.ledger.cap_decisions``),
    ``waivers`` (each requested exception with its status; only an approved one changes a
    decision, ``judgement.waivers.decide_with_waivers``),
    ``generated_at`` and ``csv_formula_escaping``.
    """
    content: JsonDict = dict(report_dict)
    if audits:
        content["audit"] = {name: record.to_dict() for name, record in audits.items()}
    if curations:
        content["curation"] = {name: c.to_dict() for name, c in curations.items()}
    if policy is not None:
        content["policy"] = policy.to_dict()
    if verdicts:
        content["verdicts"] = {name: v.to_dict() for name, v in verdicts.items()}
        decisions = _decisions(verdicts, after_verdicts, policy, prior, report_dict, waivers)
        content["decisions"] = {name: d.to_dict() for name, d in decisions.items()}
    if after:
        content["curated"] = {name: dict(c) for name, c in after.items()}
    if after_verdicts:
        content["curated_verdicts"] = {name: v.to_dict() for name, v in after_verdicts.items()}
    if reattacks:
        content["reattack"] = {name: r.to_dict() for name, r in reattacks.items()}
    if controls is not None:
        content["controls"] = controls.to_dict()
    if signoff:
        content["signoff"] = {name: s.to_dict() for name, s in signoff.items()}
    content["context"] = context.to_dict() if context is not None else None
    if waivers:
        content["waivers"] = [w.to_dict() for w in waivers]
    if prior or (policy is not None and policy.ledger != LedgerLimits()):
        content["ledger"] = {
            "earlier": [p.describe() for p in prior],
            "released_before": sum(p.shipped for p in prior),
            "limits": policy.ledger.to_dict() if policy is not None else None,
        }
    content["generated_at"] = (timestamp or datetime.now(UTC)).isoformat(timespec="seconds")
    content["csv_formula_escaping"] = ESCAPE_STATEMENT
    return to_jsonable(content)


def build_release(
    report_dict: Mapping[str, object],
    *,
    audits: Mapping[str, AuditRecord] | None = None,
    curations: Mapping[str, CurationResult] | None = None,
    verdicts: Mapping[str, Verdicts] | None = None,
    policy: Policy | None = None,
    after: Mapping[str, Mapping[str, object]] | None = None,
    after_verdicts: Mapping[str, Verdicts] | None = None,
    reattacks: Mapping[str, Reattack] | None = None,
    controls: PlantedControls | None = None,
    signoff: Mapping[str, SignOff] | None = None,
    schema: Schema | None = None,
    sources: Sequence[str | os.PathLike[str] | bytes] = (),
    params: Mapping[str, object] | None = None,
    figures: Sequence[go.Figure] | None = None,
    context: ReleaseContext | None = None,
    prior: Sequence[PriorRelease] = (),
    waivers: Sequence[Waiver] = (),
    timestamp: datetime | None = None,
) -> dict[str, bytes]:
    """Every release file in memory: ``{relative path: bytes}`` (manifest last).

    Paths: ``report.json``, ``report.html``, per candidate ``NAME/audit.csv`` (when audited),
    ``NAME/removed.csv`` (when curated), ``NAME/curated.csv`` and ``NAME/curated.parquet`` (when
    curated and its decision ships: ``Decision.ships``, release or release after curation; a
    candidate without verdicts has no decision and ships nothing), and ``manifest.json`` (it
    lists the files written, so a signed statement never names a file that is not there).
    ``NAME`` is ``safe_name(candidate)``. ``figures`` defaults to ``html.key_figures`` of the
    record. ``sources`` are the candidates' input files (paths or
    bytes): a curated candidate's rows are then copied byte for byte from its own file
    (``export.curated_csv_bytes``).
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
        reattacks=reattacks,
        controls=controls,
        signoff=signoff,
        context=context,
        prior=prior,
        waivers=waivers,
        timestamp=moment,
    )
    files: dict[str, bytes] = {"report.json": dumps(content)}
    figs = list(figures) if figures is not None else key_figures(content)
    files["report.html"] = render_html(content, figs).encode("utf-8")
    # folders over every candidate of the report, so a candidate's folder never depends on
    # which others were audited (the dashboard names its downloads the same way)
    reviewed = report_dict.get("candidates")
    names = list(reviewed) if isinstance(reviewed, Mapping) else []
    for name in [*(audits or {}), *(curations or {})]:
        if name not in names:
            names.append(name)
    # only what may ship is shipped: a rejected or incomplete candidate keeps its audit evidence
    # (audit.csv, removed.csv, report.json) and never a curated file
    decided = _decisions(verdicts or {}, after_verdicts, policy, prior, report_dict, waivers)
    ships = {n for n, d in decided.items() if d.ships}
    # every source hashed once, not once per curated candidate and file
    by_digest = source_index(sources) if curations and sources else {}
    for name, folder in folder_names(names).items():
        if audits and name in audits:
            files[f"{folder}/audit.csv"] = audit_csv_bytes(audits[name].audit)
        if curations and name in curations:
            own = by_digest.get(curations[name].source_sha256)
            own_source = () if own is None else (own,)
            if name in ships:
                files[f"{folder}/curated.csv"] = curated_csv_bytes(
                    curations[name], schema=schema, sources=own_source
                )
                files[f"{folder}/curated.parquet"] = curated_parquet_bytes(curations[name])
                # the card describes the shipped file; the manifest and the statement list it
                files[f"{folder}/croissant.json"] = croissant_card(
                    name,
                    folder=folder,
                    curation=curations[name],
                    curated_csv=files[f"{folder}/curated.csv"],
                    decision=decided[name],
                    context=context,
                    policy=policy.to_dict() if policy is not None else None,
                )
            files[f"{folder}/removed.csv"] = removed_csv_bytes(
                curations[name], schema=schema, sources=own_source
            )
    run_params = {
        "options": report_dict.get("options"),
        "sections": report_dict.get("sections"),
        "thresholds": {n: a.thresholds.to_dict() for n, a in (audits or {}).items()},
        "policy": policy.to_dict() if policy is not None else None,
        **(params or {}),
    }
    seed = report_dict.get("seed")
    files["manifest.json"] = dumps(
        manifest(
            report_dict.get("inputs") or [],
            files,
            run_params,
            int(seed) if isinstance(seed, int) else 0,
            timestamp=moment,
        )
    )
    return files


def _decisions(
    verdicts: Mapping[str, Verdicts],
    after_verdicts: Mapping[str, Verdicts] | None,
    policy: Policy | None,
    prior: Sequence[PriorRelease],
    report_dict: Mapping[str, object],
    waivers: Sequence[Waiver] = (),
) -> dict[str, Decision]:
    """One decision per candidate (approved waivers applied), a candidate past the policy's
    ledger caps not released."""
    decisions = decide_with_waivers(verdicts, after_verdicts, waivers)
    if policy is None or policy.ledger == LedgerLimits():
        return decisions
    options = report_dict.get("options")
    claimed = options.get("claimed_epsilon") if isinstance(options, Mapping) else None
    return cap_decisions(
        decisions,
        prior,
        policy.ledger,
        claimed_epsilon=float(claimed) if isinstance(claimed, int | float) else None,
    )


def folder_names(names: Iterable[str]) -> dict[str, str]:
    """``{candidate: its folder in the record}``: ``safe_name`` of each, unique, in order."""
    folders: dict[str, str] = {}
    for name in names:
        folders[name] = safe_name(name, folders.values())
    return folders


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


def zip_bytes(files: Mapping[str, bytes]) -> bytes:
    """All release files in one ZIP (fixed timestamps, so equal files give an equal archive)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buf.getvalue()
