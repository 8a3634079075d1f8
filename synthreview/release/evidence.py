"""Copy evidence in the encoder space: authenticity ratio, nearest training row, columns to blame.

The authenticity ratio of Alaa et al. (2022, §3.3 and §4) is ``d(ŷ, x*) / NND(x*)``: the
distance from a row ``ŷ`` to its nearest training row ``x*`` over that training row's distance
to *its* nearest other training row. The paper calls a row unauthentic when the ratio is
``<= 1``, which flags about half of a fresh real sample by construction; the audit instead
compares the ratio with the same ratio of holdout rows (``synthreview.release.calibration``).

It is computed here in the encoder space (``TabularEncoder``: standardised numbers, one-hot
categories), where a copy with a little noise stays a near copy, rather than in the learned
One-Class embedding. Training rows are deduplicated first (``numpy.unique``, content-sorted), so
``NND`` is the distance to the nearest *different* training row, a duplicated training record
does not make every near copy of it look infinitely far, and the result does not depend on the
order of the training rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from synthreview.engine import current_engine
from synthreview.errors import DataError
from synthreview.memo import Memo, array_digest
from synthreview.neighbors import nearest
from synthreview.results import to_jsonable
from synthreview.review import Report

__all__ = ["CopyEvidence", "copy_evidence", "copy_evidence_for"]


@dataclass(frozen=True)
class CopyEvidence:
    """Per-row copy evidence of one candidate and of the holdout, in the encoder space.

    Attributes
    ----------
    ratio : ndarray (n_synthetic,)
        Authenticity ratio ``d(ŷ, x*) / NND(x*)``, ``>= 0``; 0 = an exact copy, lower = closer
        to one training row than training rows are to each other.
    nearest_train_row : ndarray of int64 (n_synthetic,)
        0-based position of ``x*`` in the training file (the first of identical rows).
    train_distance : ndarray (n_synthetic,)
        ``d(ŷ, x*)``.
    top_columns : tuple of str (n_synthetic,)
        Columns that contribute most to ``d(ŷ, x*)²``, e.g. ``"age 81%; sex 19%"`` (empty for
        an exact copy).
    holdout_ratio : ndarray (n_holdout,) or None
        The same ratio for every holdout row: the reference distribution.
    holdout_train_distance : ndarray (n_holdout,) or None
        ``d(x_h, x*)`` of every holdout row.
    """

    ratio: np.ndarray = field(repr=False)
    nearest_train_row: np.ndarray = field(repr=False)
    train_distance: np.ndarray = field(repr=False)
    top_columns: tuple[str, ...] = field(repr=False)
    holdout_ratio: np.ndarray | None = field(default=None, repr=False)
    holdout_train_distance: np.ndarray | None = field(default=None, repr=False)

    def subset(self, rows: np.ndarray) -> CopyEvidence:
        """The evidence of the synthetic rows at ``rows`` (holdout unchanged)."""
        rows = np.asarray(rows, dtype=np.int64)
        return CopyEvidence(
            self.ratio[rows],
            self.nearest_train_row[rows],
            self.train_distance[rows],
            tuple(self.top_columns[i] for i in rows),
            self.holdout_ratio,
            self.holdout_train_distance,
        )

    def to_dict(self) -> dict[str, object]:
        """Medians only (the rows are in ``audit.csv``)."""
        return to_jsonable(
            {
                "ratio_median": float(np.median(self.ratio)) if len(self.ratio) else None,
                "holdout_ratio_median": None
                if self.holdout_ratio is None or not len(self.holdout_ratio)
                else float(np.median(self.holdout_ratio)),
            }
        )


def _blame(diff_sq: np.ndarray, groups: Mapping[str, Sequence[int]] | None, top: int) -> list[str]:
    if not groups or top < 1:
        return [""] * len(diff_sq)
    names = list(groups)
    member = np.zeros((diff_sq.shape[1], len(names)))
    for j, name in enumerate(names):
        member[list(groups[name]), j] = 1.0
    contrib = diff_sq @ member
    total = contrib.sum(axis=1)
    # stable descending order: equal contributions keep the schema's column order (sorted for
    # all rows at once: a million rows one by one took minutes)
    order = np.argsort(-contrib, axis=1, kind="stable")[:, :top]
    parts = np.take_along_axis(contrib, order, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = parts / total[:, None]
    out = []
    for cols, values, share, s in zip(order, parts, shares, total, strict=True):
        if s <= 0:
            out.append("")
            continue
        out.append(
            "; ".join(
                f"{names[c]} {f:.0%}" for c, v, f in zip(cols, values, share, strict=True) if v > 0
            )
        )
    return out


def copy_evidence(
    real_x: np.ndarray,
    synthetic_x: np.ndarray,
    holdout_x: np.ndarray | None = None,
    *,
    groups: Mapping[str, Sequence[int]] | None = None,
    top: int = 3,
    memo: Memo | None = None,
) -> CopyEvidence:
    """Authenticity ratio, nearest training row and blamed columns of every synthetic row.

    Parameters
    ----------
    real_x, synthetic_x, holdout_x : ndarray (n, d)
        Encoded rows (``TabularEncoder.transform``) of the training, synthetic and holdout data.
    groups : mapping of column name to encoded indices, optional
        ``TabularEncoder.groups``; gives ``top_columns``.
    top : int, default=3
        Columns named per row.
    memo : Memo, optional
        The review's memo: the distinct training rows and the holdout rows' nearest ones are
        the same for every audit of the review (each candidate's, and its curated set's after
        curation), so they are searched once.

    Returns
    -------
    CopyEvidence
    """
    real = np.asarray(real_x, dtype=np.float64)
    holdout = None
    if holdout_x is not None and len(holdout_x):
        holdout = np.asarray(holdout_x, dtype=np.float64)

    def closest(query: np.ndarray, unique: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = nearest(query, unique, k=1)
        return found.distances[:, 0], found.indices[:, 0]

    def real_side() -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
        unique, first = np.unique(real, axis=0, return_index=True)
        if len(unique) < 2:
            raise DataError(
                "real must have at least 2 distinct rows for the authenticity ratio; got "
                f"{len(unique)}"
            )
        return unique, first, None if holdout is None else closest(holdout, unique)

    if memo is None:  # no key to make: hashing every row (a million, for the every-row audit)
        unique, first, held = real_side()
    else:
        # the engine's search kind is in the key: an approximate search's result is not exact
        key = ("audit-real-side", array_digest(real), array_digest(holdout),
               current_engine().search_kind)  # fmt: skip
        unique, first, held = memo.get(key, real_side)
    synthetic = np.asarray(synthetic_x, dtype=np.float64)
    d, j = closest(synthetic, unique)
    if held is not None:
        holdout_d, holdout_j = held
    # NND(x*) only of the training rows that are some row's x* (about a third fewer for a fresh
    # sample): each one's two nearest rows are itself (at 0) and its nearest other row
    needed = np.unique(j if holdout is None else np.concatenate([j, holdout_j]))
    own = nearest(unique[needed], unique, k=2)
    itself = own.indices[:, 0] == needed
    nnd = np.full(len(unique), np.nan)
    nnd[needed] = np.where(itself, own.distances[:, 1], own.distances[:, 0])

    def ratios(d: np.ndarray, j: np.ndarray) -> np.ndarray:
        ratio = np.divide(d, nnd[j], out=np.full(len(d), np.inf), where=nnd[j] > 0)
        ratio[d == 0] = 0.0
        return ratio

    ratio = ratios(d, j)
    blamed = _blame((synthetic - unique[j]) ** 2, groups, top)
    holdout_ratio = None
    if holdout is None:
        holdout_d = None
    else:
        holdout_ratio = ratios(holdout_d, holdout_j)
    return CopyEvidence(
        ratio=ratio,
        nearest_train_row=first[j].astype(np.int64),
        train_distance=d,
        top_columns=tuple(blamed),
        holdout_ratio=holdout_ratio,
        holdout_train_distance=holdout_d,
    )


def copy_evidence_for(report: Report, name: str, *, top: int = 3) -> CopyEvidence | None:
    """:func:`copy_evidence` of candidate ``name`` from a ``Report``'s fitted context.

    Returns None when the report has no encoded rows for it (traces, or no fidelity/privacy).
    """
    context = getattr(report, "context", None)
    encoded = getattr(context, "encoded", None) or {}
    if name not in encoded or "real" not in encoded:
        return None
    encoder = getattr(context, "encoder", None)
    return copy_evidence(
        encoded["real"],
        encoded[name],
        encoded.get("holdout"),
        groups=getattr(encoder, "groups", None),
        top=top,
        memo=getattr(context, "memo", None),
    )
