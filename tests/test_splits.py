"""The one grouped-split helper (issue 34): row draws unchanged, people never on both sides.

Every splitter of ``synthreview/`` goes through :mod:`synthreview.splits`; the inventory test
below fails when a new ``rng.choice`` / ``rng.permutation`` / bootstrap ``rng.integers`` or a
scikit-learn splitter appears outside it, unless it is listed with why it divides no rows.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold

from synthreview.io.schema import Schema
from synthreview.metrics.privacy.attack_stats import attack_set, bootstrap_auc
from synthreview.metrics.utility.efficacy import discriminator_auc, ratio_interval
from synthreview.splits import (
    bootstrap_rows,
    cv_folds,
    draw_rows,
    permute_rows,
    split_rows,
    units_of,
)

ROOT = Path(__file__).resolve().parents[1] / "synthreview"

#: draws outside splits.py that divide no table's rows into sides, per file: (count, why)
ALLOWED = {
    "generators/traces.py": (1, "a generator draws source traces to copy"),
    "generators/tables.py": (6, "generators draw source rows and sub-seeds"),
    "generators/builtin.py": (1, "the memorise generator's copy order"),
    "metrics/utility/kmarginal.py": (1, "which marginals are scored, not rows"),
    "metrics/privacy/wp29.py": (
        8,
        "query columns, operators and random guesses of the attacks; "
        "targets are one row per person already",
    ),
    "metrics/privacy/attacks.py": (
        1,
        "fold of each attack row in the LOGAN classifier: the "
        "attack set holds one row per person in a person review",
    ),
    "metrics/privacy/shadow.py": (
        5,
        "shadow targets, column subsets and shadow generators' seeds (a generator's training sets)",
    ),
    "metrics/privacy/quasi.py": (
        2,
        "quasi-identifier subsample and permutation test, written beside issue 34 by another "
        "change: not yet routed (a person-level review does not run it by person)",
    ),
    "metrics/glucose/section.py": (1, "test days of the forecast without a holdout (traces)"),
    "metrics/glucose/seekers.py": (2, "training rows of the trace seekers (traces)"),
    "metrics/glucose/forecast.py": (2, "forecast windows (traces)"),
    "neighbors.py": (2, "rows checked for the approximate index's recall"),
    "figures/glucose.py": (3, "traces drawn for a figure"),
    "training.py": (2, "torch seed and mini-batch order"),
    "demo.py": (7, "the demo's own data"),
    "embeddings/lstm_autoencoder.py": (1, "embedding training rows (traces)"),
    "embeddings/one_class.py": (2, "torch seed and mini-batch order"),
}
_SPLITTER_NAMES = ("KFold", "ShuffleSplit", "train_test_split", "LeaveOneGroupOut")


def _draws(path: Path) -> int:
    """Calls of ``.choice``, ``.permutation``, ``.integers``, ``.shuffle`` and sklearn splitters."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("choice", "permutation", "integers", "shuffle") or any(
                s in name for s in _SPLITTER_NAMES
            ):
                count += 1
    return count


def test_no_splitter_bypasses_the_helper():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel != "splits.py" and (n := _draws(path)):
            found[rel] = n
    expected = {rel: n for rel, (n, _) in ALLOWED.items()}
    assert found == expected, (
        "a file draws rows outside synthreview.splits; route the draw through the helper "
        "(draw_rows, permute_rows, split_rows, bootstrap_rows, cv_folds) or list it in ALLOWED "
        "with why it divides no rows"
    )


# --- row-level draws are the engine's earlier draws, call for call ---------------------------


def test_row_draws_reproduce_the_earlier_calls():
    for seed in range(5):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert np.array_equal(draw_rows(a, 50, 20), np.sort(b.choice(50, 20, replace=False)))
        assert np.array_equal(permute_rows(a, 30), b.permutation(30))
        assert np.array_equal(bootstrap_rows(a, 40), b.integers(0, 40, 40))
        drawn = draw_rows(a, 25, 7, drawn_order=True)
        assert np.array_equal(drawn, b.choice(25, 7, replace=False))
        # the generator continues identically after each call
        assert a.random() == b.random()


def test_row_folds_are_stratified_kfold():
    y = np.r_[np.zeros(30, bool), np.ones(20, bool)]
    ours = list(cv_folds(y, n_splits=5, seed=3))
    theirs = list(StratifiedKFold(5, shuffle=True, random_state=3).split(np.zeros(50), y))
    assert all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for a, b in zip(ours, theirs, strict=True)
    )


# --- people never on both sides ----------------------------------------------------------------


def _people(n_people: int = 40, seed: int = 0) -> np.ndarray:
    sizes = np.random.default_rng(seed).integers(1, 7, n_people)
    ids = np.repeat([f"p{i}" for i in range(n_people)], sizes)
    return ids[np.random.default_rng(seed + 1).permutation(len(ids))]  # people's rows mixed


def test_units_number_people_in_order_of_first_appearance():
    units = units_of(5, np.array(["b", "a", "b", "7", 7], dtype=object))
    assert units.grouped and units.n_units == 3
    assert units.labels.tolist() == [0, 1, 0, 2, 2]  # 7 and "7" are one person
    with pytest.raises(ValueError, match="groups must hold one label per row"):
        units_of(4, np.array(["a", "b"]))
    with pytest.raises(ValueError, match="missing label"):
        units_of(2, np.array(["a", None], dtype=object))
    assert units_of(5, units) is units  # grouped once, reused by every resample
    with pytest.raises(ValueError, match="groups must group 4 rows; got 5"):
        units_of(4, units)
    # rows of the units asked for, unit by unit, repeats kept
    assert units.expand(np.array([2, 0, 2])).tolist() == [3, 4, 0, 2, 3, 4]


def test_a_drawn_subset_takes_whole_people():
    ids = _people()
    rows = draw_rows(np.random.default_rng(0), len(ids), 60, groups=ids)
    rest = np.setdiff1d(np.arange(len(ids)), rows)
    assert 0 < len(rows) <= 60
    assert not set(ids[rows]) & set(ids[rest])


def test_split_parts_never_share_a_person():
    ids = _people()
    parts = split_rows(np.random.default_rng(1), len(ids), (15, 15, 10), groups=ids)
    seen = [set(ids[p]) for p in parts]
    assert [len(s) for s in seen] == [15, 15, 10]
    assert not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2])
    assert sum(len(p) for p in parts) == len(ids)  # every person's every row placed
    with pytest.raises(ValueError, match="add up to at most 40 units"):
        split_rows(np.random.default_rng(1), len(ids), (30, 30), groups=ids)


def test_a_cut_of_a_grouped_permutation_divides_people():
    ids = _people()
    order = permute_rows(np.random.default_rng(2), len(ids), groups=ids)
    assert sorted(order.tolist()) == list(range(len(ids)))
    runs = ids[order]
    changes = np.flatnonzero(runs[1:] != runs[:-1]) + 1
    assert len(changes) == 39  # each person's rows consecutive: 40 runs


def test_folds_put_each_person_in_one_test_fold():
    ids = _people()
    y = np.array([int(p[1:]) % 3 == 0 for p in ids])
    tested = {}
    for k, (train, test) in enumerate(cv_folds(y, n_splits=4, seed=0, groups=ids)):
        assert not set(ids[train]) & set(ids[test])
        for person in set(ids[test]):
            assert tested.setdefault(person, k) == k
    assert len(tested) == 40


def test_a_bootstrap_resample_brings_each_drawn_person_whole():
    ids = _people()
    rows = bootstrap_rows(np.random.default_rng(4), len(ids), groups=ids)
    counts = pd.Series(ids).value_counts()
    drawn = pd.Series(ids[rows]).value_counts()
    # a person drawn m times brings m times all of the person's rows
    assert all(drawn[p] % counts[p] == 0 for p in drawn.index)


def test_attack_sets_and_bootstrap_auc_keep_their_pinned_draws():
    # attack_set and bootstrap_auc route through the helper; the draws are the earlier ones
    rng = np.random.default_rng(7)
    n = 40
    sets = attack_set(100, 60, max_attack=n, seed=7)
    assert np.array_equal(sets.real_rows, np.sort(rng.choice(100, n, replace=False)))
    assert np.array_equal(sets.holdout_rows, np.sort(rng.choice(60, n, replace=False)))
    scores = np.random.default_rng(1).random(30)
    member = np.arange(30) % 3 == 0
    boot = bootstrap_auc(scores, member, n_bootstrap=5, seed=0)
    # the earlier code: members, then non-members, resampled with rng.integers(0, n, n)
    check, expected = np.random.default_rng(0), []
    for _ in range(5):
        m = scores[member][check.integers(0, 10, 10)]
        h = scores[~member][check.integers(0, 20, 20)]
        expected.append(np.mean((m[:, None] > h[None, :]) + 0.5 * (m[:, None] == h[None, :])))
    assert np.allclose(boot, expected)


# --- the splitters that divide people in a person-level review -------------------------------


def _panel(n_people: int, rows: int, seed: int, offset: int = 0) -> pd.DataFrame:
    """People with a constant trait and yearly values near the person's own level."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 1, n_people)
    trait = rng.integers(0, 3, n_people)
    person = np.repeat(np.arange(offset, offset + n_people), rows)
    return pd.DataFrame({
        "person": person,
        "x": np.repeat(level, rows) + rng.normal(0, 0.05, n_people * rows),
        "z": np.repeat(level * 2, rows) + rng.normal(0, 0.05, n_people * rows),
        "trait": pd.Categorical(np.repeat(trait, rows).astype(str)),
    })  # fmt: skip


def test_discriminator_folds_divide_people_and_pass_fresh_people():
    schema = Schema({"person": "identifier", "x": "numeric", "z": "numeric",
                     "trait": "categorical"})  # fmt: skip
    real = _panel(60, 8, seed=0)
    fresh = _panel(60, 8, seed=1, offset=1000)
    by_row = discriminator_auc(real, fresh, schema=schema, seed=0)
    by_person = discriminator_auc(real, fresh, schema=schema, seed=0, person="person")
    assert by_row.unit == "row" and by_person.unit == "person"
    # rows of one person in several folds: the classifier recognises the real people
    assert by_row.auc > 0.7
    assert abs(by_person.auc - 0.5) < 0.15


def test_ratio_interval_resamples_people_not_their_rows():
    rng = np.random.default_rng(0)
    n_people, rows = 60, 8
    y = np.repeat(rng.random(n_people) < 0.2, rows)
    level = np.repeat(rng.normal(0, 1, n_people), rows)
    tstr = level + y * 1.0
    trtr = level + y * 1.2
    ids = np.repeat(np.arange(n_people), rows)
    by_row = ratio_interval("roc_auc", y, tstr, trtr, seed=0)
    by_person = ratio_interval("roc_auc", y, tstr, trtr, groups=ids, seed=0)
    # eight copies of each person are not eight independent test cases
    assert by_person[1] - by_person[0] > 1.5 * (by_row[1] - by_row[0])
    with pytest.raises(ValueError, match="metric must be one of"):
        ratio_interval("f1", y, tstr, trtr)
