"""Shadow-model membership inference: train the generator itself with and without a target.

When the reviewer can run the generator (a ``fit_sample(train, n, seed)`` callable,
:mod:`synthreview.generators.plugin`), the strongest black-box evidence is to ask it directly:
for a target record, train the generator many times on reference datasets with and without the
target, describe each output by how it looks *around the target*, and learn to tell the two
kinds of output apart (Stadler et al. 2022, "Synthetic Data - Anonymisation Groundhog Day",
USENIX Security, section 4; Houssiau et al. 2022, "TAPAS: a Toolbox for Adversarial Privacy
Auditing of Synthetic Data", NeurIPS SyntheticData4ML workshop, section 3).

Threat model (TAPAS's *auxiliary data* attacker): the attacker knows a reference population,
here every real record the review holds (training and holdout rows) except the target, and the
size of the generator's training set. For each of ``T`` targets (the records the no-box attacks
expose most, plus random training and holdout records), ``K`` shadow training sets of the
training table's size are drawn from that population without the target; in half of them one
row is replaced by the target. The generator is trained on each and asked for as many rows as
the candidate holds.

Features (TAPAS's ``RandomTargetedQueryFeature`` and ``ClosestDistance`` attacks): the share of
output rows that match the target on random subsets of its attributes (numbers compared by
their decile bin of the reference population, so a query is a cell of a contingency table
that counts the target), the share of exact copies of the target, and the smallest and mean
5-smallest Gower distances from the target to the output rows. A logistic regression on the
standardised features is trained per target; every shadow is scored by a model fitted without
it (stratified 5-fold cross-validation), and the model fitted on all shadows scores the real
candidate.

Scores: per target, the threshold is the highest held-out score of a shadow *without* the
target, so a shadow with the target counts as a hit only above every non-member (the FPR is 0
on these few shadows, below 1 %); overall, the held-out scores of every target are pooled and
the threshold is set so that at most 1 % of the shadows without their target are called
members. TPRs come with two-sided 95 % Clopper-Pearson intervals (Clopper & Pearson 1934); a
generator that learns nothing about its targets gives a TPR within the interval of the achieved
FPR (chance).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from synthreview.errors import ConfigError, DataError
from synthreview.generators.runner import GeneratorProcess, GeneratorTimeout
from synthreview.io.persons import person_ids
from synthreview.io.row_hash import table_row_hashes, value_order
from synthreview.io.schema import Schema
from synthreview.results import to_jsonable
from synthreview.splits import cv_folds, draw_rows, units_of

__all__ = [
    "ShadowAttackResult",
    "ShadowSettings",
    "ShadowTarget",
    "shadow_attack",
]

Progress = Callable[[float, str], None] | None

#: false-positive rate at which the pooled TPR is read (Carlini et al. 2022: low-FPR regime)
TARGET_FPR = 0.01
#: TAPAS-style random attribute-subset queries per target (all single columns come first)
N_QUERIES = 100
#: numeric columns are compared by their decile bin of the reference population
N_BINS = 10
#: nearest output rows averaged into the mean-distance feature
K_NEAREST = 5
#: folds of the cross-validation that scores every shadow with a model fitted without it
N_FOLDS = 5


@dataclass(frozen=True)
class ShadowSettings:
    """Which generator to attack and the attack's budget.

    Attributes
    ----------
    generator : str
        An installed generator's name or ``"module:function"`` of the ``fit_sample(train, n,
        seed)`` callable (:func:`synthreview.generators.plugin.load_generator`).
    n_shadows : int, default 20
        Shadow generators trained per target (``K``), half with the target; >= 4.
    n_targets : int, default 10
        Target records (``T``), >= 1: about half the most exposed records of the no-box
        attacks, the rest random training and holdout records.
    time_limit_s : float, default 600
        Wall-clock budget of the whole attack in seconds; when it runs out, the targets whose
        shadows are all trained are reported and the result is marked partial. The generator
        runs in a child process (:mod:`synthreview.generators.runner`) that is killed at the
        limit, so a call that never returns stops the attack too.
    """

    generator: str
    n_shadows: int = 20
    n_targets: int = 10
    time_limit_s: float = 600.0

    def __post_init__(self) -> None:
        if not isinstance(self.generator, str) or not self.generator.strip():
            # the name itself is checked where it is loaded (plugin.load_generator)
            raise ConfigError(
                "option generator must be an installed generator's name or 'module:function'; "
                f"got {self.generator!r} instead"
            )
        for name, low in (("n_shadows", 4), ("n_targets", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ConfigError(f"option {name} must be an integer >= {low}; got {value!r}")
        limit = self.time_limit_s
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
            raise ConfigError(f"option time_limit_s must be a number of seconds > 0; got {limit!r}")
        if not math.isfinite(limit):
            raise ConfigError(f"option time_limit_s must be finite; got {limit!r}")


@dataclass(frozen=True)
class Rate:
    """A true- or false-positive rate with its counts and two-sided 95 % Clopper-Pearson interval.

    Attributes
    ----------
    value : float
        ``hits / n`` (``nan`` when ``n`` is 0).
    hits, n : int
    ci : tuple of float
    """

    value: float
    hits: int
    n: int
    ci: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """``{value, hits, n, ci}``."""
        return to_jsonable(
            {"value": self.value, "hits": self.hits, "n": self.n, "ci": list(self.ci)}
        )


def clopper_pearson_rate(hits: int, n: int, *, confidence: float = 0.95) -> Rate:
    """``hits / n`` with its two-sided Clopper-Pearson interval (Clopper & Pearson 1934).

    >>> r = clopper_pearson_rate(0, 10)
    >>> r.value, round(r.ci[1], 4)
    (0.0, 0.3085)
    """
    if n == 0:
        return Rate(math.nan, 0, 0, (math.nan, math.nan))
    tail = (1.0 - confidence) / 2
    lower = float(beta.ppf(tail, hits, n - hits + 1)) if hits > 0 else 0.0
    upper = float(beta.ppf(1 - tail, hits + 1, n - hits)) if hits < n else 1.0
    return Rate(hits / n, int(hits), int(n), (lower, upper))


@dataclass(frozen=True)
class ShadowTarget:
    """The attack on one target record.

    Attributes
    ----------
    row : int
        Position of the record in its input table (``table``).
    table : {"real", "holdout"}
    member : bool
        Whether the record is in the candidate's training data (a ``real`` row).
    chosen : {"exposed", "random"}
        ``exposed``: among the records the no-box attacks expose most; ``random``: drawn at
        random from the training and holdout rows.
    exposure_p_value : float
        The no-box attacks' p-value of an exposed record (``nan`` for a random one).
    n_shadows : int
        Shadow generators trained for it (half with the target).
    auc : float
        ROC AUC of the held-out shadow scores (0.5 = chance).
    tpr : Rate
        Shadows with the target scored above every shadow without it (FPR 0 on these shadows).
    threshold : float
        That highest score of a shadow without the target.
    candidate_score : float
        The attack model's probability that the target was in the candidate's training data.
    candidate_called : bool
        ``candidate_score`` above ``threshold``: the attack calls the target a member of the
        candidate's training data.
    """

    row: int
    table: str
    member: bool
    chosen: str
    exposure_p_value: float
    n_shadows: int
    auc: float
    tpr: Rate
    threshold: float
    candidate_score: float
    candidate_called: bool
    shadow_scores: np.ndarray = field(repr=False)
    shadow_labels: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the held-out shadow scores are left out)."""
        return to_jsonable(
            {
                "row": self.row,
                "table": self.table,
                "member": self.member,
                "chosen": self.chosen,
                "exposure_p_value": self.exposure_p_value,
                "n_shadows": self.n_shadows,
                "auc": self.auc,
                "tpr": self.tpr,
                "threshold": self.threshold,
                "candidate_score": self.candidate_score,
                "candidate_called": self.candidate_called,
            }
        )


@dataclass(frozen=True)
class ShadowAttackResult:
    """Shadow-model membership inference against one generator, for one candidate.

    Attributes
    ----------
    generator : str
        The ``module:function`` attacked.
    settings : ShadowSettings
    targets : tuple of ShadowTarget
        The targets whose shadows were all trained, in attack order.
    tpr_at_fpr_1pct : Rate
        Pooled held-out shadows of every target: the share of shadows with their target scored
        above the threshold that calls at most 1 % of the shadows without it members. Chance is
        ``fpr.value``; lower is better.
    fpr : Rate
        The false-positive rate achieved at that threshold (<= 1 %).
    auc : float
        ROC AUC of the pooled held-out scores (0.5 = chance).
    candidate_hits : Rate
        Among the targets that are training records, the share the attack calls members of the
        candidate's training data (each at its own zero-FPR threshold).
    candidate_false_alarms : Rate
        The same for targets that are holdout records (never in the training data).
    complete : bool
        False when the time limit stopped the attack before every target was done: the numbers
        then rest on fewer targets and are reported, not judged.
    note : str
        Why the attack is partial, or which targets could not be drawn.
    elapsed_s : float
        Wall-clock seconds the attack took.
    n_rows_train, n_rows_out : int
        Rows of each shadow training set and of each shadow output.
    """

    generator: str
    settings: ShadowSettings
    targets: tuple[ShadowTarget, ...]
    tpr_at_fpr_1pct: Rate
    fpr: Rate
    auc: float
    candidate_hits: Rate
    candidate_false_alarms: Rate
    complete: bool
    note: str
    elapsed_s: float
    n_rows_train: int
    n_rows_out: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``tpr_at_fpr_1pct`` is the TPR itself, its interval beside it."""
        return to_jsonable(
            {
                "generator": self.generator,
                "n_shadows": self.settings.n_shadows,
                "n_targets": self.settings.n_targets,
                "time_limit_s": self.settings.time_limit_s,
                "tpr_at_fpr_1pct": self.tpr_at_fpr_1pct.value,
                "tpr_at_fpr_1pct_ci": list(self.tpr_at_fpr_1pct.ci),
                "tpr": self.tpr_at_fpr_1pct,
                "fpr": self.fpr,
                "auc": self.auc,
                "candidate_hits": self.candidate_hits,
                "candidate_false_alarms": self.candidate_false_alarms,
                "complete": self.complete,
                "note": self.note,
                "elapsed_s": self.elapsed_s,
                "n_rows_train": self.n_rows_train,
                "n_rows_out": self.n_rows_out,
                "targets": [t.to_dict() for t in self.targets],
            }
        )


# --- features ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Coder:
    """Column codes and scales fitted on the reference population (every real record)."""

    columns: tuple[str, ...]
    numeric: tuple[bool, ...]
    edges: tuple[np.ndarray, ...]
    levels: tuple[dict[str, int], ...]
    span: np.ndarray

    @classmethod
    def fit(cls, population: pd.DataFrame, schema: Schema) -> _Coder:
        columns = tuple(schema.analysed)
        numeric, edges, levels, span = [], [], [], []
        for col in columns:
            is_num = schema.kinds[col] == "numeric"
            numeric.append(is_num)
            if is_num:
                x = pd.to_numeric(population[col], errors="coerce").to_numpy("float64")
                finite = x[np.isfinite(x)]
                inner = np.linspace(0, 1, N_BINS + 1)[1:-1]
                edges.append(np.unique(np.quantile(finite, inner)) if len(finite) else np.empty(0))
                width = float(finite.max() - finite.min()) if len(finite) else 0.0
                span.append(width if width > 0 else 1.0)
                levels.append({})
            else:
                text = population[col].astype("string").dropna().unique()
                levels.append({str(v): i for i, v in enumerate(sorted(map(str, text)))})
                edges.append(np.empty(0))
                span.append(1.0)
        return cls(columns, tuple(numeric), tuple(edges), tuple(levels), np.asarray(span))

    def encode(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, values)``: int codes per column (-1 missing, -2 unseen level) and float
        values (numbers; categorical codes for categorical columns, nan when missing)."""
        codes = np.empty((len(frame), len(self.columns)), dtype=np.int64)
        values = np.empty((len(frame), len(self.columns)), dtype=np.float64)
        for j, col in enumerate(self.columns):
            if self.numeric[j]:
                x = pd.to_numeric(frame[col], errors="coerce").to_numpy("float64", na_value=np.nan)
                code = np.searchsorted(self.edges[j], x, side="right")
                codes[:, j] = np.where(np.isnan(x), -1, code)
                values[:, j] = x
            else:
                text = frame[col].astype("string").to_numpy(dtype=object, na_value=None)
                code = np.array([-1 if v is None else self.levels[j].get(str(v), -2) for v in text])
                codes[:, j] = code
                values[:, j] = np.where(code == -1, np.nan, code)
        return codes, values


def _queries(n_columns: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Every single column, then random attribute subsets of every larger size (TAPAS's random
    targeted queries), the full row last; at most :data:`N_QUERIES`, no subset twice."""
    chosen: list[tuple[int, ...]] = [(j,) for j in range(n_columns)]
    sizes = list(range(2, n_columns))
    budget = max(N_QUERIES - len(chosen) - 1, 0)
    per_size = -(-budget // len(sizes)) if sizes else 0
    for size in sizes:
        total = math.comb(n_columns, size)
        if total <= per_size:
            chosen += list(itertools.combinations(range(n_columns), size))
            continue
        found: set[tuple[int, ...]] = set()
        while len(found) < per_size:
            found.add(tuple(sorted(rng.choice(n_columns, size, replace=False).tolist())))
        chosen += sorted(found)
    chosen = chosen[: max(N_QUERIES - 1, n_columns)]
    if n_columns > 1:
        chosen.append(tuple(range(n_columns)))
    return [np.asarray(q) for q in chosen]


def _features(
    codes: np.ndarray,
    values: np.ndarray,
    target_codes: np.ndarray,
    target_values: np.ndarray,
    *,
    numeric: np.ndarray,
    span: np.ndarray,
    queries: Sequence[np.ndarray],
) -> np.ndarray:
    """One feature vector of an output table around the target (module docstring)."""
    n = len(codes)
    match = codes == target_codes
    counts = [match[:, q].all(axis=1).sum() / n for q in queries]
    both_missing = np.isnan(values) & np.isnan(target_values)
    same = np.where(numeric, values == target_values, match) | both_missing
    exact = same.all(axis=1).sum() / n
    # Gower distance: numbers by |difference| / range of the population, levels by mismatch,
    # a missing value on one side only counts as the largest difference
    gap = np.where(numeric, np.abs(values - target_values) / span, (~match).astype(float))
    gap = np.where(both_missing, 0.0, np.where(np.isnan(gap), 1.0, np.minimum(gap, 1.0)))
    distance = np.sort(gap.mean(axis=1))
    nearest = distance[: min(K_NEAREST, n)]
    return np.asarray([*counts, exact, distance[0], nearest.mean()], dtype=np.float64)


# --- the attack ----------------------------------------------------------------------------


def _attack_model(seed: int):
    return make_pipeline(
        StandardScaler(), LogisticRegression(C=1.0, solver="liblinear", random_state=seed)
    )


def _held_out_scores(x: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Each shadow's score from a model fitted without it (stratified folds)."""
    n_splits = min(N_FOLDS, int(y.sum()), int((~y).sum()))
    scores = np.empty(len(y))
    for fit_rows, test_rows in cv_folds(y, n_splits=n_splits, seed=seed):
        model = _attack_model(seed).fit(x[fit_rows], y[fit_rows])
        scores[test_rows] = model.predict_proba(x[test_rows])[:, 1]
    return scores


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    if labels.all() or not labels.any():
        return math.nan
    return float(roc_auc_score(labels, scores))


def _tpr_at(scores: np.ndarray, labels: np.ndarray, fpr: float) -> tuple[Rate, Rate, float]:
    """TPR and FPR when a score at or above the threshold calls a member.

    The threshold is the lowest score of a non-member at which at most ``floor(fpr * n)`` of
    the ``n`` non-members are called (the ROC point at that FPR, ties counted as called on both
    sides); when even the highest non-member score is too many, it lies just above it (no
    non-member called). Under no leak the expected TPR is then about the FPR.
    """
    negatives = np.sort(scores[~labels])[::-1]
    allowed = math.floor(fpr * len(negatives) + 1e-9)
    threshold = float(np.nextafter(negatives[0], np.inf))
    for value in np.unique(negatives)[::-1]:
        if np.sum(negatives >= value) > allowed:
            break
        threshold = float(value)
    hits = int(np.sum(scores[labels] >= threshold))
    false = int(np.sum(negatives >= threshold))
    return (
        clopper_pearson_rate(hits, int(labels.sum())),
        clopper_pearson_rate(false, len(negatives)),
        threshold,
    )


def _value_order(frame: pd.DataFrame, cols: list[str], person: str | None) -> np.ndarray:
    """Rows in the order of their values; equal rows of different people by their person."""
    if person is None:
        return value_order(frame[cols])
    return np.lexsort((person_ids(frame[person]), table_row_hashes(frame, cols)))


def _choose_targets(
    n_real: int,
    n_holdout: int,
    exposed: Sequence[tuple[int, float]],
    n_targets: int,
    rng: np.random.Generator,
) -> list[tuple[str, int, str, float]]:
    """``(table, ordered position, chosen, p-value)`` per target: half exposed, half random."""
    targets: list[tuple[str, int, str, float]] = []
    for row, p in exposed[: -(-n_targets // 2)]:
        targets.append(("real", int(row), "exposed", float(p)))
    taken = {(t[0], t[1]) for t in targets}
    pool = [("real", i) for i in range(n_real)] + [("holdout", i) for i in range(n_holdout)]
    pool = [p for p in pool if p not in taken]
    n_random = min(n_targets - len(targets), len(pool))
    for i in np.sort(rng.choice(len(pool), n_random, replace=False)):
        targets.append((pool[i][0], pool[i][1], "random", math.nan))
    return targets


def shadow_attack(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame | None,
    *,
    settings: ShadowSettings,
    schema: Schema,
    exposed: Sequence[tuple[int, float]] = (),
    person: str | None = None,
    seed: int = 0,
    progress: Progress = None,
) -> ShadowAttackResult:
    """Shadow-model membership inference against ``generator`` (module docstring).

    Parameters
    ----------
    real, synthetic, holdout : pandas.DataFrame
        The candidate's training table, the candidate, and the holdout (may be None: the
        reference population is then the training table without the target). Rows are put in
        a value-defined order first, so their input order changes nothing.
    settings : ShadowSettings
        ``settings.generator`` names the ``fit_sample(train, n, seed) -> DataFrame`` callable;
        it is loaded and called in a child process
        (:class:`~synthreview.generators.runner.GeneratorProcess`) that receives only each
        shadow's training rows and is killed at the time limit.
    schema : Schema
        Column kinds; features use ``schema.analysed``.
    exposed : sequence of (int, float)
        Training rows (input positions of ``real``) the no-box attacks expose most, most
        exposed first, with their p-values; the first ``ceil(T / 2)`` become targets.
    person : str, optional
        The person column of a person-level review: the target is then the target row's
        person. Shadow training sets are drawn as whole people
        (:func:`synthreview.splits.draw_rows`) from the population without any row of that
        person, and a shadow "with the target" holds every row of the person: otherwise the
        person's other rows train the shadows labelled "without", and the label no longer says
        whether the generator saw the person.
    seed : int, default 0
    progress : callable(fraction, message), optional
        Called before each shadow with the target, the shadow and the time used.

    Returns
    -------
    ShadowAttackResult
        ``complete=False`` when the time limit stopped it; the targets done so far are kept.

    Raises
    ------
    DataError
        ``real`` has fewer than 2 rows, or the generator could not be loaded, raised, died, or
        returned something that is not a table with the training columns and a row with values
        (an error of the attack, never a pass).
    """
    with GeneratorProcess(settings.generator) as generator:
        return _shadow_attack(real, synthetic, holdout, generator=generator, settings=settings,
                              schema=schema, exposed=exposed, person=person, seed=seed,
                              progress=progress)  # fmt: skip


def _shadow_attack(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame | None,
    *,
    generator: GeneratorProcess,
    settings: ShadowSettings,
    schema: Schema,
    exposed: Sequence[tuple[int, float]],
    person: str | None,
    seed: int,
    progress: Progress,
) -> ShadowAttackResult:
    if len(real) < 2 or len(synthetic) < 1:
        raise DataError(
            "the shadow attack needs >= 2 training rows and >= 1 synthetic row; got "
            f"{len(real)} and {len(synthetic)}"
        )
    step = progress or (lambda fraction, message: None)
    start = time.monotonic()
    deadline = start + settings.time_limit_s
    cols = list(schema.analysed)
    real_order, holdout_order = _value_order(real, cols, person), None
    if holdout is not None:
        holdout_order = _value_order(holdout, cols, person)
    real_rank = np.empty(len(real_order), dtype=np.int64)
    real_rank[real_order] = np.arange(len(real_order))
    ordered_real = real.iloc[real_order].reset_index(drop=True)
    parts = [ordered_real]
    if holdout is not None and holdout_order is not None:
        parts.append(holdout.iloc[holdout_order].reset_index(drop=True)[list(real.columns)])
    population = pd.concat(parts, ignore_index=True)
    n_real, n_population = len(real), len(population)
    people = None if person is None else person_ids(population[person])
    coder = _Coder.fit(population, schema)
    pop_codes, pop_values = coder.encode(population)
    numeric = np.asarray(coder.numeric)
    out_codes, out_values = coder.encode(synthetic)

    rng = np.random.default_rng(seed)
    ordered_exposed = [(int(real_rank[row]), p) for row, p in exposed]
    chosen = _choose_targets(n_real, n_population - n_real, ordered_exposed,
                             settings.n_targets, rng)  # fmt: skip
    k = settings.n_shadows
    labels = np.r_[np.ones(k // 2, bool), np.zeros(k - k // 2, bool)]
    n_train = min(n_real, n_population - 1)
    n_out = len(synthetic)
    total = len(chosen) * k
    done: list[ShadowTarget] = []
    note = ""
    for t, (table, position, how, p_value) in enumerate(chosen):
        index = position if table == "real" else n_real + position
        # the target's unit: its row, or every row of its person
        target_rows = np.array([index])
        if people is not None:
            target_rows = np.flatnonzero(people == people[index])
        others = np.setdiff1d(np.arange(n_population), target_rows)
        units = units_of(len(others), None if people is None else people[others])
        queries = _queries(len(cols), rng)
        target_codes, target_values = pop_codes[index], pop_values[index]
        x = np.empty((k, len(queries) + 3))
        stopped = False
        for s in range(k):
            elapsed = time.monotonic() - start
            if elapsed > settings.time_limit_s:
                stopped = True
                note = _stopped_note(settings, len(done), len(chosen), t, s)
                break
            step(
                (t * k + s) / total,
                f"shadow attack: target {t + 1}/{len(chosen)}, shadow {s + 1}/{k} "
                f"({elapsed:.0f} s of {settings.time_limit_s:.0f} s)",
            )
            size = n_train - len(target_rows) * int(labels[s])
            rows = others[draw_rows(rng, len(others), max(size, 1), groups=units)]
            if labels[s]:
                rows = np.sort(np.r_[rows, target_rows])
            train = population.iloc[rows].reset_index(drop=True)
            try:
                output = generator.sample(train, n_out, int(rng.integers(2**31 - 1)),
                                          deadline=deadline)  # fmt: skip
            except GeneratorTimeout:
                stopped = True
                note = _stopped_note(settings, len(done), len(chosen), t, s) + (
                    "; the generator call running then was killed"
                )
                break
            codes, values = coder.encode(output)
            x[s] = _features(codes, values, target_codes, target_values, numeric=numeric,
                             span=coder.span, queries=queries)  # fmt: skip
        if stopped:
            break
        model_seed = int(rng.integers(2**31 - 1))
        scores = _held_out_scores(x, labels, model_seed)
        tpr, _, threshold = _tpr_at(scores, labels, 0.0)
        candidate = _features(out_codes, out_values, target_codes, target_values,
                              numeric=numeric, span=coder.span, queries=queries)  # fmt: skip
        model = _attack_model(model_seed).fit(x, labels)
        candidate_score = float(model.predict_proba(candidate[None, :])[0, 1])
        original = int(real_order[position]) if table == "real" else int(holdout_order[position])
        done.append(
            ShadowTarget(
                row=original,
                table=table,
                member=table == "real",
                chosen=how,
                exposure_p_value=p_value,
                n_shadows=k,
                auc=_auc(scores, labels),
                tpr=tpr,
                threshold=threshold,
                candidate_score=candidate_score,
                candidate_called=candidate_score >= threshold,
                shadow_scores=scores,
                shadow_labels=labels.copy(),
            )
        )
    step(1.0, "shadow attack done")
    if len(chosen) < settings.n_targets:
        note = (note + "; " if note else "") + (
            f"only {len(chosen)} of {settings.n_targets} targets could be drawn"
        )
    return _summarise(done, settings, complete=not note.startswith("stopped"), note=note,
                      elapsed=time.monotonic() - start, n_train=n_train, n_out=n_out)  # fmt: skip


def _stopped_note(settings: ShadowSettings, n_done: int, n_chosen: int, t: int, s: int) -> str:
    return (
        f"stopped at the time limit ({settings.time_limit_s:g} s) after {n_done} of {n_chosen} "
        f"targets (target {t + 1}: {s} of {settings.n_shadows} shadows)"
    )


def _summarise(
    done: Sequence[ShadowTarget],
    settings: ShadowSettings,
    *,
    complete: bool,
    note: str,
    elapsed: float,
    n_train: int,
    n_out: int,
) -> ShadowAttackResult:
    if done:
        scores = np.concatenate([t.shadow_scores for t in done])
        labels = np.concatenate([t.shadow_labels for t in done])
        tpr, fpr, _ = _tpr_at(scores, labels, TARGET_FPR)
        auc = _auc(scores, labels)
    else:
        tpr = fpr = clopper_pearson_rate(0, 0)
        auc = math.nan
    members = [t for t in done if t.member]
    others = [t for t in done if not t.member]
    return ShadowAttackResult(
        generator=settings.generator,
        settings=settings,
        targets=tuple(done),
        tpr_at_fpr_1pct=tpr,
        fpr=fpr,
        auc=auc,
        candidate_hits=clopper_pearson_rate(sum(t.candidate_called for t in members), len(members)),
        candidate_false_alarms=clopper_pearson_rate(
            sum(t.candidate_called for t in others), len(others)
        ),
        complete=complete,
        note=note,
        elapsed_s=elapsed,
        n_rows_train=n_train,
        n_rows_out=n_out,
    )
