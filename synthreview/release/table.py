"""The evidence columns of an audit table, and each statistic's holdout calibration.

``evidence_frame`` gathers, for every evaluated row (synthetic rows, or holdout rows for the
"what would a fresh real sample lose" reference), the per-row statistics of the fidelity and
privacy sections and of ``synthreview.release.evidence``, and for each calibrated statistic the
number of holdout rows at least as extreme (``synthreview.release.calibration``). The rules that
read these columns live in ``synthreview.release.audit``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from synthreview.errors import DataError
from synthreview.metrics.fidelity.section import FidelityReport
from synthreview.metrics.privacy.section import PrivacyReport
from synthreview.release import calibration as cal
from synthreview.release.evidence import CopyEvidence

#: rule column -> short label used in figures and summaries
RULES: dict[str, str] = {
    "drop_outside_alpha": "outside the real α-support",
    "drop_unauthentic": "too close to one training row (authenticity ratio)",
    "drop_too_close": "too close to a training row (distance)",
    "drop_exact_copy": "exact copy of a training row",
    "drop_holdout_copy": "exact copy of a holdout record (a real person the generator never saw)",
    "drop_qi_unique": "quasi-identifiers of exactly one training person (re-identification risk 1)",
}
#: rule -> the statistic it thresholds
STATISTICS: dict[str, str] = {
    "drop_outside_alpha": "alpha_level",
    "drop_unauthentic": "authenticity_ratio",
    "drop_too_close": "train_distance",
    "drop_exact_copy": "exact_copy",
    "drop_holdout_copy": "holdout_copy",
    "drop_qi_unique": "qi_unique",
}
#: statistic -> the direction that is suspicious
DIRECTIONS: dict[str, str] = {
    "alpha_level": "high",
    "authenticity_ratio": "low",
    "train_distance": "low",
}
#: holdout quantile levels whose threshold values are kept for display
LEVELS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1)
#: fixed α values whose holdout loss is kept (the dashboard's slider steps)
FIXED_ALPHAS = tuple(float(a) for a in np.round(np.arange(0.5, 1.0001, 0.01), 2))


def _get(source: object, name: str) -> np.ndarray | None:
    if source is None:
        return None
    if isinstance(source, (Mapping, pd.DataFrame)):
        values = source[name] if name in source else None
    else:
        values = getattr(source, name, None)
    return None if values is None else np.asarray(values)


def _share(flags: np.ndarray) -> float:
    return float(np.mean(flags)) if len(flags) else float("nan")


def evidence_frame(
    fidelity: FidelityReport | None,
    privacy: PrivacyReport | None,
    copies: CopyEvidence | None,
    *,
    holdout: bool,
) -> tuple[pd.DataFrame, dict[str, object]]:
    """Per-row evidence of the synthetic rows (``holdout=False``) or of the holdout rows.

    Returns the frame (columns ``row``, each statistic, ``<stat>_count``,
    ``<stat>_holdout_quantile``, ``authentic``, ``holdout_distance``, ``exact_copy``,
    ``holdout_copy``, ``nearest_train_row``, ``top_columns``) and the calibration (per
    statistic: holdout size ``n``, its most extreme value ``extreme`` and threshold values at
    ``LEVELS``; the holdout's loss under fixed α values, under the paper's authenticity rule,
    from exact copies of training rows and of holdout rows).

    ``exact_copy`` of a synthetic row: it equals a training row (row hashes of the privacy
    section); of a holdout row: it equals a training row (row hashes when the privacy section
    gives them, else encoder distance 0). ``holdout_copy`` of a synthetic row: it equals a
    holdout row; of a holdout row: it equals *another* holdout row (leave-one-out), so the
    holdout's share is what a fresh real sample shares with the holdout by coincidence.
    """
    samples = getattr(fidelity, "holdout_samples" if holdout else "samples", None)
    reference_samples = getattr(fidelity, "holdout_samples", None)
    dcr = getattr(privacy, "dcr", None)
    where = "holdout" if holdout else "synthetic"

    if copies is not None:
        ratio = copies.holdout_ratio if holdout else copies.ratio
        ratio_ref, space = copies.holdout_ratio, "encoder"
    else:
        ratio = _get(samples, "authenticity_ratio")
        ratio_ref, space = _get(reference_samples, "authenticity_ratio"), "embedding"
    columns: dict[str, np.ndarray | None] = {
        "alpha_level": _get(samples, "alpha_level"),
        "authenticity_ratio": None if ratio is None else np.asarray(ratio),
        "train_distance": _get(dcr, "holdout_to_train" if holdout else "synthetic_to_train"),
    }
    references = {
        "alpha_level": _get(reference_samples, "alpha_level"),
        "authenticity_ratio": None if ratio_ref is None else np.asarray(ratio_ref),
        "train_distance": _get(dcr, "holdout_to_train"),
    }
    authentic = _get(samples, "authentic")
    to_holdout = None if holdout else _get(dcr, "synthetic_to_holdout")
    if holdout:
        exact = _get(dcr, "holdout_in_train")
        if exact is None and ratio_ref is not None and copies is not None:
            exact = np.asarray(ratio_ref) == 0
        real_copy = _get(dcr, "holdout_repeated")
        nearest_row = None
    else:
        exact = _get(dcr, "exact_copy")
        real_copy = _get(dcr, "holdout_copy")
        nearest_row = (
            copies.nearest_train_row
            if copies is not None
            else _get(dcr, "nearest_train_index")
            if dcr is not None
            else _get(samples, "nearest_real_index")
        )
    flagged = {"authentic": authentic, "exact": exact, "holdout_copy": real_copy}
    present = {k: v for k, v in {**columns, **flagged}.items() if v is not None}
    sizes = {k: v.shape for k, v in present.items()}
    if present and (len({s for s in sizes.values()}) != 1 or next(iter(sizes.values()))[1:]):
        raise DataError(f"{where} evidence must hold one value per {where} row; got shapes {sizes}")
    n = len(next(iter(present.values()))) if present else 0

    frame: dict[str, Any] = {"row": np.arange(n, dtype=np.int64)}
    calibration: dict[str, Any] = {"ratio_space": space}
    for stat, values in columns.items():
        ref = references[stat]
        ref = None if ref is None else np.asarray(ref, dtype=float)
        n_ref = 0 if ref is None else int(np.sum(~np.isnan(ref)))
        if values is None or ref is None or n_ref < 2:
            x = np.full(n, np.nan) if values is None else values.astype(float)
            frame[stat], frame[f"{stat}_count"] = x, np.full(n, np.nan)
            frame[f"{stat}_holdout_quantile"] = np.full(n, np.nan)
            calibration[stat] = {"n": 0, "thresholds": {}}
            continue
        direction = DIRECTIONS[stat]
        counts = cal.holdout_counts(values, ref, direction=direction, leave_one_out=holdout)
        n_cal = n_ref - 1 if holdout else n_ref
        frame[stat] = values.astype(float)
        frame[f"{stat}_count"] = counts
        frame[f"{stat}_holdout_quantile"] = counts / max(n_cal, 1)
        finite = ref[~np.isnan(ref)]
        calibration[stat] = {
            "n": n_cal,
            "direction": direction,
            # the holdout's most extreme value: a row tied with it is never flagged
            "extreme": float(finite.max() if direction == "high" else finite.min()),
            "thresholds": {
                f"{level:g}": cal.quantile_threshold(ref, level, direction=direction)
                for level in LEVELS
            },
        }
    alpha_ref = references["alpha_level"]
    if alpha_ref is not None:
        calibration["alpha_level"]["fixed_fpr"] = {
            f"{a:g}": _share(cal.rounded(alpha_ref) > a) for a in FIXED_ALPHAS
        }
    ref_authentic = _get(reference_samples, "authentic")
    calibration["paper_unauthentic_fpr"] = (
        float("nan") if ref_authentic is None else _share(~ref_authentic.astype(bool))
    )
    calibration["exact_copy_fpr"] = (
        float(getattr(dcr, "holdout_exact_copy_share", np.nan)) if dcr is not None else np.nan
    )
    repeated = _get(dcr, "holdout_repeated")
    calibration["holdout_copy_fpr"] = (
        float("nan") if repeated is None else _share(repeated.astype(bool))
    )

    def flags(a: np.ndarray | None) -> pd.Series:
        return pd.Series(pd.array([pd.NA] * n if a is None else a.astype(bool), dtype="boolean"))

    frame["authentic"] = flags(authentic)
    frame["holdout_distance"] = (
        np.full(n, np.nan) if to_holdout is None else to_holdout.astype(float)
    )
    frame["exact_copy"] = flags(exact)
    frame["holdout_copy"] = flags(real_copy)
    # the rows whose quasi-identifiers single out one training person (prosecutor risk 1), when
    # the review names quasi-identifiers and its privacy section saw these very rows
    quasi = getattr(privacy, "quasi_identifiers", None)
    risk = None if quasi is None else (quasi.holdout_risk if holdout else quasi.risk)
    frame["qi_unique"] = flags(None if risk is None or len(risk) != n else risk >= 1.0)
    calibration["qi_unique_fpr"] = (
        float("nan") if quasi is None else float(quasi.holdout_replay_share)
    )
    frame["nearest_train_row"] = pd.array(
        [pd.NA] * n if nearest_row is None else np.asarray(nearest_row, dtype=np.int64),
        dtype="Int64",
    )
    tops = getattr(copies, "top_columns", None) if copies is not None and not holdout else None
    frame["top_columns"] = list(tops) if tops is not None else [""] * n
    return pd.DataFrame(frame), calibration
