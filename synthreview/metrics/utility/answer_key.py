"""Answer keys: a label that is an exact rule of the shipped columns (rule ``label_leak``).

A synthetic file whose target is a deterministic function of a few other columns ("income is
>50K exactly when capital_gain > 0") makes every train-on-synthetic score look excellent while
it teaches nothing about the real relation, and it carries no privacy signal at all (the
SynthAudit answer-key check). Real data almost never obey such a rule: a shallow tree that
predicts Adult's income from the other columns errs on about 17 % of rows.

Method: for each tested categorical column, a shallow decision tree (scikit-learn's CART,
depth 1, 2 then 3: the first depth within half a point of the best fit, so the rule
reported is the shortest) predicts the column from every other analysed column, fitted and
scored on the candidate; the same tree is fitted and scored on the holdout (a fresh real
sample), which says how exact the relation is in real data. The score is::

    leak = 1 - error_candidate / error_holdout

1 when the candidate obeys an exact rule that real data do not, about 0 for a fresh sample,
0 when real data obey the rule too (``error_holdout = 0``). Range (-inf, 1], lower is better.
The rule found is written in words from the candidate's tree, e.g.
``income = >50K iff capital_gain > 0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from synthreview.errors import ConfigError
from synthreview.io.row_hash import value_order
from synthreview.io.schema import Schema
from synthreview.results import to_jsonable

__all__ = ["AnswerKey", "AnswerKeyReport", "answer_keys"]

#: depths tried, shallowest first
MAX_DEPTH = 3
#: categorical features with more levels than this are left out of the trees (identifiers,
#: free text): a split on one of 5,000 codes is no rule a reviewer could read
MAX_LEVELS = 60
#: a numeric column with at most this many distinct training values (a 0/1 outcome) is tested
#: as classes
MAX_CLASSES = 10
#: the shallowest tree within this error of the best is the rule reported (a deeper tree that
#: fits a few noisy rows better is no clearer rule)
RULE_SLACK = 0.005
#: rows the trees see at most (a seeded sample above it)
MAX_ROWS = 20_000


@dataclass(frozen=True)
class AnswerKey:
    """One tested column.

    Attributes
    ----------
    column : str
    error, holdout_error : float
        Share of rows the shallow tree gets wrong on the candidate (on the holdout; NaN without
        one).
    leak : float
        ``1 - error / holdout_error`` (module text); NaN without a holdout.
    depth : int
        Depth of the candidate's tree that was kept.
    rule : str
        The candidate's tree in words.
    exact : bool
        The candidate's tree makes no error at all.
    """

    column: str
    error: float
    holdout_error: float
    leak: float
    depth: int
    rule: str
    exact: bool

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return to_jsonable(self.__dict__)


@dataclass(frozen=True)
class AnswerKeyReport:
    """Every tested column; ``worst`` is the one with the highest leak (None if none)."""

    keys: tuple[AnswerKey, ...]
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def worst(self) -> AnswerKey | None:
        """The key with the highest leak (NaN leaks last)."""
        found = [k for k in self.keys if not math.isnan(k.leak)]
        return max(found, key=lambda k: k.leak) if found else None

    def to_dict(self) -> dict:
        """JSON-ready: the keys, the worst column and the columns skipped with why."""
        worst = self.worst
        return to_jsonable(
            {
                "keys": [k.to_dict() for k in self.keys],
                "worst": None if worst is None else worst.column,
                "leak": math.nan if worst is None else worst.leak,
                "skipped": dict(self.skipped),
            }
        )


def _features(frame: pd.DataFrame, columns: Sequence[str], schema: Schema) -> pd.DataFrame:
    parts = []
    for c in columns:
        if c in schema.numeric:
            parts.append(pd.to_numeric(frame[c], errors="coerce").astype(float).rename(c))
        else:
            text = frame[c].astype("string").fillna("(missing)")
            parts.append(pd.get_dummies(text, prefix=c, prefix_sep="\x00").astype(float))
    return pd.concat(parts, axis=1) if parts else pd.DataFrame(index=frame.index)


def _condition(name: str, threshold: float, above: bool, values: pd.Series) -> str:
    if "\x00" in name:  # a one-hot column: "col is value" / "is not"
        column, value = name.split("\x00", 1)
        return f"{column} is {'' if above else 'not '}{value}"
    seen = values[values <= threshold]  # the largest value on the left: the cut as written
    cut = seen.max() if len(seen) else threshold
    cut_text = f"{cut:g}" if isinstance(cut, (int, float, np.floating)) else str(cut)
    return f"{name} {'>' if above else '<='} {cut_text}"


def _rule_text(tree: DecisionTreeClassifier, x: pd.DataFrame, column: str, y: pd.Series) -> str:
    t = tree.tree_
    names = list(x.columns)
    paths: list[tuple[list[str], str]] = []

    def walk(node: int, conds: list[str]) -> None:
        if t.children_left[node] == -1:
            paths.append((conds, str(tree.classes_[int(np.argmax(t.value[node][0]))])))
            return
        name, thr = names[t.feature[node]], float(t.threshold[node])
        col = x[name]
        walk(t.children_left[node], [*conds, _condition(name, thr, False, col)])
        walk(t.children_right[node], [*conds, _condition(name, thr, True, col)])

    walk(0, [])
    classes = list(dict.fromkeys(label for _, label in paths))
    if len(classes) == 1:
        return f"{column} = {classes[0]} always"
    # the class predicted by the fewest leaves (for two classes, the rarer outcome) in words
    counts = y.astype(str).value_counts()
    shown = min(classes, key=lambda c: (sum(1 for _, lab in paths if lab == c), counts.get(c, 0)))
    terms = [" and ".join(conds) for conds, label in paths if label == shown]
    body = " or ".join(f"({t})" if " and " in t and len(terms) > 1 else t for t in terms)
    if len(classes) == 2:
        return f"{column} = {shown} iff {body}"
    return f"{column} = {shown} when {body}"


def _fit(x: pd.DataFrame, y: pd.Series, depth: int, seed: int) -> tuple[float, object]:
    tree = DecisionTreeClassifier(max_depth=depth, random_state=seed)
    tree.fit(x.to_numpy(), y.to_numpy())
    return float((tree.predict(x.to_numpy()) != y.to_numpy()).mean()), tree


def _sample(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """At most :data:`MAX_ROWS` rows, drawn from a value-defined order (row order is moot)."""
    if len(frame) <= MAX_ROWS:
        return frame
    ordered = frame.iloc[value_order(frame)].reset_index(drop=True)
    return ordered.sample(MAX_ROWS, random_state=seed)


def answer_keys(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    holdout: pd.DataFrame | None = None,
    columns: Sequence[str],
    schema: Schema,
    seed: int = 0,
) -> AnswerKeyReport:
    """Test each of ``columns`` for an answer key in ``synthetic`` (module text).

    Parameters
    ----------
    real : pandas.DataFrame
        Training rows (only their columns are used: the trees see candidate and holdout).
    synthetic : pandas.DataFrame
    holdout : pandas.DataFrame, optional
        A fresh real sample: how exact the same tree is on real data.
    columns : sequence of str
        Categorical columns to predict, or numeric ones with at most :data:`MAX_CLASSES`
        distinct training values (other numeric columns are skipped with the reason).
    schema : Schema
    seed : int, default=0

    Returns
    -------
    AnswerKeyReport
    """
    unknown = [c for c in columns if c not in schema.analysed]
    if unknown:
        raise ConfigError(
            f"columns must be analysed columns {list(schema.analysed)}; got {unknown} instead"
        )
    keys, skipped = [], []
    synthetic, holdout = (
        _sample(synthetic, seed),
        None if holdout is None else _sample(holdout, seed),
    )
    for column in dict.fromkeys(columns):
        few = real[column].nunique(dropna=True) <= MAX_CLASSES
        if column not in schema.categorical and not few:
            skipped.append((column, "numeric: an answer key is tested on categorical columns"))
            continue
        others = [
            c
            for c in schema.analysed
            if c != column and (c in schema.numeric or real[c].nunique(dropna=False) <= MAX_LEVELS)
        ]
        y = synthetic[column].astype("string").fillna("(missing)")
        if not others or y.nunique() < 2:
            skipped.append((column, "one value only, or no other column to predict it from"))
            continue
        joined = synthetic if holdout is None else pd.concat([synthetic, holdout])
        x_all = _features(joined, others, schema)  # one set of one-hot columns for both
        x = x_all.iloc[: len(synthetic)]
        fits = [_fit(x, y, depth, seed) for depth in range(1, MAX_DEPTH + 1)]
        best = min(err for err, _ in fits)
        depth = next(d for d, (err, _) in enumerate(fits, 1) if err <= best + RULE_SLACK)
        error, tree = fits[depth - 1]
        ref = math.nan
        if holdout is not None:
            y_h = holdout[column].astype("string").fillna("(missing)")
            ref, _ = _fit(x_all.iloc[len(synthetic) :], y_h, MAX_DEPTH, seed)
        leak = math.nan if math.isnan(ref) else (0.0 if ref == 0 else 1 - error / ref)
        keys.append(
            AnswerKey(
                column=column,
                error=error,
                holdout_error=ref,
                leak=leak,
                depth=depth,
                rule=_rule_text(tree, x, column, y),
                exact=error == 0,
            )
        )
    return AnswerKeyReport(tuple(keys), tuple(skipped))
