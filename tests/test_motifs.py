"""Motif breadth (GlucoSynth §3.1, §7.3) under the quantise-and-hash matching rule."""

from __future__ import annotations

import numpy as np
import pytest

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.metrics.glucose.motifs import motif_breadth, motif_set


@pytest.fixture
def traces():
    rng = np.random.default_rng(0)
    return np.clip(140 + np.cumsum(rng.normal(0, 5, (30, 288)), axis=1), 40, 400)


def test_identical_sets_are_perfect(traces):
    result = motif_breadth(traces, traces.copy())
    assert (result.vm, result.coverage, result.mse) == (1.0, 1.0, 0.0)
    assert result.n_real == result.n_synthetic == result.n_shared > 100


def test_copy_shifted_beyond_tolerance_matches_nothing(traces):
    for shift in (2.0, 2.5, -3.0, 40.0):
        result = motif_breadth(traces, traces + shift, motif_length=48, tolerance_mg_dl=2.0)
        assert result.vm == 0.0 and result.coverage == 0.0 and result.mse > 0


def test_values_in_the_same_tolerance_cell_match():
    base = np.tile(4.0 * np.arange(96.0), (2, 1))  # every value on a cell edge (cells of 2)
    result = motif_breadth(base, base + 1.9, motif_length=48, tolerance_mg_dl=2.0)
    assert result.vm == result.coverage == 1.0


def test_vm_and_coverage_are_shares_of_distinct_motifs():
    a = np.tile(np.arange(4.0) * 10, (1, 1))  # two chunks of length 2: [0,10], [20,30]
    b = np.array([[0.0, 10.0, 0.0, 10.0], [50.0, 60.0, 70.0, 80.0]])  # [0,10] x2, 2 new
    result = motif_breadth(a, b, motif_length=2, tolerance_mg_dl=1.0)
    assert result.n_real == 2 and result.n_synthetic == 3 and result.n_shared == 1
    assert result.vm == pytest.approx(1 / 3) and result.coverage == pytest.approx(1 / 2)
    # frequency shares over the union {[0,10], [20,30], [50,60], [70,80]}
    expected = np.mean((np.array([0.5, 0.5, 0, 0]) - np.array([0.5, 0, 0.25, 0.25])) ** 2)
    assert result.mse == pytest.approx(expected)


def test_chunks_with_missing_readings_and_short_tails_are_skipped():
    g = np.arange(10.0)[None, :] * 10
    g[0, 1] = np.nan
    s = motif_set(g, motif_length=4, tolerance_mg_dl=1.0)
    assert s.n_chunks == 1  # [0, nan, 20, 30] skipped, [40..70] kept, tail [80, 90] dropped


def test_order_of_traces_does_not_matter(traces):
    rng = np.random.default_rng(3)
    other = traces + rng.normal(0, 1, traces.shape)
    a = motif_breadth(traces, other)
    b = motif_breadth(traces[rng.permutation(30)], other[rng.permutation(30)])
    assert a == b


def test_bad_arguments_and_empty_sets():
    with pytest.raises(DataError, match="motif_length"):
        motif_set(np.zeros((2, 10)), motif_length=11)
    with pytest.raises(DataError, match="tolerance"):
        motif_set(np.zeros((2, 10)), motif_length=5, tolerance_mg_dl=0)
    with pytest.raises(DataError, match="share"):
        motif_breadth(
            motif_set(np.zeros((2, 10)), motif_length=5),
            motif_set(np.zeros((2, 10)), motif_length=2),
        )
    with pytest.warns(UndefinedMetricWarning):
        result = motif_breadth(np.full((2, 10), np.nan), np.zeros((2, 10)), motif_length=5)
    assert np.isnan(result.vm)
