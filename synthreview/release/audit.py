"""Model auditing: judge every synthetic row, remove the poor and the copied, keep the rest intact.

Alaa et al. (2022), §1 ("Model auditing as a novel use case") and §5.1 ("Improving synthetic data
via model auditing"): because α-Precision and Authenticity are computed per sample, a reviewer can
discard synthetic rows that fall outside the α-support of the real data or that are flagged as
copies of training rows, and obtain a curated data set with better precision and authenticity
(the paper's audited ADS-GAN data raised downstream AUC-ROC from 0.76 to 0.78).

synthreview adds two distance rules from the privacy section (distance to the closest training
row, exact copies) so that a release can also drop rows that sit suspiciously close to a patient.

Removing the flagged rows and re-measuring the rest (``curate``, ``evaluate_curated``) lives in
``synthreview.release.curation``; its names are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import ConfigError, DataError
from synthreview.results import to_jsonable

__all__ = [
    "DEFAULT_DISTANCE_PERCENTILE",
    "Thresholds",
    "apply_thresholds",
    "audit_table",
    "default_thresholds",
    "holdout_audit",
    "rule_overlaps",
    "rule_summary",
]

#: rule column name -> short label used in reasons and figures
RULES: dict[str, str] = {
    "drop_outside_alpha": "outside α-support",
    "drop_unauthentic": "unauthentic",
    "drop_too_close": "too close to a training row",
    "drop_exact_copy": "exact copy of a training row",
}
#: default percentile of holdout->train distances below which a synthetic row is "too close"
DEFAULT_DISTANCE_PERCENTILE = 1.0


@dataclass(frozen=True)
class Thresholds:
    """What the reviewer removes from a candidate before release.

    Attributes
    ----------
    alpha : float or None
        Keep rows inside the α-support of the real data at this α (``0 < alpha <= 1``): a row is
        removed when its ``alpha_level`` (the smallest α whose support contains it) exceeds
        ``alpha``. ``None`` switches the rule off. Alaa et al. (2022) §3.1, §5.1.
    drop_unauthentic : bool
        Remove rows the authenticity test flags as copies of training rows (§3.3, §5.1).
    min_train_distance : float or None
        Remove rows whose distance to the closest training row is below this value (same units
        as ``PrivacyReport.dcr``). ``None`` switches the rule off; ``default_thresholds`` sets it
        to a low percentile of the holdout->train distances, i.e. closer than fresh real rows
        usually are.
    drop_exact_copies : bool
        Remove rows identical to a training row.
    """

    alpha: float | None = 0.95
    drop_unauthentic: bool = True
    min_train_distance: float | None = None
    drop_exact_copies: bool = True

    def __post_init__(self) -> None:
        if self.alpha is not None and not (0.0 < float(self.alpha) <= 1.0):
            raise ConfigError(f"thresholds 'alpha' must be in (0, 1] or None; got {self.alpha!r}")
        if self.min_train_distance is not None:
            d = float(self.min_train_distance)
            if not math.isfinite(d) or d < 0:
                raise ConfigError(
                    "thresholds 'min_train_distance' must be a finite number >= 0 or None; "
                    f"got {self.min_train_distance!r}"
                )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready thresholds."""
        return to_jsonable(
            {
                "alpha": self.alpha,
                "drop_unauthentic": self.drop_unauthentic,
                "min_train_distance": self.min_train_distance,
                "drop_exact_copies": self.drop_exact_copies,
            }
        )


def default_thresholds(
    privacy: Any = None,
    *,
    alpha: float | None = 0.95,
    percentile: float = DEFAULT_DISTANCE_PERCENTILE,
) -> Thresholds:
    """Thresholds with the minimum training distance set from the holdout reference.

    Parameters
    ----------
    privacy : PrivacyReport or None
        Its ``dcr.holdout_to_train`` (distance of every holdout row to its closest training row)
        gives the distance scale a fresh real sample has. Without it the distance rule is off.
    alpha : float or None, default=0.95
    percentile : float, default=1.0
        Percentile (0-100) of holdout->train distances used as ``min_train_distance``.
    """
    reference = _holdout_to_train(privacy)
    min_distance = None
    if reference is not None and reference.size:
        min_distance = float(np.percentile(reference, percentile))
    return Thresholds(alpha=alpha, min_train_distance=min_distance)


def _holdout_to_train(privacy: Any) -> np.ndarray | None:
    dcr = getattr(privacy, "dcr", None)
    values = getattr(dcr, "holdout_to_train", None)
    if values is None:
        return None
    arr = np.asarray(values, dtype=float)
    return arr[np.isfinite(arr)]


def _per_row(source: Any, name: str, n: int | None, *, where: str) -> np.ndarray | None:
    if source is None:
        return None
    if isinstance(source, (Mapping, pd.DataFrame)):
        values = source[name] if name in source else None
    else:
        values = getattr(source, name, None)
    if values is None:
        return None
    arr = np.asarray(values)
    if arr.ndim != 1 or (n is not None and arr.shape[0] != n):
        raise DataError(
            f"{where}.{name} must hold one value per synthetic row ({n}); got shape {arr.shape}"
        )
    return arr


def audit_table(fidelity: Any, privacy: Any, thresholds: Thresholds | None = None) -> pd.DataFrame:
    """One row per synthetic row: the per-row evidence and the rules that would remove it.

    Parameters
    ----------
    fidelity : FidelityReport or None
        Reads ``samples.alpha_level`` and ``samples.authentic`` (Alaa et al. 2022, §3, §5.1).
    privacy : PrivacyReport or None
        Reads ``dcr.synthetic_to_train``, ``dcr.synthetic_to_holdout`` and ``dcr.exact_copy``.
    thresholds : Thresholds, default=Thresholds()
        A rule whose evidence is missing (section not run) never removes a row.

    Returns
    -------
    pandas.DataFrame
        Columns ``row`` (0-based position in the input file), ``alpha_level``, ``authentic``,
        ``train_distance``, ``holdout_distance``, ``exact_copy``, one boolean column per rule in
        ``RULES``, ``reasons`` (``"; "``-joined labels, empty when kept) and ``removed``.
    """
    if fidelity is None and privacy is None:
        raise DataError("audit_table needs 'fidelity' or 'privacy' results; got neither")
    return _audit(
        getattr(fidelity, "samples", None),
        getattr(privacy, "dcr", None),
        ("synthetic_to_train", "synthetic_to_holdout", "exact_copy"),
        thresholds or Thresholds(),
        where=("fidelity.samples", "privacy.dcr"),
    )


def holdout_audit(
    fidelity: Any, privacy: Any, thresholds: Thresholds | None = None
) -> pd.DataFrame:
    """The same audit applied to the holdout rows: what a fresh real sample would lose.

    Reads ``fidelity.holdout_samples`` and ``privacy.dcr.holdout_to_train``. Rules without
    holdout evidence (exact copies) never fire. The estimators flag part of any real sample
    (e.g. about half of a fresh sample is "unauthentic" under the §3.3 nearest-neighbour test),
    so a candidate's removal rates are read against these. Returns an empty audit table when
    neither section has holdout evidence.
    """
    samples = getattr(fidelity, "holdout_samples", None)
    dcr = getattr(privacy, "dcr", None)
    if samples is None and getattr(dcr, "holdout_to_train", None) is None:
        samples = {"alpha_level": np.zeros(0)}
    return _audit(
        samples,
        dcr,
        ("holdout_to_train", "", ""),
        thresholds or Thresholds(),
        where=("fidelity.holdout_samples", "privacy.dcr"),
    )


def _audit(
    samples: Any,
    dcr: Any,
    fields: tuple[str, str, str],
    thresholds: Thresholds,
    *,
    where: tuple[str, str],
) -> pd.DataFrame:
    alpha_level = _per_row(samples, "alpha_level", None, where=where[0])
    n = None if alpha_level is None else alpha_level.shape[0]
    authentic = _per_row(samples, "authentic", n, where=where[0])
    n = n if n is not None or authentic is None else authentic.shape[0]
    to_train = _per_row(dcr, fields[0], n, where=where[1])
    n = n if n is not None or to_train is None else to_train.shape[0]
    to_holdout = _per_row(dcr, fields[1], n, where=where[1]) if fields[1] else None
    exact = _per_row(dcr, fields[2], n, where=where[1]) if fields[2] else None
    n = n if n is not None or exact is None else exact.shape[0]
    if n is None:
        raise DataError(f"neither {where[0]} nor {where[1]} carries per-row values")

    def floats(a: np.ndarray | None) -> np.ndarray:
        return np.full(n, np.nan) if a is None else a.astype(float)

    def flags(a: np.ndarray | None) -> pd.Series:
        return pd.Series(pd.array([pd.NA] * n if a is None else a.astype(bool), dtype="boolean"))

    audit = pd.DataFrame(
        {
            "row": np.arange(n, dtype=np.int64),
            "alpha_level": floats(alpha_level),
            "authentic": flags(authentic),
            "train_distance": floats(to_train),
            "holdout_distance": floats(to_holdout),
            "exact_copy": flags(exact),
        }
    )
    return apply_thresholds(audit, thresholds)


def apply_thresholds(audit: pd.DataFrame, thresholds: Thresholds) -> pd.DataFrame:
    """Recompute the rule columns, ``reasons`` and ``removed`` of an audit table.

    Cheap (no metric is recomputed), so the dashboard calls it on every slider move.
    """
    out = audit[
        ["row", "alpha_level", "authentic", "train_distance", "holdout_distance", "exact_copy"]
    ].copy()
    # NaN evidence compares False: a row is never removed for lack of evidence
    alpha = thresholds.alpha
    out["drop_outside_alpha"] = (
        out["alpha_level"].to_numpy() > alpha if alpha is not None else np.zeros(len(out), bool)
    )
    out["drop_unauthentic"] = bool(thresholds.drop_unauthentic) & (
        out["authentic"].fillna(True).to_numpy(dtype=bool) == False  # noqa: E712
    )
    min_d = thresholds.min_train_distance
    out["drop_too_close"] = (
        out["train_distance"].to_numpy() < min_d if min_d is not None else np.zeros(len(out), bool)
    )
    out["drop_exact_copy"] = bool(thresholds.drop_exact_copies) & out["exact_copy"].fillna(
        False
    ).to_numpy(dtype=bool)
    labels = _labels(thresholds)
    rule_matrix = out[list(RULES)].to_numpy(dtype=bool)
    out["reasons"] = [
        "; ".join(labels[r] for r, hit in zip(RULES, row, strict=True) if hit)
        for row in rule_matrix
    ]
    out["removed"] = rule_matrix.any(axis=1)
    out.attrs["thresholds"] = thresholds.to_dict()
    return out


def _labels(thresholds: Thresholds) -> dict[str, str]:
    labels = dict(RULES)
    if thresholds.alpha is not None:
        labels["drop_outside_alpha"] = f"outside α={thresholds.alpha:g} support"
    if thresholds.min_train_distance is not None:
        labels["drop_too_close"] = (
            f"closer than {thresholds.min_train_distance:.4g} to a training row"
        )
    return labels


def rule_summary(audit: pd.DataFrame, reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Rows each rule removes: ``flagged`` (by this rule), ``only`` (by this rule and no other).

    Index: rule column names of ``RULES``; a final ``"any"`` row gives the union. ``share`` is
    ``flagged`` over all rows; with ``reference`` (e.g. ``holdout_audit``) a ``reference_share``
    column gives the same share for the reference rows (NaN when it has none).
    """
    matrix = audit[list(RULES)].to_numpy(dtype=bool)
    n_hits = matrix.sum(axis=1)
    rows = {
        rule: {
            "label": RULES[rule],
            "flagged": int(matrix[:, j].sum()),
            "only": int((matrix[:, j] & (n_hits == 1)).sum()),
        }
        for j, rule in enumerate(RULES)
    }
    rows["any"] = {"label": "removed by any rule", "flagged": int((n_hits > 0).sum()), "only": 0}
    summary = pd.DataFrame.from_dict(rows, orient="index")
    summary["share"] = summary["flagged"] / max(len(audit), 1)
    if reference is not None:
        ref = rule_summary(reference)
        summary["reference_share"] = ref["share"] if len(reference) else np.nan
    return summary


def rule_overlaps(audit: pd.DataFrame) -> pd.DataFrame:
    """How many rows each combination of rules removes (an UpSet-style table).

    Returns
    -------
    pandas.DataFrame
        One row per combination of rules that actually occurs among removed rows: a boolean
        column per rule, ``rules`` (``" + "``-joined labels) and ``n_rows``; most frequent
        first, ties in rule order so the table is the same on every run.
    """
    matrix = audit.loc[audit["removed"].to_numpy(dtype=bool), list(RULES)].astype(bool)
    if matrix.empty:
        return pd.DataFrame(
            {
                **{r: pd.Series(dtype=bool) for r in RULES},
                "rules": pd.Series(dtype=str),
                "n_rows": pd.Series(dtype=np.int64),
            }
        )
    counts = matrix.value_counts(sort=False).rename("n_rows").reset_index()
    counts["rules"] = [
        " + ".join(RULES[r] for r in RULES if row[r]) for _, row in counts.iterrows()
    ]
    counts = counts.sort_values(
        ["n_rows", *RULES], ascending=[False] * (1 + len(RULES)), kind="stable"
    ).reset_index(drop=True)
    counts["n_rows"] = counts["n_rows"].astype(np.int64)
    return counts[[*RULES, "rules", "n_rows"]]
