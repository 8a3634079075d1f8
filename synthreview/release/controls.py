"""Planted-leak controls: what this review can and cannot see at this sample size.

The same review (same sections, options, seed, policy and audit thresholds) is run on control
candidates whose truth is known: a *fresh-like* sample of real rows the generator never saw,
with 0 %, 1 % and 5 % of it replaced by training rows (exact copies). A reviewer reads which
audit rules and which attacks detect the planted rows and whether the release policy fails
them; the default policy must fail 5 % planted copies and pass the clean sample.

Construction (seeded by ``seed``): the holdout rows are shuffled and split in two halves; the
first half (or its first ``n_rows`` rows) is the fresh-like base, the second half is the holdout
of the control review, so base and reference never share a row. Planted training rows are drawn
without replacement, the 1 % set inside the 5 % set, and put at random positions. In a
person-level review (``options.person``) both splits divide people (:mod:`synthreview.splits`):
base and control holdout hold different holdout people, and planted rows are all rows of
whole training people, as many people as fit in the planted share. The encoder
and the embedding fitted on the real data are re-used (rows are indexed, not refitted), so a
control costs the sections' time on ``n_rows`` candidate rows; ``n_rows`` and ``max_attack``
bound it (defaults: half the holdout, at most 1,000 rows; the review's ``max_attack`` capped at
1,000).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError, DataError
from synthreview.io.persons import person_ids
from synthreview.io.schema import Review
from synthreview.judgement.policy import Policy, load_policy
from synthreview.release.audit import RULES, Thresholds, audit_table, holdout_audit
from synthreview.release.evidence import copy_evidence_for
from synthreview.release.verdicts import copy_excess, judge_audited
from synthreview.results import to_jsonable
from synthreview.review import Context, Report, evaluate
from synthreview.sampling import sample_review
from synthreview.splits import draw_rows, permute_rows

__all__ = ["DEFAULT_SHARES", "ControlRow", "PlantedControls", "planted_controls"]

DEFAULT_SHARES = (0.0, 0.01, 0.05)
DEFAULT_ROWS = 1_000
DEFAULT_MAX_ATTACK = 1_000


@dataclass(frozen=True)
class ControlRow:
    """One control candidate: what the audit, the attacks and the policy saw.

    ``rules``: share of the candidate's rows each audit rule flags; ``recall``: share of the
    planted rows each rule flags (NaN with nothing planted); ``attacks``: attack name ->
    ``{"auc", "tpr_at_fpr_1pct"}``; ``verdict``: the overall verdict (policy and the
    ``audit_copies`` rule); ``failed``: rules that failed.
    """

    name: str
    planted_share: float
    n_rows: int
    n_planted: int
    removed_share: float
    planted_recall: float
    rules: dict[str, float]
    recall: dict[str, float]
    attacks: dict[str, dict[str, float]]
    verdict: str
    failed: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready row."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


@dataclass(frozen=True)
class PlantedControls:
    """The planted-leak control table of a review."""

    rows: tuple[ControlRow, ...]
    n_base: int
    n_holdout: int
    seed: int
    max_attack: int
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready table and how it was built."""
        return to_jsonable(
            {
                "rows": [r.to_dict() for r in self.rows],
                "n_base": self.n_base,
                "n_holdout": self.n_holdout,
                "seed": self.seed,
                "max_attack": self.max_attack,
                "note": self.note,
            }
        )


def _digest(*parts: np.ndarray | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def planted_controls(
    review: Review,
    report: Report,
    *,
    shares: Sequence[float] = DEFAULT_SHARES,
    n_rows: int | None = None,
    max_attack: int | None = None,
    policy: Policy | None = None,
    thresholds: Thresholds | None = None,
    seed: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> PlantedControls:
    """Run the review on fresh-like candidates with planted training rows (see module doc).

    Parameters
    ----------
    review : Review
        A table review with a holdout of at least 20 rows.
    report : Report
        Its ``evaluate`` result; sections, options, seed and fitted context are re-used.
    shares : sequence of float in [0, 0.5]
        Planted shares (default 0, 1 %, 5 %).
    n_rows : int, optional
        Rows of each control candidate (default ``min(n_holdout // 2, 1000)``).
    max_attack : int, optional
        Members / non-members per attack (default ``min(options.max_attack, 1000)``).
    policy : Policy, optional
        Default: the shipped policy.
    thresholds : Thresholds, optional
        Audit thresholds (default: the default calibrated rules).
    seed : int, optional
        Default: the report's seed.

    Returns
    -------
    PlantedControls
    """
    if review.kind != "table":
        raise ConfigError("planted-leak controls need a table review; got glucose traces")
    if report.sampling is not None:  # planted in the samples the report was estimated on
        review, _ = sample_review(review, report.options.sample_rows, seed=report.seed)
    if review.holdout is None or review.holdout.n_rows < 20:
        raise DataError("planted-leak controls need a holdout of at least 20 rows")
    bad = [s for s in shares if not 0.0 <= float(s) <= 0.5]
    if bad:
        raise ConfigError(f"shares must be in [0, 0.5]; got {bad} instead")
    seed = report.seed if seed is None else int(seed)
    policy = policy if policy is not None else load_policy()
    thresholds = thresholds or Thresholds()
    n_h, n_train = review.holdout.n_rows, review.real.n_rows
    half = n_h // 2
    n_base = min(half, DEFAULT_ROWS) if n_rows is None else int(n_rows)
    if not 10 <= n_base <= half:
        raise ConfigError(f"n_rows must be in [10, {half}] (half the holdout); got {n_rows}")
    rng = np.random.default_rng(seed)
    # a person-level review divides people: base and reference hold different people, and
    # planted rows are whole training people (their rows consecutive, the first ones in 1 %)
    person = report.options.person
    hold_ids = None if person is None else person_ids(review.holdout.frame[person])
    real_ids = None if person is None else person_ids(review.real.frame[person])
    order = permute_rows(rng, n_h, groups=hold_ids)
    cut_base, cut_reference = n_base, half
    if hold_ids is not None:
        cut_base = _person_boundary(hold_ids[order], n_base)
        cut_reference = _person_boundary(hold_ids[order], max(half, cut_base))
    base, reference = np.sort(order[:cut_base]), np.sort(order[cut_reference:])
    n_base = len(base)
    if len(reference) < 2:
        raise DataError("planted-leak controls need holdout people on both sides of the split")
    n_max = max(round(max(shares) * n_base), 0)
    planted_train = draw_rows(rng, n_train, min(n_max, n_train), groups=real_ids,
                              drawn_order=True)[:n_max]  # fmt: skip
    positions = permute_rows(rng, n_base)

    hold, real = review.holdout, review.real
    tables, truth, sources = {}, {}, {}
    for share in shares:
        k = min(round(float(share) * n_base), len(planted_train))
        is_planted = np.zeros(n_base, dtype=bool)
        is_planted[positions[:k]] = True
        train_rows = np.full(n_base, -1, dtype=np.int64)
        train_rows[positions[:k]] = planted_train[:k]
        # base rows then planted rows, re-ordered so each planted row takes its position
        index = np.arange(n_base)
        index[positions[:k]] = n_base + np.arange(k)

        def mixed(h: pd.DataFrame, r: pd.DataFrame, index=index) -> pd.DataFrame:
            both = pd.concat([h, r], ignore_index=True)
            return both.iloc[index].reset_index(drop=True)

        picked = planted_train[:k]
        frame = mixed(hold.frame.iloc[base], real.frame.iloc[picked])
        # only the rows used, as written (``raw`` would build every cell of both tables)
        raw = mixed(hold.raw_rows(base), real.raw_rows(picked))
        name = f"planted {float(share):.0%}"
        tables[name] = replace(
            hold,
            name=name,
            role="synthetic",
            frame=frame,
            raw=raw,
            sha256=_digest(hold.sha256, base, train_rows),
            source_format="memory",
        )
        truth[name], sources[name] = is_planted, train_rows
    ref_table = replace(
        hold,
        frame=hold.frame.iloc[reference].reset_index(drop=True),
        raw=hold.raw_rows(reference),
        sha256=_digest(hold.sha256, reference),
    )
    controls = replace(review, synthetic=tables, holdout=ref_table)
    context = _context(report.context, base, reference, sources)
    options = report.options
    attack = min(options.max_attack, DEFAULT_MAX_ATTACK) if max_attack is None else max_attack
    result = evaluate(
        controls,
        sections=report.sections,
        options=replace(options, max_attack=attack),
        seed=seed,
        context=context,
        progress=progress,
        threads=report.threads,
        approximate=report.approximate,
    )
    rows = [
        _row(name, float(share), result, truth[name], policy, thresholds)
        for share, name in zip(shares, tables, strict=True)
    ]
    return PlantedControls(tuple(rows), n_base, len(reference), seed, int(attack))


def _person_boundary(ids: np.ndarray, k: int) -> int:
    """The first position ``>= k`` where a new person starts in ``ids`` (people consecutive)."""
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1], True])
    return int(starts[np.searchsorted(starts, k)])


def _context(
    context: Context | None, base: np.ndarray, reference: np.ndarray, sources: dict
) -> Context | None:
    """The review's fitted context with control rows indexed from holdout and training rows."""
    if context is None or "holdout" not in (context.encoded or {}):
        return None

    def cut(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = {"real": arrays["real"], "holdout": arrays["holdout"][reference]}
        for name, train_rows in sources.items():
            rows = np.array(arrays["holdout"][base])
            planted = train_rows >= 0
            rows[planted] = arrays["real"][train_rows[planted]]
            out[name] = rows
        return out

    return Context(context.encoder, context.embedding, cut(context.encoded), cut(context.embedded))


def _row(name, share, result, planted, policy, thresholds) -> ControlRow:
    candidate = result.candidates[name]
    audit = audit_table(
        candidate.fidelity, candidate.privacy, thresholds, copies=copy_evidence_for(result, name)
    )
    reference = holdout_audit(
        candidate.fidelity, candidate.privacy, thresholds, copies=copy_evidence_for(result, name)
    )
    verdicts = judge_audited(policy, candidate.to_dict(), copies=copy_excess(audit, reference))
    removed = audit["removed"].to_numpy(dtype=bool)

    def recall(flags: np.ndarray) -> float:
        return float(flags[planted].mean()) if planted.any() else float("nan")

    attacks = {
        a.attack: {"auc": float(a.auc), "tpr_at_fpr_1pct": float(a.tpr_at_fpr_1pct)}
        for a in getattr(candidate.privacy, "membership_inference", ()) or ()
        if getattr(a, "error", None) is None
    }
    return ControlRow(
        name=name,
        planted_share=share,
        n_rows=len(audit),
        n_planted=int(planted.sum()),
        removed_share=float(removed.mean()),
        planted_recall=recall(removed),
        rules={r: float(audit[r].mean()) for r in RULES},
        recall={r: recall(audit[r].to_numpy(dtype=bool)) for r in RULES},
        attacks=attacks,
        verdict=verdicts.overall,
        failed=tuple(r.rule for r in verdicts.failed),
    )
