"""Rare-value membership attack (issue 27 item 2): a copula with empirical marginals reproduces
rare training values, which the attack sees above chance; a fresh real sample stays at chance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthreview.encoding import TabularEncoder
from synthreview.generators.tables import gaussian_copula
from synthreview.metrics.privacy.membership import ATTACK_LABELS, ATTACKS, membership_inference
from synthreview.metrics.privacy.rare_values import rare_value_samples
from tests.credit_split import german_credit_split


def test_scores_count_reproduced_rare_values_by_hand():
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 3.0], "c": ["a", "b", "z", "b"]})
    holdout = pd.DataFrame({"x": [4.0, 3.0, np.nan], "c": ["b", "y", "b"]})
    synthetic = pd.DataFrame({"x": [1.0, 3.0, 4.0], "c": ["z", "b", "y"]})
    # population x: 1, 2, 4 once, 3 three times; c: a, z, y once, b four times
    found = rare_value_samples(real, synthetic, holdout, numeric=["x"], max_count=1)
    # real rows: x=1 (rare, released) + c=a (rare, not released); x=2 (rare, not released);
    # x=3 (common) + c=z (rare, released); x=3 (common) + c=b (common)
    assert found.real.tolist() == [1, 0, 1, 0]
    assert found.real_rare.tolist() == [2, 1, 1, 0]
    # holdout: x=4 (rare, released); c=y (rare, released); a missing value is never rare
    assert found.holdout.tolist() == [1, 1, 0]
    assert found.holdout_rare.tolist() == [1, 1, 0]
    # max_count=3 makes 3 rare too: rows holding x=3 now count it (3 is released)
    wider = rare_value_samples(real, synthetic, holdout, numeric=["x"], max_count=3)
    assert wider.real.tolist() == [1, 0, 2, 1]
    # text comparison: the numeric column read as text still matches "1.0" with "1.0"
    assert rare_value_samples(real, synthetic, holdout, max_count=1).real.tolist() == [1, 0, 1, 0]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_max_count_is_checked(bad):
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="max_count must be an integer >= 1"):
        rare_value_samples(frame, frame, frame, max_count=bad)


def test_missing_column_is_named():
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(ValueError, match="synthetic is missing columns"):
        rare_value_samples(frame, frame.rename(columns={"x": "y"}), frame)


def test_the_attack_is_in_the_ensemble_with_a_label():
    assert "rare_values" in ATTACKS and "rare_values" in ATTACK_LABELS


@pytest.fixture(scope="module")
def credit():
    """German credit split into 300 training, 300 holdout and 300 fresh rows, plus a copula."""
    n = 300
    split = german_credit_split(n)
    real, holdout, fresh, schema = split.real, split.holdout, split.fresh, split.schema
    copula = gaussian_copula(real.frame, schema=schema, seed=1)
    encoder = TabularEncoder(schema).fit(real.frame)
    return real.frame, holdout.frame, {"fresh": fresh.frame, "copula": copula}, encoder


def _attack(credit, name):
    real, holdout, candidates, encoder = credit
    (result,) = membership_inference(
        real, candidates[name], holdout, encoder=encoder, attacks=["rare_values"], seed=0
    )
    assert result.error is None, result.error
    return result


def test_a_copula_that_reproduces_rare_training_values_is_caught(credit):
    result = _attack(credit, "copula")
    assert result.auc_ci[0] > 0.5, result  # the interval excludes chance
    assert result.auc > 0.7
    assert result.reference_auc == pytest.approx(0.5, abs=0.1)  # holdout-only run: chance


def test_a_fresh_real_sample_is_at_chance(credit):
    result = _attack(credit, "fresh")
    assert result.auc_ci[0] <= 0.5 <= result.auc_ci[1], result
    assert abs(result.auc - 0.5) < 0.05
