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
from synthreview.metrics.privacy.attack_stats import attack_set, bootstrap_auc, summarize_attack
from synthreview.metrics.utility.efficacy import discriminator_auc, ratio_interval
from synthreview.splits import (
    bootstrap_rows,
    cv_folds,
    draw_rows,
    permute_rows,
    random_folds,
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
    "metrics/privacy/shadow.py": (
        4,
        "shadow targets, column subsets, shadow generators' and attack models' seeds (the "
        "shadows' training sets are drawn through draw_rows, by person with --person)",
    ),
    "metrics/utility/answer_key.py": (
        1,
        "pandas .sample: the rows of one table a shallow tree is fitted on (label_leak), no "
        "two sides compared",
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
    """Calls of ``.choice``, ``.permutation``, ``.integers``, ``.shuffle``, sklearn splitters
    and pandas' ``.sample`` (told from a generator's ``.sample`` by its ``random_state``)."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            keywords = {k.arg for k in node.keywords}
            if (
                name in ("choice", "permutation", "integers", "shuffle")
                or any(s in name for s in _SPLITTER_NAMES)
                or (name == "sample" and keywords & {"random_state", "frac"})
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
        assert np.array_equal(random_folds(a, 30, 2), b.integers(0, 2, 30))
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


def test_random_folds_put_each_person_in_one_fold_and_single_rows_are_rows():
    ids = _people()
    fold = random_folds(np.random.default_rng(6), len(ids), 3, groups=ids)
    assert all(len(set(fold[ids == p])) == 1 for p in set(ids))
    assert set(fold) == {0, 1, 2}
    # one row per person: the person draw is the row draw, call for call
    a, b = np.random.default_rng(8), np.random.default_rng(8)
    single = np.array([f"p{i}" for i in range(30)])
    assert not units_of(30, single).grouped
    assert np.array_equal(draw_rows(a, 30, 10, groups=single), draw_rows(b, 30, 10))


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


# --- issue 34 item 1: every remaining splitter divides people ----------------------------------


def _whole(ids: np.ndarray, chosen: np.ndarray) -> bool:
    """Every person of ``ids`` has all or none of their rows among the positions ``chosen``."""
    inside = np.zeros(len(ids), bool)
    inside[chosen] = True
    return not set(ids[inside]) & set(ids[~inside])


def test_attack_sets_and_their_sanity_halves_divide_people():
    real_ids, holdout_ids = _people(60, seed=2), _people(50, seed=3)
    for sanity in (False, True):
        sets = attack_set(len(real_ids), len(holdout_ids), max_attack=80, seed=5,
                          sanity_within_nonmembers=sanity, real_groups=real_ids,
                          holdout_groups=holdout_ids)  # fmt: skip
        assert 0 < len(sets.real_rows) <= 80 and 0 < len(sets.holdout_rows) <= 80
        assert _whole(real_ids, sets.real_rows) and _whole(holdout_ids, sets.holdout_rows)
        pseudo = (set(holdout_ids[sets.reference_member_rows]),
                  set(holdout_ids[sets.reference_nonmember_rows]))  # fmt: skip
        assert pseudo[0] and pseudo[1] and not pseudo[0] & pseudo[1]
        assert len(pseudo[0]) == len(pseudo[1])  # as many people on each side
        pool = sets.holdout_rows if sanity else np.arange(len(holdout_ids))
        for half in (sets.reference_member_rows, sets.reference_nonmember_rows):
            assert set(half) <= set(pool)
            assert _whole(holdout_ids[pool], np.flatnonzero(np.isin(pool, half)))
    # without groups the draws are the earlier ones, call for call
    rng = np.random.default_rng(5)
    plain = attack_set(300, 200, max_attack=80, seed=5, sanity_within_nonmembers=True)
    real_rows, holdout_rows = (np.sort(rng.choice(n, 80, replace=False)) for n in (300, 200))
    shuffled = holdout_rows[rng.permutation(80)]
    assert np.array_equal(plain.real_rows, real_rows)
    assert np.array_equal(plain.reference_member_rows, np.sort(shuffled[:40]))
    assert np.array_equal(plain.reference_nonmember_rows, np.sort(shuffled[40:80]))


def _spy(patch: pytest.MonkeyPatch, module, name: str) -> list:
    """Wrap ``module.name`` (a splits function) and record each call's arguments and result."""
    calls = []
    real = getattr(module, name)

    def recording(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append((args, kwargs, out))
        return out

    patch.setattr(module, name, recording)
    return calls


def _person_frame(n_people: int, rows: int, seed: int, offset: int = 0) -> pd.DataFrame:
    frame = _panel(n_people, rows, seed, offset)
    return frame.assign(person=frame["person"].astype(str))


def _grouped(groups) -> bool:
    """Whether a ``groups`` argument groups rows into people (labels, or a grouped Units)."""
    return groups is not None and getattr(groups, "grouped", True)


def _labels(groups) -> np.ndarray:
    """One label per row from a ``groups`` argument (labels, or a Units)."""
    return groups.labels if hasattr(groups, "labels") else np.asarray(groups)


@pytest.fixture(scope="module")
def person_privacy():
    """The privacy section of a person-level review (6 rows per person, holdout smaller than
    training so the DCR share subsamples training people), with quasi-identifiers, every draw
    of the section, the attacks, the DCR share and the QI balance recorded."""
    from synthreview.encoding import TabularEncoder
    from synthreview.metrics.privacy import attack_stats, membership, quasi, section

    schema = Schema({"person": "identifier", "x": "numeric", "z": "numeric",
                     "trait": "categorical"})  # fmt: skip
    real = _person_frame(50, 6, seed=0)
    holdout = _person_frame(30, 6, seed=1, offset=1000)
    synthetic = _person_frame(40, 6, seed=2, offset=2000)
    encoder = TabularEncoder(schema).fit(real)
    with pytest.MonkeyPatch.context() as patch:
        calls = {
            "dcr": _spy(patch, section, "draw_rows"),
            "attack_draws": _spy(patch, attack_stats, "draw_rows"),
            "attack_halves": _spy(patch, attack_stats, "split_rows"),
            "folds": _spy(patch, membership, "cv_folds"),
            "quasi": _spy(patch, quasi, "split_rows"),
        }
        report = section.evaluate_privacy(
            real, synthetic, holdout, schema=schema, encoder=encoder, person="person",
            quasi_identifiers=["trait"], seed=0, max_attack=100,
        )  # fmt: skip
    return report, calls


def test_the_dcr_share_subsamples_whole_training_people(person_privacy):
    report, calls = person_privacy
    grouped = [(a, k, out) for a, k, out in calls["dcr"] if k.get("groups") is not None]
    assert len(grouped) == 1  # training (300 rows) cut to the holdout's 180 rows, by person
    (_, n_rows, size), kwargs, rows = grouped[0]
    assert n_rows == 300 and size == 180 and 0 < len(rows) <= 180
    assert _whole(_labels(kwargs["groups"]), rows)
    assert report.dcr is not None and report.dcr.share_rows == 180


def test_row_level_attack_sets_and_folds_divide_people(person_privacy):
    _, calls = person_privacy
    grouped = [c for c in calls["attack_draws"] if c[1].get("groups") is not None]
    assert grouped, "the row-level attack set was drawn by row"
    for _, kwargs, rows in grouped:
        assert _whole(_labels(kwargs["groups"]), rows)
    halves = [c for c in calls["attack_halves"] if _grouped(c[1].get("groups"))]
    assert halves
    for _, kwargs, parts in halves:
        assert all(_whole(_labels(kwargs["groups"]), part) for part in parts)
    folds = [c for c in calls["folds"] if c[1].get("groups") is not None]
    assert folds, "the cross-fitted attacks' folds were drawn by row"
    for _, kwargs, _ in folds:
        labels = _labels(kwargs["groups"])
        # the generator was consumed by the code under test: draw the folds again
        y = np.zeros(len(labels), bool)
        y[: len(y) // 2] = True
        for train, test in cv_folds(y, n_splits=kwargs["n_splits"], seed=kwargs["seed"],
                                    groups=kwargs["groups"]):  # fmt: skip
            assert not set(labels[train]) & set(labels[test])


def test_the_qi_balance_matches_and_resplits_whole_people(person_privacy):
    report, calls = person_privacy
    assert report.quasi_identifiers is not None
    resplits = [c for c in calls["quasi"] if _grouped(c[1].get("groups"))]
    assert len(resplits) >= 199  # the size-matching subsample and every re-split
    for _, kwargs, parts in resplits:
        # a person in a part has every row there: never on both sides, never cut by a subsample
        assert all(_whole(_labels(kwargs["groups"]), part) for part in parts)


def test_a_person_level_review_above_sample_rows_samples_people():
    from synthreview.io.persons import with_person
    from synthreview.io.tables import align
    from synthreview.sampling import plan_sentence, sample_review

    frame = _person_frame(500, 5, seed=0)  # 2,500 rows, 5 a person
    parts = {"real": frame.iloc[:1500], "holdout": frame.iloc[1500:]}
    synthetic = _person_frame(300, 5, seed=1, offset=5000)
    no_ids = synthetic.assign(person=np.nan)
    review = with_person(
        align(parts["real"].reset_index(drop=True), {"syn": synthetic, "no_ids": no_ids},
              holdout=parts["holdout"].reset_index(drop=True)),
        "person",
    )  # fmt: skip
    _, sampling = sample_review(review, 1000, seed=0, person="person")
    assert sampling is not None
    for table in (review.real, review.holdout, review.synthetic["syn"]):
        drawn = sampling.table(table.name if table.role == "synthetic" else table.role)
        ids = table.frame["person"].astype(str).to_numpy()
        assert drawn.sampled == (table.n_rows > 1000)
        assert _whole(ids, drawn.positions)  # every sampled person brings every row
    assert sampling.table("syn").rows_used == 1000  # 5 rows a person: 200 people exactly
    # a candidate without ids is sampled by row
    assert sampling.table("no_ids").rows_used == 1000
    assert "whole people (by 'person')" in plan_sentence(review, 1000, person="person")


def test_the_epsilon_bound_halves_divide_people():
    from synthreview.metrics.privacy import epsilon

    ids = _people(40, seed=7)
    member = np.r_[np.ones(len(ids) // 2, bool), np.zeros(len(ids) - len(ids) // 2, bool)]
    rng = np.random.default_rng(0)
    attack = summarize_attack("a", rng.normal(size=len(ids)) + member, member, n_bootstrap=5)
    with pytest.MonkeyPatch.context() as patch:
        calls = _spy(patch, epsilon, "draw_rows")
        epsilon.epsilon_lower_bound([attack], groups=ids, seed=0)
    assert len(calls) == 2  # members' half, non-members' half
    for _, kwargs, rows in calls:
        assert _whole(np.asarray(kwargs["groups"]), rows)  # whole people in the chosen half
    # a person of one row is a row: the halves are the earlier row draws
    plain = epsilon.epsilon_lower_bound([attack], seed=0)
    assert epsilon.epsilon_lower_bound([attack], groups=np.arange(len(ids)), seed=0) == plain
