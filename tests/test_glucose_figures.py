"""The glucose figure builders return the traces the page relies on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthreview.figures import glucose as fig


@pytest.fixture
def traces():
    rng = np.random.default_rng(0)
    walks = np.clip(140 + np.cumsum(rng.normal(0, 5, (150, 288)), axis=1), 40, 400)
    return {"real": walks[:120], "copula": walks[120:] + 5}


def test_heatmaps_share_one_fixed_scale_and_sample_100_rows(traces):
    figure = fig.trace_heatmaps(traces)
    heatmaps = [t for t in figure.data if t.type == "heatmap"]
    assert [len(h.z) for h in heatmaps] == [100, 30]
    assert figure.layout.coloraxis.cmin == 40 and figure.layout.coloraxis.cmax == 400
    assert heatmaps[0].x[0] == "00:00" and heatmaps[0].x[-1] == "23:55"


def test_clarke_grid_draws_points_boundaries_and_zone_labels():
    figure = fig.clarke_grid(np.arange(5000.0) % 400, np.arange(5000.0) % 400, max_points=300)
    names = [t.name for t in figure.data]
    assert names == ["forecasts", "perfect", "zone boundaries"]
    assert len(figure.data[0].x) == 300
    assert sorted({a.text for a in figure.layout.annotations}) == [f"<b>{z}</b>" for z in "ABCDE"]
    assert len([x for x in figure.data[2].x if x is None]) == len(fig.CLARKE_LINES)


def test_variance_pca_rmse_and_zone_bars(traces):
    samples = {k: pd.DataFrame({"variance": v.var(axis=1)}) for k, v in traces.items()}
    assert [t.name for t in fig.variance_distributions(samples).data] == ["real", "copula"]
    assert [t.name for t in fig.trace_pca(traces).data] == ["real", "copula"]
    assert len(fig.forecast_rmse({"copula": 20.0}, trtr_rmse=18.0).data) == 1
    zones = {"TRTR": dict(zip("ABCDE", (80, 15, 1, 4, 0), strict=True))}
    assert [t.name for t in fig.clarke_zone_bars(zones).data] == list("ABCDE")
    with pytest.raises(ValueError, match="real"):
        fig.trace_pca({"copula": traces["copula"]})
