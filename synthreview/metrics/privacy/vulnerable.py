"""The training records the membership attacks expose most, for a reviewer to look at.

Each attack's score of a member is turned into the share of non-members that score at least
as high (an empirical p-value: the false-positive rate at which that record would be called a
member). A record's vulnerability is its smallest p-value over the attacks; the ``k`` smallest
are reported with the attack that exposed them. Values are masked by default: numbers become
the decile interval of the training column they fall in, and a categorical level shared by
fewer than ``min_group`` training rows becomes "(rare)", so the table shows *who* is exposed
without re-exporting raw rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthreview.metrics.privacy.attack_stats import AttackResult
from synthreview.results import to_jsonable

__all__ = ["VulnerableRecords", "mask_rows", "vulnerable_records"]


@dataclass(frozen=True)
class VulnerableRecords:
    """The ``k`` most exposed training records, most exposed first.

    Attributes
    ----------
    rows : ndarray of int
        Positions in the training table.
    p_value : ndarray of float
        Share of non-members scoring at least as high under ``attack`` (with +1 smoothing),
        in (0, 1]; lower = more exposed.
    attack : tuple of str
        The attack that exposed each record most.
    values : pandas.DataFrame or None
        Masked values of the records (``mask_rows``); None on arrays.
    """

    rows: np.ndarray
    p_value: np.ndarray
    attack: tuple[str, ...]
    values: pd.DataFrame | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """One entry per record: ``{row, p_value, attack, values}``."""
        records = []
        table = None if self.values is None else self.values.to_dict(orient="records")
        for i, (row, p, a) in enumerate(zip(self.rows, self.p_value, self.attack, strict=True)):
            records.append({"row": row, "p_value": p, "attack": a,
                            "values": None if table is None else table[i]})  # fmt: skip
        return to_jsonable({"records": records})


def vulnerable_records(
    attacks: Sequence[AttackResult], member_rows: np.ndarray, *, k: int = 100
) -> VulnerableRecords:
    """The ``k`` members with the smallest p-value over ``attacks``.

    Parameters
    ----------
    attacks : sequence of AttackResult
        Results on the same attack set (members first, then non-members, as ``attack_set``).
    member_rows : ndarray of int
        Training-table position of each member, in attack-set order (``AttackSet.real_rows``).
    k : int, default=100
    """
    if k < 1:
        raise ValueError(f"k must be a positive integer; got {k} instead")
    member_rows = np.asarray(member_rows)
    best = np.full(len(member_rows), np.inf)
    which = np.full(len(member_rows), "", dtype=object)
    for a in attacks:
        if a.error is not None or len(a.scores) == 0 or int(a.is_member.sum()) != len(member_rows):
            continue
        others = np.sort(a.scores[~a.is_member])
        at_least = len(others) - np.searchsorted(others, a.scores[a.is_member], side="left")
        p = (at_least + 1) / (len(others) + 1)
        better = p < best
        best[better], which[better] = p[better], a.attack
    ranked = [i for i in np.lexsort((member_rows, best)) if np.isfinite(best[i])][:k]
    ranked = np.asarray(ranked, dtype=np.int64)
    return VulnerableRecords(member_rows[ranked], best[ranked], tuple(which[ranked]))


def mask_rows(
    real: pd.DataFrame,
    rows: np.ndarray,
    *,
    numeric: Sequence[str],
    min_group: int = 10,
    source: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``real.iloc[rows]`` with numbers as decile intervals and rare levels as "(rare)".

    ``source`` (a table with ``real``'s columns, e.g. a synthetic one) masks ``source.iloc[rows]``
    instead, with the deciles and level counts of ``real``: a synthetic row beside its nearest
    training row reads in the same intervals.
    """
    out = {}
    for col in real.columns:
        values = (real if source is None else source)[col].iloc[rows]
        if col in set(numeric):
            x = pd.to_numeric(real[col], errors="coerce")
            edges = np.unique(np.nanquantile(x, np.linspace(0, 1, 11))) if x.notna().any() else []
            v = pd.to_numeric(values, errors="coerce").to_numpy()
            cells = []
            for value in v:
                if np.isnan(value) or len(edges) < 2:
                    cells.append("(missing)" if np.isnan(value) else "(constant)")
                    continue
                j = min(max(np.searchsorted(edges, value, side="right") - 1, 0), len(edges) - 2)
                cells.append(f"[{edges[j]:.4g}, {edges[j + 1]:.4g}]")
            out[col] = cells
        else:
            counts = real[col].astype("string").value_counts(dropna=False)
            text = values.astype("string")
            out[col] = [
                "(missing)"
                if pd.isna(t)
                else (str(t) if counts.get(t, 0) >= min_group else "(rare)")
                for t in text
            ]
    return pd.DataFrame(out, index=range(len(rows)))
