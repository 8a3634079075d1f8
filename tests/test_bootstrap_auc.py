"""The TSTR/TRTR ratio's bootstrap AUCs from row counts equal ranking each resample, bit for bit.

``efficacy.ratio_interval`` scores 200 resamples of the test rows for each model; ranking each
resample was most of the utility section's interval time (issue 39). The AUC is now a sum over
the scores' tie groups weighted by each row's count in the resample; these tests hold it to
the ranked AUC exactly, so the interval, the rule it feeds and report.json keep their bytes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthreview.metrics.utility import efficacy
from synthreview.splits import bootstrap_rows, units_of


def _scores(n: int, seed: int, *, levels: int | None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    raw = rng.normal(size=n) + y
    # a forest's probabilities repeat: few levels give many ties
    return y, (np.round(raw * levels) / levels if levels else raw)


@pytest.mark.parametrize("levels", [None, 4, 50])
@pytest.mark.parametrize("grouped", [False, True])
def test_counted_auc_is_the_ranked_auc_to_the_last_bit(levels, grouped):
    y, predicted = _scores(700, 3, levels=levels)
    groups = np.arange(700) // 3 if grouped else None
    units = units_of(700, groups)
    ranked = efficacy._RankedScores(y, predicted)
    rng = np.random.default_rng(0)
    for _ in range(60):
        rows = bootstrap_rows(rng, 700, groups=units)
        expected = efficacy._score("roc_auc", y[rows], predicted[rows])
        found = ranked.auc(np.bincount(rows, minlength=700))
        assert found == expected or (math.isnan(found) and math.isnan(expected))


def test_a_resample_without_a_class_has_no_auc():
    ranked = efficacy._RankedScores(np.array([True, False, False]), np.array([0.2, 0.1, 0.4]))
    assert math.isnan(ranked.auc(np.array([0, 2, 1])))


@pytest.mark.parametrize("levels", [None, 10])
def test_the_interval_is_the_ranked_one(levels):
    y, tstr = _scores(500, 5, levels=levels)
    _, trtr = _scores(500, 6, levels=levels)
    fast = efficacy.ratio_interval("roc_auc", y, tstr, trtr, seed=2)
    # the reference: every resample ranked, with ratio_interval's draws
    rng = np.random.default_rng([2, 34])
    ratios = []
    for _ in range(efficacy.N_RATIO_BOOTSTRAP):
        rows = bootstrap_rows(rng, 500)
        ratios.append(
            efficacy._score("roc_auc", y[rows], tstr[rows])
            / efficacy._score("roc_auc", y[rows], trtr[rows])
        )
    low, high = np.percentile(ratios, [2.5, 97.5])
    assert fast == (float(low), float(high))
