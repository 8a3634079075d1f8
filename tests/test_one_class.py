"""One-Class (Deep SVDD) embedding and the fit_embedding entry point."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from synthreview.embeddings import Embedding, fit_embedding
from synthreview.embeddings.one_class import OneClassConfig, fit_one_class
from synthreview.errors import ConfigError


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal((400, 6)).astype(np.float32)


def test_shape_centre_and_protocol(x):
    emb = fit_embedding(x, seed=0)
    assert isinstance(emb, Embedding) and emb.name == "oneclass"
    z = emb.transform(x)
    assert z.shape == (400, 25) and z.dtype == np.float32
    np.testing.assert_array_equal(emb.center, np.ones(25, dtype=np.float32))
    # no bias terms anywhere (hypersphere-collapse guard of the appendix)
    assert all(not name.endswith("bias") for name, _ in emb.network.named_parameters())


def test_same_seed_same_embedding_other_seed_differs(x):
    a, b = fit_embedding(x, seed=3), fit_embedding(x, seed=3)
    np.testing.assert_array_equal(a.transform(x), b.transform(x))
    c = fit_embedding(x, seed=4)
    assert not np.array_equal(a.transform(x), c.transform(x))


def test_training_leaves_global_torch_state_alone(x):
    threads = torch.get_num_threads()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    fit_one_class(x, seed=0, config=OneClassConfig(max_epochs=3))
    assert torch.equal(torch.rand(3), expected)
    assert torch.get_num_threads() == threads


def test_real_rows_sit_closer_to_the_centre_than_far_outliers(x):
    emb = fit_embedding(x, seed=0)
    outliers = (np.random.default_rng(1).standard_normal((50, 6)) * 4).astype(np.float32)
    d_real = np.linalg.norm(emb.transform(x) - emb.center, axis=1)
    d_out = np.linalg.norm(emb.transform(outliers) - emb.center, axis=1)
    assert np.median(d_out) > np.quantile(d_real, 0.9)


def test_progress_reports_fractions_up_to_one(x):
    seen = []
    fit_embedding(x, seed=0, progress=lambda f, msg: seen.append((f, msg)))
    fractions = [f for f, _ in seen]
    assert fractions[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in fractions)
    assert fractions == sorted(fractions) and "epoch" in seen[0][1]


def test_early_stopping_keeps_the_best_validation_epoch(x):
    emb = fit_one_class(x, seed=0, config=OneClassConfig(max_epochs=12, patience=2))
    kept = emb.validation_loss[emb.best_epoch]
    assert kept == min(emb.validation_loss[2:]) and len(emb.validation_loss) <= 12


def test_identity_embedding_centres_on_real_mean(x):
    emb = fit_embedding(x, method="none")
    np.testing.assert_allclose(emb.center, x.mean(axis=0, dtype=np.float64), atol=1e-6)
    np.testing.assert_array_equal(emb.transform(x), x)


def test_bad_inputs():
    with pytest.raises(ConfigError, match="embedding method must be one of"):
        fit_embedding(np.zeros((20, 2)), method="pca")
    with pytest.raises(ValueError, match="at least 10 rows"):
        fit_embedding(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="NaN"):
        fit_embedding(np.full((20, 2), np.nan))
