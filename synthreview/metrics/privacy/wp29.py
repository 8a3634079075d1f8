"""The three re-identification risks of the Article 29 Working Party (opinion 05/2014, WP216).

Singling out, linkability and inference, measured as attacks that use the synthetic rows,
following the method of anonymeter (Giomi et al. 2023, "A Unified Framework for Quantifying
Privacy Risk in Synthetic Data", PoPETs; reference package ``anonymeter`` 1.1.0). Each attack is
run three times: against the training rows (the attack), against holdout rows that the
generator never saw (the control) and as a random guess (the baseline). The risk is the part of
the attack's success that the control does not explain::

    risk = (attack_rate - control_rate) / (1 - control_rate)

with Wilson score rates and their errors propagated to the risk (anonymeter's
``residual_success``), clipped to [0, 1]. Risk 0 = the synthetic data tells nothing about the
training rows beyond what it tells about anyone; 1 = every attack on a training row succeeds.

Differences from anonymeter (ours is our own code on our pinned numpy/pandas):

* seeded (``seed=``), so a review is repeatable;
* singling out evaluates training and control rows at equal size (the larger set is subsampled)
  instead of fitting anonymeter's size-correction curve;
* rates divide by the queries actually generated, not by the ``n_attacks`` requested;
* row order never matters: the three tables are put in an order defined by their values
  (:func:`~synthreview.io.row_hash.value_order`) before targets, queries and subsamples are
  drawn, so shuffling any input gives the same risks (reported rows are input positions);
* nearest rows use our exact Gower search (:func:`~synthreview.metrics.privacy.gower.gower_nearest`:
  a missing value is a level of its own) and a numeric inference guess is right when
  ``|guess - secret| <= tolerance * |guess|``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from synthreview.engine import thread_map
from synthreview.errors import attempt
from synthreview.io.row_hash import value_order
from synthreview.metrics.privacy.gower import GowerReference, gower_nearest
from synthreview.metrics.privacy.intervals import newcombe_difference, wilson_interval
from synthreview.results import to_jsonable
from synthreview.splits import draw_rows

__all__ = [
    "FAMILY_ALPHA",
    "InferenceBound",
    "RiskEstimate",
    "WP29Report",
    "inference_risk",
    "linkability_risk",
    "risk_estimate",
    "risk_lower_bound",
    "singling_out_risk",
    "wilson",
    "wp29_risks",
]

_NUMERIC_OPS = ("==", "!=", ">", "<", ">=", "<=")


def wilson(n_success: float, n_total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score point estimate and error half-width of a success rate (Wilson 1927)."""
    z = norm.ppf(0.5 * (1 + confidence))
    denom = n_total + z * z
    rate = (n_success + 0.5 * z * z) / denom
    var = n_success * (n_total - n_success) / n_total
    return rate, (z / denom) * math.sqrt(max(var, 0.0) + 0.25 * z * z)


@dataclass(frozen=True)
class RiskEstimate:
    """One WP29 attack: attack, control and baseline success and the resulting risk.

    Attributes
    ----------
    risk : float
        Residual risk in [0, 1], lower is better (module text).
    ci : tuple of float
        Confidence interval of the risk (Wilson errors propagated), inside [0, 1].
    attack_rate, control_rate, baseline_rate : float
        Wilson point estimates of the success rates of the attack on training rows, on
        control rows and of the random-guess baseline. ``control_rate`` is nan without a
        control set (the risk is then the attack rate itself).
    n_attacks, n_success, n_control, n_baseline : int
    success : ndarray of bool
        Per attacked training row (``rows``): did the attack succeed on it.
    rows : ndarray of int
        Positions in the training table of the attacked (or singled-out candidate) rows.
    """

    risk: float
    ci: tuple[float, float]
    attack_rate: float
    control_rate: float
    baseline_rate: float
    n_attacks: int
    n_success: int
    n_control: int
    n_baseline: int
    success: np.ndarray = field(repr=False)
    rows: np.ndarray = field(repr=False)

    @property
    def flagged_rows(self) -> np.ndarray:
        """Training-row positions on which the attack succeeded."""
        return self.rows[self.success]

    def to_dict(self) -> dict[str, Any]:
        """``{risk, ci, lower, attack_rate, control_rate, baseline_rate, n_*, flagged_rows}``.

        ``lower`` is the one-sided 95 % lower bound of the risk (:func:`risk_lower_bound`).
        """
        keys = ("risk", "attack_rate", "control_rate", "baseline_rate", "n_attacks",
                "n_success", "n_control", "n_baseline")  # fmt: skip
        out = {k: getattr(self, k) for k in keys}
        out["ci"] = list(self.ci)
        out["lower"] = risk_lower_bound(self)
        out["flagged_rows"] = self.flagged_rows
        return to_jsonable(out)


def _residual(
    n_success: float, n_attacks: int, n_control: float | None, confidence: float
) -> tuple[float, float]:
    """Residual risk and its error half-width at two-sided ``confidence`` (before clipping).

    ``risk = (attack - control) / (1 - control)`` with Wilson rates; the error propagates both
    Wilson half-widths to first order (anonymeter's ``residual_success``). Without a control
    set the risk is the attack rate itself.
    """
    attack, attack_err = wilson(n_success, n_attacks, confidence)
    if n_control is None:
        return attack, attack_err
    control, control_err = wilson(n_control, n_attacks, confidence)
    value = (attack - control) / (1 - control)
    error = math.hypot(attack_err / abs(1 - control),
                       control_err * (attack - 1) / (1 - control) ** 2)  # fmt: skip
    return value, error


def risk_lower_bound(estimate: RiskEstimate, *, confidence: float = 0.95) -> float:
    """One-sided lower confidence bound of a residual risk, clipped to [0, 1].

    Built from the two rates' own intervals rather than first-order around the observed rates
    (issue 36: the propagated error was too narrow when the control succeeds often, and a
    perfect candidate warned 2 times in 40): the difference ``attack - control`` is bounded
    below by Newcombe's hybrid score interval (1998, method 10,
    :func:`~synthreview.metrics.privacy.intervals.newcombe_difference`) at two-sided level
    ``2 * confidence - 1`` (so a one-sided bound at ``confidence``), and divided by ``1 -
    control_low``, the largest the denominator of ``(attack - control) / (1 - control)`` is
    within the control's Wilson interval, so the bound stays conservative. Without a control
    set it is the attack rate's Wilson lower limit. A multiplicity correction is the caller's:
    the worst of ``K`` attacks judged at family-wise 95 % uses ``confidence = 1 - 0.05 / K``
    (Bonferroni).

    Parameters
    ----------
    estimate : RiskEstimate
    confidence : float, default=0.95
        In (0.5, 1).

    Returns
    -------
    float
        NaN when the estimate has no attacks; 0 when the bound lies below 0.

    Examples
    --------
    300 of 1000 attacks succeed on training rows, 200 of 1000 on control rows: the risk is
    about 0.125 and its one-sided 95 % lower bound about 0.083.

    >>> est = risk_estimate(np.ones(300, bool), np.arange(300), 1000, 200, 0, 1000)
    >>> round(risk_lower_bound(est), 3)
    0.083
    """
    if not 0.5 < confidence < 1:
        raise ValueError(f"confidence must be in (0.5, 1); got {confidence!r} instead")
    if estimate.n_attacks < 1:
        return float("nan")
    n, level = estimate.n_attacks, 2 * confidence - 1
    if math.isnan(estimate.control_rate):
        return float(min(max(wilson_interval(estimate.n_success, n, confidence=level)[0], 0), 1))
    control = min(max(int(estimate.n_control), 0), n)
    difference, _ = newcombe_difference(estimate.n_success, n, control, n, confidence=level)
    control_low, _ = wilson_interval(control, n, confidence=level)
    return float(min(max(difference / (1 - control_low), 0.0), 1.0))


def risk_estimate(
    success: np.ndarray,
    rows: np.ndarray,
    n_attacks: int,
    n_control: float | None,
    n_baseline: int,
    n_baseline_attacks: int,
    *,
    confidence: float = 0.95,
) -> RiskEstimate:
    """Rates and residual risk from success counts (anonymeter's ``EvaluationResults``)."""
    n_success = int(np.sum(success))
    if n_attacks < 1:
        nan = float("nan")
        return RiskEstimate(nan, (nan, nan), nan, nan, nan, 0, 0, 0, n_baseline, success, rows)
    attack = wilson(n_success, n_attacks, confidence)[0]
    baseline = wilson(n_baseline, max(n_baseline_attacks, 1), confidence)[0]
    control = float("nan") if n_control is None else wilson(n_control, n_attacks, confidence)[0]
    value, error = _residual(n_success, n_attacks, n_control, confidence)
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    return RiskEstimate(
        risk=clip(value), ci=(clip(value - error), clip(value + error)), attack_rate=attack,
        control_rate=control, baseline_rate=baseline, n_attacks=n_attacks, n_success=n_success,
        n_control=round(n_control or 0), n_baseline=n_baseline, success=np.asarray(success),
        rows=np.asarray(rows),
    )  # fmt: skip


# ------------------------------------------------------------------ singling out


class _Columns:
    """Column arrays of one table for fast predicate masks.

    Categorical cells become integer codes from ``levels`` (shared by every table of one
    evaluation, grown as new levels appear), so equality tests compare integers, not strings.
    """

    def __init__(self, df: pd.DataFrame, numeric: set[str], levels: dict[str, dict]):
        self.n = len(df)
        self.values = {}
        self.levels = levels
        for c in df.columns:
            if c in numeric:
                self.values[c] = pd.to_numeric(df[c], errors="coerce").to_numpy(np.float64)
            else:
                text = df[c].astype("string").to_numpy(dtype=object, na_value=None)
                table = levels.setdefault(c, {})
                # codes in order of first appearance, continuing ``table`` (a level met in an
                # earlier table keeps its code): what a per-cell setdefault gives, vectorised
                seen, uniques = pd.factorize(text)  # None -> -1
                found = [table.setdefault(t, len(table)) for t in uniques]
                self.values[c] = np.array([*found, -1], dtype=np.int64)[seen]  # -1: the last
        self._equal: dict[tuple[str, Any], np.ndarray] = {}

    def label(self, col: str, code: Any) -> Any:
        """The level text of a categorical code (values of numeric columns pass through)."""
        if col not in self.levels:
            return code
        return next((t for t, i in self.levels[col].items() if i == code), None)

    def mask(self, query: tuple) -> np.ndarray:
        out = None
        for col, op, value in query:
            v = self.values[col]
            categorical = col in self.levels
            if categorical and op in ("==", "!="):
                value = self.levels[col].get(value, -2) if isinstance(value, str) else value
            if categorical and op == "==":
                # a level's rows, kept: multivariate singling out tests tens of thousands of
                # queries, most with a categorical equality among a few hundred levels
                m = self._equal.get((col, value))
                if m is None:
                    m = self._equal[(col, value)] = v == value
                out = m.copy() if out is None else np.logical_and(out, m, out=out)
                continue
            if op in ("isna", "notna", "!="):  # the others are False on a missing cell anyway
                missing = v < 0 if categorical else np.isnan(v)
            if op == "isna":
                m = missing
            elif op == "notna":
                m = ~missing
            elif op == "==":
                m = v == value
            elif op == "!=":
                m = (v != value) & ~missing
            elif op == ">":
                m = v > value
            elif op == "<":
                m = v < value
            elif op == ">=":
                m = v >= value
            else:
                m = v <= value
            # every m is a new array (a comparison's result): the first one can be the output
            out = m if out is None else np.logical_and(out, m, out=out)
        return np.ones(self.n, bool) if out is None else out

    def count(self, query: tuple) -> int:
        return int(np.count_nonzero(self.mask(query)))


def _univariate_queries(syn: _Columns, numeric: set[str], rng) -> list[tuple]:
    queries = []
    for col in sorted(syn.values):
        v = syn.values[col]
        missing = np.isnan(v) if col in numeric else v < 0
        if missing.sum() == 1:
            queries.append(((col, "isna", None),))
        present = v[~missing]
        if col in numeric and len(present):
            queries += [((col, "<=", present.min()),), ((col, ">=", present.max()),)]
        values, counts = np.unique(present,
                                   return_counts=True)  # fmt: skip
        queries += [((col, "==", val),) for val in values[counts == 1]]
    order = rng.permutation(len(queries))
    return [queries[i] for i in order]


def _record_query(syn: _Columns, numeric: set[str], medians: dict, row: int, cols) -> tuple:
    out = []
    for col in sorted(cols):
        value = syn.values[col][row]
        if (col in numeric and np.isnan(value)) or (col not in numeric and value < 0):
            out.append((col, "isna", None))
        elif col in numeric:
            out.append((col, ">=" if value > medians[col] else "<=", value))
        else:
            out.append((col, "==", value))
    return tuple(out)


def _random_query(syn: _Columns, numeric: set[str], uniques: dict, cols, rng) -> tuple:
    out = []
    for col in sorted(cols):
        value = uniques[col][rng.integers(len(uniques[col]))]
        if (col in numeric and np.isnan(value)) or (col not in numeric and value < 0):
            out.append((col, "isna" if rng.random() < 0.5 else "notna", None))
        else:
            ops = _NUMERIC_OPS if col in numeric else ("==", "!=")
            out.append((col, ops[rng.integers(len(ops))], value))
    return tuple(out)


def singling_out_risk(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame | None,
    *,
    numeric: Sequence[str],
    mode: str = "multivariate",
    n_attacks: int = 500,
    n_cols: int = 3,
    max_attempts: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> RiskEstimate:
    """Singling-out risk: predicates that isolate one synthetic row, tried on the training rows.

    ``mode="univariate"``: one rare value or extreme of one column; ``"multivariate"``: the
    values of ``n_cols`` random columns of a random synthetic row (a number as ``>=`` or ``<=``
    by its side of the median). A query succeeds when exactly one (de-duplicated) training row
    matches it; the flagged training row is that one. Training and control rows are compared at
    equal size. Baseline: ``n_attacks`` random predicates on random values.
    """
    if mode not in ("univariate", "multivariate"):
        raise ValueError(f"mode must be 'univariate' or 'multivariate'; got {mode!r} instead")
    if n_attacks < 1:
        raise ValueError(f"n_attacks must be a positive integer; got {n_attacks} instead")
    rng = np.random.default_rng(seed)
    numeric = set(numeric)
    cols = list(real.columns)
    train_rows = np.flatnonzero(~real.duplicated().to_numpy())
    control_rows = None if control is None else np.flatnonzero(~control.duplicated().to_numpy())
    if control_rows is not None:
        size = min(len(train_rows), len(control_rows))
        train_rows = train_rows[draw_rows(rng, len(train_rows), size)]
        control_rows = control_rows[draw_rows(rng, len(control_rows), size)]
    levels: dict[str, dict] = {}
    ori = _Columns(real.iloc[train_rows], numeric, levels)
    ctl = None if control is None else _Columns(control.iloc[control_rows], numeric, levels)
    syn = _Columns(synthetic.drop_duplicates(), numeric, levels)
    width = 1 if mode == "univariate" else min(n_cols, len(cols))

    uniques = {c: pd.unique(syn.values[c]) for c in cols}
    baseline_queries = [
        _random_query(
            syn,
            numeric,
            uniques,
            [cols[j] for j in rng.choice(len(cols), width, replace=False)],
            rng,
        )
        for _ in range(n_attacks)
    ]
    n_baseline = sum(ori.count(q) == 1 for q in baseline_queries)

    found: list[tuple] = []
    seen: set[tuple] = set()
    if mode == "univariate":
        candidates = iter(_univariate_queries(syn, numeric, rng))
    else:
        medians = {c: np.nanmedian(syn.values[c]) if syn.n else np.nan for c in numeric}
        limit = max_attempts or 50 * n_attacks
        # columns drawn by position: the draws of ``rng.choice(cols, ...)`` without turning the
        # list into an array of numpy strings each time, and the queries then hold plain
        # strings, quicker to sort, hash and look up (~20,000 attempts at the demo size;
        # multivariate singling out 1.1-1.9 s -> 0.7-0.9 s, same queries)
        candidates = (
            _record_query(
                syn,
                numeric,
                medians,
                int(rng.integers(syn.n)),
                [cols[j] for j in rng.choice(len(cols), width, replace=False)],
            )
            for _ in range(limit)
        )
    for q in candidates:
        if len(found) >= n_attacks:
            break
        if q not in seen and syn.count(q) == 1:
            seen.add(q)
            found.append(q)
    success = np.zeros(len(found), bool)
    hit_rows = np.full(len(found), -1)
    for i, q in enumerate(found):
        m = ori.mask(q)
        if m.sum() == 1:
            success[i], hit_rows[i] = True, train_rows[np.flatnonzero(m)[0]]
    n_control = None if ctl is None else sum(ctl.count(q) == 1 for q in found)
    return risk_estimate(success, hit_rows, len(found), n_control, n_baseline, n_attacks,
                         confidence=confidence)  # fmt: skip


# ------------------------------------------------------------------ linkability and inference


def _targets(n: int, n_attacks: int, rng) -> np.ndarray:
    return draw_rows(rng, n, min(n, n_attacks))


def linkability_risk(
    real: pd.DataFrame,
    synthetic: pd.DataFrame | GowerReference,
    control: pd.DataFrame | None,
    *,
    aux_cols: tuple[Sequence[str], Sequence[str]],
    categorical: Sequence[str],
    n_attacks: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
    targets: dict | None = None,
) -> RiskEstimate:
    """Linkability risk: do both column halves of a record point at the same synthetic row?

    The attacker holds two datasets that share a person but no column (``aux_cols``); for each
    target it takes the nearest synthetic row (Gower) on each half, and links the two halves
    when that row is the same. Baseline: two random synthetic rows. ``synthetic`` may be a
    :class:`~synthreview.metrics.privacy.gower.GowerReference` shared with other attacks
    (its column conversions are made once); ``targets``, a dict shared with them too, keeps
    the conversions of the target rows (:func:`_target_rows`).
    """
    prepared = _prepared(synthetic)
    synthetic = prepared.table
    rng = np.random.default_rng(seed)
    a, b = list(aux_cols[0]), list(aux_cols[1])
    if not a or not b or set(a) & set(b):
        raise ValueError(f"aux_cols must be two disjoint non-empty column lists; got {aux_cols}")

    def links(table: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
        found = []
        for half in (a, b):
            cats = [c for c in half if c in set(categorical)]
            query = _target_rows(table, rows, half, targets)
            found.append(gower_nearest(query, prepared.select(half), categorical=cats)[1])
        return found[0] == found[1]

    rows = _targets(len(real), n_attacks, rng)
    success = links(real, rows)
    n_control = None
    if control is not None:
        n_control = int(links(control, _targets(len(control), len(rows), rng)).sum())
    guesses = rng.integers(0, len(synthetic), (2, len(rows)))
    n_baseline = int((guesses[0] == guesses[1]).sum())
    return risk_estimate(success, rows, len(rows), n_control, n_baseline, len(rows),
                         confidence=confidence)  # fmt: skip


def _prepared(synthetic: pd.DataFrame | GowerReference) -> GowerReference:
    return synthetic if isinstance(synthetic, GowerReference) else GowerReference(synthetic)


def _target_rows(
    table: pd.DataFrame, rows: np.ndarray, columns: Sequence[str], shared: dict | None
) -> pd.DataFrame | GowerReference:
    """``table``'s target ``rows`` on ``columns``, the query of a Gower search.

    With ``shared`` (one dict per :func:`wp29_risks` call) the rows are prepared once as a
    :class:`~synthreview.metrics.privacy.gower.GowerReference`: linkability and every
    inference attack draw the same targets (same seed, same table sizes) and only change the
    columns, so each column's conversion is made once instead of up to 21 times. The entry
    holds ``table`` and serves only that very table (its id keys the dict while it lives).
    """
    if shared is None:
        return table[list(columns)].iloc[rows]
    key = (id(table), rows.tobytes())
    found = shared.get(key)
    if found is None or found[0] is not table:
        # a thread racing here prepares the same rows; either copy gives the same values
        found = shared[key] = (table, GowerReference(table.iloc[rows]))
    return found[1].select(columns)


def _guess_right(guess: np.ndarray, secret: np.ndarray, numeric: bool, tolerance: float):
    both_missing = pd.isna(guess) & pd.isna(secret)
    if numeric:
        g, s = guess.astype(np.float64), secret.astype(np.float64)
        with np.errstate(invalid="ignore"):
            right = np.abs(g - s) <= tolerance * np.abs(g)
    else:
        right = np.asarray(guess.astype(str) == secret.astype(str)) & ~pd.isna(secret)
    return np.asarray(right | both_missing, bool)


def inference_risk(
    real: pd.DataFrame,
    synthetic: pd.DataFrame | GowerReference,
    control: pd.DataFrame | None,
    *,
    secret: str,
    categorical: Sequence[str],
    aux_cols: Sequence[str] | None = None,
    n_attacks: int = 2000,
    tolerance: float = 0.05,
    confidence: float = 0.95,
    seed: int = 0,
    targets: dict | None = None,
) -> RiskEstimate:
    """Inference risk for ``secret``: guess it from the nearest synthetic row on ``aux_cols``.

    A categorical guess is right when equal; a numeric one when within ``tolerance`` of the
    guess (relative). Baseline: the secret of a random synthetic row. ``synthetic`` may be a
    :class:`~synthreview.metrics.privacy.gower.GowerReference` shared with other attacks, and
    ``targets`` a dict shared with them that keeps the target rows' conversions (as in
    :func:`linkability_risk`).
    """
    prepared = _prepared(synthetic)
    synthetic = prepared.table
    rng = np.random.default_rng(seed)
    aux = [c for c in (aux_cols or real.columns) if c != secret]
    if not aux:
        raise ValueError(f"inference on {secret!r} needs at least one other column")
    cats = [c for c in aux if c in set(categorical)]
    is_numeric = secret not in set(categorical)

    def attack(table: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
        query = _target_rows(table, rows, aux, targets)
        idx = gower_nearest(query, prepared.select(aux), categorical=cats)[1]
        guess = synthetic[secret].to_numpy()[idx]
        return _guess_right(guess, table[secret].to_numpy()[rows], is_numeric, tolerance)

    rows = _targets(len(real), n_attacks, rng)
    success = attack(real, rows)
    n_control = None
    if control is not None:
        n_control = int(attack(control, _targets(len(control), len(rows), rng)).sum())
    random_rows = rng.integers(0, len(synthetic), len(rows))
    guess = synthetic[secret].to_numpy()[random_rows]
    n_baseline = int(_guess_right(guess, real[secret].to_numpy()[rows], is_numeric,
                                  tolerance).sum())  # fmt: skip
    return risk_estimate(success, rows, len(rows), n_control, n_baseline, len(rows),
                         confidence=confidence)  # fmt: skip


#: family-wise error rate of a worst-of-K judgement (one-sided)
FAMILY_ALPHA = 0.05


@dataclass(frozen=True)
class InferenceBound:
    """Lower confidence bound of the worst inference risk, corrected for the columns attacked.

    Attributes
    ----------
    lower : float
        The largest per-column one-sided lower bound (:func:`risk_lower_bound` at
        ``confidence``), in [0, 1].
    column : str
        The secret column that bound belongs to.
    n_columns : int
        Columns attacked (``K``).
    confidence : float
        Per-column one-sided level ``1 - 0.05 / K`` (Bonferroni: family-wise 95 %).
    """

    lower: float
    column: str
    n_columns: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return to_jsonable({k: getattr(self, k) for k in self.__dataclass_fields__})


@dataclass(frozen=True)
class WP29Report:
    """Singling out (univariate, multivariate), linkability and inference per secret column.

    ``inference`` maps a secret column to its risk; ``worst_inference`` names the riskiest.
    A risk that could not be measured is absent and its reason is in ``errors``.
    """

    singling_out_univariate: RiskEstimate | None
    singling_out_multivariate: RiskEstimate | None
    linkability: RiskEstimate | None
    inference: dict[str, RiskEstimate]
    aux_cols: tuple[tuple[str, ...], tuple[str, ...]]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def worst_inference(self) -> str | None:
        """Secret column with the highest inference risk."""
        scored = {c: r.risk for c, r in self.inference.items() if math.isfinite(r.risk)}
        return max(scored, key=scored.get) if scored else None

    @property
    def inference_bound(self) -> InferenceBound | None:
        """The worst inference column judged with its noise and the number of columns.

        Each column's risk gets a one-sided lower bound at ``1 - 0.05 / K`` (Bonferroni over the
        ``K`` columns attacked), so the largest of the ``K`` bounds exceeds the true largest
        risk with probability at most 5 % even though every column shares the same targets;
        None when no column was measured.
        """
        measured = [c for c, r in self.inference.items() if r.n_attacks > 0]
        if not measured:
            return None
        confidence = 1 - FAMILY_ALPHA / len(measured)
        bounds = {c: risk_lower_bound(self.inference[c], confidence=confidence) for c in measured}
        column = max(measured, key=lambda c: (bounds[c], self.inference[c].risk))
        return InferenceBound(bounds[column], column, len(measured), confidence)

    def to_dict(self) -> dict[str, Any]:
        """Keys ``singling_out_univariate|singling_out_multivariate|linkability|inference``.

        ``inference`` holds the riskiest column's estimate (``column``), every column's
        (``per_column``) and the corrected bound (``corrected``, :attr:`inference_bound`).
        """
        worst = self.worst_inference
        inference = dict(self.inference[worst].to_dict()) if worst else {"risk": None}
        inference["column"] = worst
        bound = self.inference_bound
        inference["corrected"] = None if bound is None else bound.to_dict()
        inference["per_column"] = {c: r.to_dict() for c, r in self.inference.items()}
        return to_jsonable({
            "singling_out_univariate": self.singling_out_univariate,
            "singling_out_multivariate": self.singling_out_multivariate,
            "linkability": self.linkability,
            "inference": inference,
            "linkability_columns": [list(self.aux_cols[0]), list(self.aux_cols[1])],
            "errors": self.errors,
        })  # fmt: skip


def _input_rows(estimate: RiskEstimate | None, order: np.ndarray) -> RiskEstimate | None:
    """``estimate`` with its rows (positions in the value-ordered table) as input positions."""
    if estimate is None:
        return None
    rows = np.asarray(estimate.rows, dtype=np.int64)
    found = rows >= 0  # singling out marks a query that isolated no training row with -1
    mapped = rows.copy()
    mapped[found] = order[rows[found]]
    return replace(estimate, rows=mapped)


def wp29_risks(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame | None,
    *,
    numeric: Sequence[str],
    categorical: Sequence[str],
    secrets: Sequence[str] | None = None,
    n_attacks: int = 500,
    n_inference_attacks: int = 1000,
    max_secrets: int = 20,
    seed: int = 0,
) -> WP29Report:
    """All WP29 risks on the analysed columns (``numeric`` + ``categorical``).

    Linkability splits the columns into their first and second half (column order);
    inference runs for each of ``secrets`` (default: every column, at most ``max_secrets``).
    The result does not depend on the row order of any table (module docstring); ``rows`` of
    each estimate are positions in ``real`` as given.

    Query subsample: linkability and each inference attack score ``n_inference_attacks``
    seeded training targets (and as many control rows), each against *every* synthetic row,
    so a copied record is always found when it is a target. 1000 targets (was 2000; anonymeter
    1.1.0's default is 500) keep the Wilson 95 % half-width at or below 0.031 while halving
    the Gower searches, which are most of the section's time at 20k + 20k vs 50k rows (15
    secrets x 2 x n targets x 50k rows).
    """
    cols = [c for c in real.columns if c in set(numeric) | set(categorical)]
    # every draw below is by position: put each table in an order defined by its values
    real_order = value_order(real[cols])
    real = real[cols].iloc[real_order].reset_index(drop=True)
    synthetic = synthetic[cols].iloc[value_order(synthetic[cols])].reset_index(drop=True)
    if control is not None:
        control = control[cols].iloc[value_order(control[cols])].reset_index(drop=True)
    # the Gower searches of linkability and every inference attack share one conversion of
    # the synthetic columns (singling out reads the table itself)
    prepared = GowerReference(synthetic)
    # ... and the target rows of training and control one conversion each: every Gower attack
    # draws the same targets and changes only its columns
    targets: dict = {}
    half = max(1, len(cols) // 2)
    aux = (tuple(cols[:half]), tuple(cols[half:]))
    parts: list[tuple[str, Any]] = [
        (f"singling_out_{mode}", lambda m=mode: singling_out_risk(
            real, synthetic, control, numeric=numeric, mode=m, n_attacks=n_attacks, seed=seed))
        for mode in ("univariate", "multivariate")
    ]  # fmt: skip
    if len(cols) >= 2:
        parts.append(("linkability", lambda: linkability_risk(
            real, prepared, control, aux_cols=aux, categorical=categorical,
            n_attacks=n_inference_attacks, seed=seed, targets=targets)))  # fmt: skip
    secret_list = list(secrets or cols)[:max_secrets]
    parts += [
        (f"inference:{secret}", lambda s=secret: inference_risk(
            real, prepared, control, secret=s, categorical=categorical,
            n_attacks=n_inference_attacks, seed=seed, targets=targets))
        for secret in secret_list
    ]  # fmt: skip

    # the parts are independent (each draws from its own generator seeded with ``seed``):
    # they run side by side on the engine's threads, singling out (Python-bound) next to the
    # Gower searches (faiss and numpy release the GIL; a Gower search gives the same rows on
    # any number of threads); errors are recorded in the order the parts are listed
    def run(part: tuple[str, Any]) -> tuple[Any, dict[str, str]]:
        own_errors: dict[str, str] = {}  # one failing risk must not hide the others
        return attempt(part[0], own_errors, part[1]), own_errors

    errors: dict[str, str] = {}
    found: dict[str, Any] = {}
    for (name, _), (result, own_errors) in zip(parts, thread_map(run, parts), strict=True):
        errors.update(own_errors)
        found[name] = result
    so = {mode: found[f"singling_out_{mode}"] for mode in ("univariate", "multivariate")}
    link = found.get("linkability")
    inference = {}
    for secret in secret_list:
        result = found[f"inference:{secret}"]
        if result is not None:
            inference[secret] = result
    return WP29Report(
        _input_rows(so["univariate"], real_order),
        _input_rows(so["multivariate"], real_order),
        _input_rows(link, real_order),
        {secret: _input_rows(r, real_order) for secret, r in inference.items()},
        aux,
        errors,
    )
