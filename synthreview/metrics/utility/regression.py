"""Specific utility: regression confidence-interval overlap (Karr et al. 2006).

Urban Institute appendix, *Specific utility*, "Regression confidence interval overlap"
(``papers/001``): fit the same OLS regression on the real and on the synthetic table and compare
each coefficient's confidence interval ``[l_r, u_r]`` with ``[l_s, u_s]``::

    J = ½ [ (U - L) / (u_r - l_r) + (U - L) / (u_s - l_s) ],  L = max(l_r, l_s), U = min(u_r, u_s)

1 is perfect overlap, 0 adjacent intervals, negative a gap between them.

The regression is written as a small formula, ``"y ~ a + b^2 + c[level] + d"``: a numeric column
enters as is, ``b^2`` adds its square, ``c[level]`` is the 0/1 indicator of one level and a
categorical column ``d`` is one-hot encoded on the real data's levels with the first (sorted)
level dropped. The target is numeric, or ``y[level]`` (a linear probability model), or a binary
categorical column, read as the indicator of its rarer real level.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from synthreview.errors import ConfigError, DataError, UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.metrics.utility.marginals import check_columns
from synthreview.results import to_jsonable

#: Adult stand-in for the appendix's Mincer wage regression (log wage ~ experience, experience²,
#: white, sex). Adult has no wage; its only earnings measure is income > 50K, so this is a linear
#: probability model of that indicator. Potential experience (age - schooling - 6) is spanned by
#: age, age² and education_num up to the age × schooling term of experience².
ADULT_FORMULA = "income[>50K] ~ age + age^2 + education_num + race[White] + sex"

_NAME = r"(?:`(?P<q>[^`]+)`|(?P<n>[A-Za-z_][\w.]*))"
_TERM = re.compile(rf"^\s*{_NAME}\s*(?:\[(?P<level>[^\]]+)\]|(?P<sq>\^\s*2))?\s*$")


@dataclass(frozen=True)
class Term:
    """One side of a formula: ``column``, ``column^2``, ``column[level]`` or a categorical."""

    column: str
    kind: str  # "numeric", "square", "indicator" or "categorical"
    level: str | None = None

    @property
    def label(self) -> str:
        """How the term reads in a formula and in result tables."""
        if self.kind == "square":
            return f"{self.column}^2"
        return f"{self.column}[{self.level}]" if self.level is not None else self.column

    @property
    def written(self) -> str:
        """The term as formula text that :func:`parse_formula` reads back (quoted names)."""
        name = self.column if re.fullmatch(r"[A-Za-z_][\w.]*", self.column) else f"`{self.column}`"
        if self.kind == "square":
            return f"{name}^2"
        return f"{name}[{self.level}]" if self.level is not None else name


@dataclass(frozen=True)
class Formula:
    """A parsed, validated regression formula."""

    text: str
    target: Term
    terms: tuple[Term, ...]

    def __str__(self) -> str:
        # names that are not bare identifiers keep their backticks, so the text parses again
        return f"{self.target.written} ~ " + " + ".join(t.written for t in self.terms)


def _parse_term(text: str, schema: Schema, side: str) -> Term:
    match = _TERM.match(text)
    if not match:
        raise ConfigError(
            f"formula {side} term {text.strip()!r} is not understood; expected a column name, "
            "'column^2' or 'column[level]' (quote names with spaces in backticks)."
        )
    column = match["q"] or match["n"]
    if column not in schema.analysed:
        raise ConfigError(
            f"formula names unknown column {column!r}; expected one of {schema.analysed}."
        )
    categorical = column in schema.categorical
    if match["sq"]:
        if categorical:
            raise ConfigError(f"'{column}^2' needs a numeric column; {column!r} is categorical.")
        return Term(column, "square")
    if match["level"] is not None:
        if not categorical:
            raise ConfigError(f"'{column}[...]' needs a categorical column; {column!r} is numeric.")
        return Term(column, "indicator", match["level"].strip())
    return Term(column, "categorical" if categorical else "numeric")


def parse_formula(text: str, *, schema: Schema, real: pd.DataFrame | None = None) -> Formula:
    """Parse ``"y ~ a + b^2 + c[level] + d"`` and check it against the schema (and ``real``).

    With ``real`` given, named levels must exist in it and a bare categorical target must be
    binary; it is then read as the indicator of its rarer level.

    Raises
    ------
    ConfigError
        With a message naming what is wrong and what is expected.
    """
    if not isinstance(text, str) or text.count("~") != 1:
        raise ConfigError(f"formula must look like 'target ~ x1 + x2'; got {text!r}.")
    left, right = text.split("~")
    target = _parse_term(left, schema, "target")
    if target.kind == "square":
        raise ConfigError(
            f"the formula target must be a column or 'column[level]'; got {left.strip()!r}."
        )
    terms = tuple(_parse_term(t, schema, "predictor") for t in right.split("+"))
    labels = [t.label for t in terms]
    if len(set(labels)) < len(labels):
        raise ConfigError(f"formula lists a predictor twice: {labels}.")
    if target.column in {t.column for t in terms}:
        raise ConfigError(f"the target {target.column!r} cannot also be a predictor.")
    if real is not None:
        for term in (target, *terms):
            if term.level is not None:
                levels = set(real[term.column].dropna().astype("string"))
                if term.level not in levels:
                    raise ConfigError(
                        f"level {term.level!r} does not occur in real column {term.column!r}; "
                        f"expected one of {sorted(levels)[:20]}."
                    )
        if target.kind == "categorical":
            counts = real[target.column].dropna().astype("string").value_counts()
            if len(counts) != 2:
                raise ConfigError(
                    f"the target {target.column!r} is categorical with {len(counts)} levels; "
                    f"name one, e.g. '{target.column}[{counts.index[0]}]', for a linear "
                    "probability model, or choose a numeric target."
                )
            rarer = str(counts.sort_index().sort_values(kind="stable").index[0])
            target = Term(target.column, "indicator", rarer)
    return Formula(text=text, target=target, terms=terms)


def suggest_formula(schema: Schema) -> str | None:
    """The Adult default (:data:`ADULT_FORMULA`) when its columns are there, else ``None``."""
    need = {"income": "categorical", "age": "numeric", "education_num": "numeric"}
    need |= {"race": "categorical", "sex": "categorical"}
    if all(schema.kinds.get(c) == k for c, k in need.items()):
        return ADULT_FORMULA
    return None


def interval_overlap(real_lower, real_upper, synthetic_lower, synthetic_upper) -> np.ndarray:
    """Karr et al. interval overlap ``J`` (1 identical, 0 adjacent, < 0 a gap), elementwise."""
    lr, ur = np.asarray(real_lower, float), np.asarray(real_upper, float)
    ls, us = np.asarray(synthetic_lower, float), np.asarray(synthetic_upper, float)
    inner = np.minimum(ur, us) - np.maximum(lr, ls)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 0.5 * (inner / (ur - lr) + inner / (us - ls))


def _design(frame: pd.DataFrame, formula: Formula, levels: dict[str, list[str]]):
    """Design matrix (intercept first) and response; rows with missing or unseen values dropped."""
    cols: dict[str, pd.Series] = {"intercept": pd.Series(1.0, index=frame.index)}
    keep = pd.Series(True, index=frame.index)
    for term in formula.terms:
        values = frame[term.column]
        if term.kind in ("numeric", "square"):
            x = pd.to_numeric(values, errors="coerce").astype(float)
            keep &= x.notna()
            cols[term.label] = x**2 if term.kind == "square" else x
            continue
        text = values.astype("string")
        keep &= text.notna()
        if term.kind == "indicator":
            cols[term.label] = (text == term.level).astype(float)
            continue
        keep &= text.isin(levels[term.column])
        for level in levels[term.column][1:]:
            cols[f"{term.column}[{level}]"] = (text == level).astype(float)
    target = formula.target
    if target.kind == "indicator":
        text = frame[target.column].astype("string")
        y = (text == target.level).astype(float).where(text.notna())
    else:
        y = pd.to_numeric(frame[target.column], errors="coerce").astype(float)
    keep &= y.notna()
    x = pd.DataFrame(cols)[keep.to_numpy()]
    return x.to_numpy(dtype=float), y[keep.to_numpy()].to_numpy(), list(x.columns)


def _ols_intervals(x: np.ndarray, y: np.ndarray, level: float):
    """OLS coefficients and t-intervals from ``(XᵀX)⁻¹ σ²``; nan where not identified."""
    n, p = x.shape
    beta = np.full(p, np.nan)
    lower, upper = beta.copy(), beta.copy()
    varying = np.ones(p, dtype=bool)
    varying[1:] = np.ptp(x[:, 1:], axis=0) > 0 if n else False
    xv = x[:, varying]
    if n <= xv.shape[1] or np.linalg.matrix_rank(xv) < xv.shape[1]:
        return beta, lower, upper
    coef, *_ = np.linalg.lstsq(xv, y, rcond=None)
    dof = n - xv.shape[1]
    sigma2 = float(np.sum((y - xv @ coef) ** 2)) / dof
    se = np.sqrt(np.diag(np.linalg.inv(xv.T @ xv)) * sigma2)
    half = stats.t.ppf(0.5 + level / 2, dof) * se
    beta[varying], lower[varying], upper[varying] = coef, coef - half, coef + half
    return beta, lower, upper


@dataclass(frozen=True)
class CIOverlap:
    """Per-coefficient confidence-interval overlap of one regression.

    Attributes
    ----------
    formula : str
        The formula as fitted (a bare binary target shown with its level).
    coefficients : pandas.DataFrame
        ``term, real, real_lower, real_upper, synthetic, synthetic_lower, synthetic_upper,
        overlap``.
    mean_overlap : float
        Mean of the defined overlaps, <= 1; 1 is ideal, higher is better.
    n_real, n_synthetic : int
        Rows used by each fit.
    level : float
        Confidence level of the intervals.
    """

    formula: str
    coefficients: pd.DataFrame
    mean_overlap: float
    n_real: int
    n_synthetic: int
    level: float

    def to_dict(self) -> dict:
        """Formula, mean and per-term overlap with both estimates."""
        terms = self.coefficients[["term", "real", "synthetic", "overlap"]]
        return to_jsonable(
            {
                "formula": self.formula,
                "mean_overlap": self.mean_overlap,
                "level": self.level,
                "n_real": self.n_real,
                "n_synthetic": self.n_synthetic,
                "coefficients": terms,
            }
        )


def ci_overlap(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    formula: str,
    schema: Schema,
    level: float = 0.95,
) -> CIOverlap:
    """Confidence-interval overlap of OLS coefficients fitted on real and on synthetic data.

    Urban Institute appendix, *Specific utility* (Karr et al. 2006; Snoke et al. 2018). Both
    fits use the real data's categorical levels; a coefficient that cannot be estimated on one
    side (e.g. a level absent from synthetic) has a nan overlap and a warning.

    Returns
    -------
    CIOverlap
        ``mean_overlap`` <= 1; 1 is ideal, higher is better, negative means disjoint intervals.
    """
    if not 0 < level < 1:
        raise ConfigError(f"level must be in (0, 1); got {level}.")
    parsed = parse_formula(formula, schema=schema, real=real)
    used = [parsed.target.column, *(t.column for t in parsed.terms)]
    check_columns({"real": real, "synthetic": synthetic}, used)
    levels = {
        t.column: sorted(set(real[t.column].dropna().astype("string")))
        for t in parsed.terms
        if t.kind == "categorical"
    }
    xr, yr, names = _design(real, parsed, levels)
    xs, ys, _ = _design(synthetic, parsed, levels)
    if len(yr) <= len(names):
        raise DataError(
            f"the regression needs more than {len(names)} complete real rows; got {len(yr)}."
        )
    br, lr, ur = _ols_intervals(xr, yr, level)
    bs, ls, us = _ols_intervals(xs, ys, level)
    overlap = interval_overlap(lr, ur, ls, us)
    if not np.isfinite(overlap).all():
        bad = [n for n, v in zip(names, overlap, strict=True) if not np.isfinite(v)]
        warnings.warn(
            f"coefficients {bad} could not be estimated on both tables; their overlap is nan.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    table = pd.DataFrame(
        {
            "term": names,
            "real": br,
            "real_lower": lr,
            "real_upper": ur,
            "synthetic": bs,
            "synthetic_lower": ls,
            "synthetic_upper": us,
            "overlap": overlap,
        }
    )
    finite = overlap[np.isfinite(overlap)]
    return CIOverlap(
        formula=str(parsed),
        coefficients=table,
        mean_overlap=float(finite.mean()) if finite.size else math.nan,
        n_real=len(yr),
        n_synthetic=len(ys),
        level=level,
    )


def formula_columns(formula: str, *, schema: Schema) -> Sequence[str]:
    """Columns a formula uses (for messages and for checking inputs early)."""
    parsed = parse_formula(formula, schema=schema)
    return [parsed.target.column, *dict.fromkeys(t.column for t in parsed.terms)]
