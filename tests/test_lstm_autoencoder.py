"""LSTM autoencoder embedding of traces (Alaa et al. 2022, appendix): shape, seeding, centre."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from synthreview.embeddings.base import Embedding
from synthreview.embeddings.lstm_autoencoder import fill_gaps, fit_lstm_autoencoder
from synthreview.errors import DataError


@pytest.fixture(scope="module")
def traces():
    rng = np.random.default_rng(0)
    return np.clip(140 + np.cumsum(rng.normal(0, 5, (24, 288)), axis=1), 40, 400)


@pytest.fixture(scope="module")
def fitted(traces):
    return fit_lstm_autoencoder(traces, epochs=2, max_train=16, seed=3)


def test_embedding_is_280_dimensional_and_follows_the_protocol(fitted, traces):
    z = fitted.transform(traces)
    assert isinstance(fitted, Embedding) and fitted.name == "lstm_autoencoder"
    assert z.shape == (24, 280) and z.dtype == np.float32
    np.testing.assert_allclose(fitted.center, z.mean(axis=0), rtol=1e-5, atol=1e-6)


def test_same_seed_gives_identical_embeddings_and_global_rng_is_untouched(fitted, traces):
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    again = fit_lstm_autoencoder(traces, epochs=2, max_train=16, seed=3)
    assert torch.rand(1) == before
    np.testing.assert_array_equal(again.transform(traces), fitted.transform(traces))
    assert again.train_loss == fitted.train_loss
    other = fit_lstm_autoencoder(traces, epochs=2, max_train=16, seed=4)
    assert not np.array_equal(other.transform(traces), fitted.transform(traces))


def test_training_reduces_the_reconstruction_error(traces):
    fitted = fit_lstm_autoencoder(traces, epochs=6, seed=0)
    assert fitted.train_loss[-1] < fitted.train_loss[0]


def test_gaps_are_interpolated_and_empty_traces_rejected():
    filled = fill_gaps([[np.nan, 100.0, np.nan, 120.0, np.nan]])
    np.testing.assert_array_equal(filled, [[100.0, 100.0, 110.0, 120.0, 120.0]])
    with pytest.raises(DataError, match="no valid reading"):
        fill_gaps([[np.nan, np.nan]])


def test_gappy_traces_embed_without_nan(fitted, traces):
    gappy = traces[:3].copy()
    gappy[:, 50:80] = np.nan
    assert np.isfinite(fitted.transform(gappy)).all()
