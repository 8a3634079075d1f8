"""Every division of rows into sides, by row or by person: the one grouped-split helper.

A table with several rows per person (visits, years, days) has one unit of privacy and of
sampling: the person. Wherever the engine divides rows (an attack's members vs non-members,
a shadow or calibration split, bootstrap and permutation resamples, cross-validation folds, a
subsample above ``--sample-rows``, planted-leak controls), a person's rows must stay on one
side; otherwise the other side holds the person's other rows and a model recognises the
person, not the generator's leak (issue 34: a fresh sample of other people failed ``mia_auc``
at 0.746 on a credit panel when a person's rows sat on both sides of the attacks).

Every function takes ``groups``: one label per row (a person id), or None for i.i.d. rows.
With ``groups=None`` each reproduces the row-level draw the engine made before it existed,
call for call on the same generator (``np.sort(rng.choice(n, k, replace=False))``,
``rng.permutation(n)``, ``rng.integers(0, n, n)``, scikit-learn's ``StratifiedKFold``), so the
numbers of i.i.d. reviews are unchanged. With ``groups`` the same draw is made over *units*
(people, in order of first appearance) and each unit brings all its rows, as scikit-learn's
``GroupShuffleSplit`` / ``StratifiedGroupKFold`` do.

``tests/test_splits.py`` lists the only places of ``synthreview/`` that may call
``rng.choice``, ``rng.permutation`` or a scikit-learn splitter directly; a new splitter must
come through here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

__all__ = [
    "Units",
    "bootstrap_rows",
    "cv_folds",
    "draw_rows",
    "permute_rows",
    "random_folds",
    "split_rows",
    "units_of",
]


@dataclass(frozen=True)
class Units:
    """Rows grouped into units (people), or each row its own unit.

    Attributes
    ----------
    labels : ndarray of int (n_rows,)
        Unit of every row, numbered 0.. in order of first appearance.
    n_units : int
    grouped : bool
        False when every row is its own unit (``groups=None``).
    """

    labels: np.ndarray = field(repr=False)
    n_units: int
    grouped: bool

    @property
    def n_rows(self) -> int:
        """Rows grouped."""
        return len(self.labels)

    def rows_of(self, units: np.ndarray) -> np.ndarray:
        """Sorted positions of every row of ``units``."""
        if not self.grouped:
            return np.sort(np.asarray(units, np.int64))
        return np.flatnonzero(np.isin(self.labels, np.asarray(units, np.int64)))

    def expand(self, units: np.ndarray) -> np.ndarray:
        """Positions of the rows of ``units``, unit by unit in the given order (repeats kept)."""
        units = np.asarray(units, np.int64)
        if not self.grouped:
            return units
        order = np.argsort(self.labels, kind="stable")
        counts = np.bincount(self.labels, minlength=self.n_units)
        starts = np.cumsum(counts) - counts
        sizes = counts[units]
        ends = np.cumsum(sizes)
        within = np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - sizes, sizes)
        return order[np.repeat(starts[units], sizes) + within]


def units_of(n_rows: int, groups: np.ndarray | Units | None = None) -> Units:
    """The units of ``n_rows`` rows: people given by ``groups`` (one label per row), or rows.

    Labels are compared as text (``7`` and ``"7"`` are one person); a missing label is refused.
    ``groups`` may be a :class:`Units` already (a caller drawing many resamples groups once).
    When every person has one row the units are the rows (``grouped=False``): a draw of people
    is then exactly the row draw.

    Raises
    ------
    ValueError
        ``groups`` does not hold one label per row, or holds a missing one.
    """
    if groups is None:
        return Units(np.arange(n_rows), n_rows, grouped=False)
    if isinstance(groups, Units):
        if groups.n_rows != n_rows:
            raise ValueError(f"groups must group {n_rows} rows; got {groups.n_rows} instead")
        return groups
    values = np.asarray(groups, dtype=object)
    if values.ndim != 1 or len(values) != n_rows:
        raise ValueError(
            f"groups must hold one label per row ({n_rows}); got shape {values.shape} instead"
        )
    if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values):
        raise ValueError("groups must label every row; got a missing label")
    _, first, labels = np.unique(values.astype(str), return_index=True, return_inverse=True)
    if len(first) == n_rows:
        # one row per person: people are rows, and every draw is the row draw
        return Units(np.arange(n_rows), n_rows, grouped=False)
    renumber = np.empty(len(first), np.int64)
    renumber[np.argsort(first, kind="stable")] = np.arange(len(first))
    return Units(renumber[labels.reshape(-1)], len(first), grouped=True)


def draw_rows(
    rng: np.random.Generator,
    n_rows: int,
    size: int,
    *,
    groups: np.ndarray | Units | None = None,
    drawn_order: bool = False,
) -> np.ndarray:
    """Positions of a random subset drawn without replacement, sorted.

    Without ``groups``: ``size`` rows, ``np.sort(rng.choice(n_rows, size, replace=False))``.
    With ``groups``: whole people in a random order, as many as fit in ``size`` rows (at least
    one), every row of each. ``drawn_order=True`` keeps the order of the draw instead of
    sorting (a caller that takes the first ``k`` of them), people's rows consecutive.
    """
    units = units_of(n_rows, groups)
    if not units.grouped:
        drawn = rng.choice(n_rows, size, replace=False)
        return drawn if drawn_order else np.sort(drawn)
    order = rng.permutation(units.n_units)
    counts = np.bincount(units.labels, minlength=units.n_units)[order]
    take = max(1, int(np.searchsorted(np.cumsum(counts), size, side="right")))
    return units.expand(order[:take]) if drawn_order else units.rows_of(order[:take])


def permute_rows(
    rng: np.random.Generator, n_rows: int, *, groups: np.ndarray | Units | None = None
) -> np.ndarray:
    """A random order of the rows: ``rng.permutation(n_rows)``, or people in a random order.

    With ``groups`` a person's rows are consecutive (in their own order), so any cut of the
    result divides people, never a person's rows.
    """
    units = units_of(n_rows, groups)
    if not units.grouped:
        return rng.permutation(n_rows)
    return units.expand(rng.permutation(units.n_units))


def split_rows(
    rng: np.random.Generator,
    n_rows: int,
    sizes: tuple[int, ...],
    *,
    groups: np.ndarray | Units | None = None,
) -> tuple[np.ndarray, ...]:
    """Disjoint random parts of ``sizes`` units each (rows, or people), sorted positions.

    The units are permuted once and cut in order: ``sizes=(n, n)`` gives a training and a test
    part; with ``groups`` the sizes count people, and a person's rows all fall in one part.

    Raises
    ------
    ValueError
        The sizes add up to more units than there are.
    """
    units = units_of(n_rows, groups)
    if any(s < 0 for s in sizes) or sum(sizes) > units.n_units:
        raise ValueError(
            f"sizes must be >= 0 and add up to at most {units.n_units} units; got {sizes} instead"
        )
    order = rng.permutation(units.n_units)
    cuts = np.cumsum((0, *sizes))
    return tuple(units.rows_of(order[a:b]) for a, b in pairwise(cuts))


def bootstrap_rows(
    rng: np.random.Generator, n_rows: int, *, groups: np.ndarray | Units | None = None
) -> np.ndarray:
    """One bootstrap resample: positions drawn with replacement, the unit being row or person.

    Without ``groups``: ``rng.integers(0, n_rows, n_rows)``. With ``groups``: as many people as
    there are, drawn with replacement, each bringing every row (the cluster bootstrap; Field &
    Welsh 2007), so the resample keeps the dependence between a person's rows.
    """
    units = units_of(n_rows, groups)
    if not units.grouped:
        return rng.integers(0, n_rows, n_rows)
    return units.expand(rng.integers(0, units.n_units, units.n_units))


def random_folds(
    rng: np.random.Generator,
    n_rows: int,
    n_folds: int,
    *,
    groups: np.ndarray | Units | None = None,
) -> np.ndarray:
    """A random fold in ``[0, n_folds)`` for every row, not stratified.

    Without ``groups``: ``rng.integers(0, n_folds, n_rows)``. With ``groups``: one draw per
    person, every row of the person in that fold.
    """
    units = units_of(n_rows, groups)
    return rng.integers(0, n_folds, units.n_units)[units.labels]


def cv_folds(
    y: np.ndarray,
    *,
    n_splits: int,
    seed: int,
    groups: np.ndarray | Units | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stratified cross-validation folds ``(train, test)`` of the rows with labels ``y``.

    Without ``groups``: scikit-learn's ``StratifiedKFold(n_splits, shuffle=True,
    random_state=seed)``. With ``groups``: ``StratifiedGroupKFold`` with the same arguments,
    so a person's rows are in one test fold and never on both sides of a fit.
    """
    y = np.asarray(y)
    units = units_of(len(y), groups)
    if not units.grouped:
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        yield from splitter.split(np.zeros(len(y)), y)
        return
    grouped = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    yield from grouped.split(np.zeros(len(y)), y, units.labels)
