"""Forecasting utility of glucose traces: train on synthetic, test on real (TSTR) vs TRTR.

GlucoSynth (Lamp et al. 2023) §7.4 and appendix E: an LSTM glucose forecaster is trained on
synthetic traces and tested on real validation traces (TSTR); the same model trained on real
training traces (TRTR) is the reference. Both report the RMSE (mg/dL, lower is better) and the
Clarke error grid of the test predictions (:mod:`synthreview.metrics.glucose.clarke`).

The forecaster sees ``history_steps`` readings (default 24 = the past 2 hours) and predicts
the reading ``horizon_steps`` after the last one (default 6 = 30 minutes ahead). It is a
one-layer LSTM with a linear read-out that predicts the change from the last reading, on
glucose standardised with fixed constants (140 ± 60 mg/dL) so TSTR and TRTR models see the
same scale whatever data they are trained on. Windows with a missing reading are skipped;
training uses at most ``max_windows`` windows (a seeded sample), and testing at most
``max_test_windows``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.metrics.glucose.clarke import ClarkeResult, clarke_error_grid
from synthreview.metrics.glucose.parkes import PointAccuracy, point_accuracy
from synthreview.training import in_batches, seeded_torch, torch_threads, train_minibatches

_CENTER_MG_DL = 140.0
_SPREAD_MG_DL = 60.0


def forecast_windows(
    traces: object,
    *,
    history_steps: int = 24,
    horizon_steps: int = 6,
    stride: int = 6,
) -> tuple[np.ndarray, np.ndarray]:
    """Cut traces into (history, target) pairs, skipping any window with a missing reading.

    Returns
    -------
    history : ndarray of shape (n_windows, history_steps)
    target : ndarray of shape (n_windows,)
        The reading ``horizon_steps`` after the last history reading, mg/dL.
    """
    values = getattr(traces, "values", traces)
    g = np.asarray(traces if callable(values) else values, dtype=np.float64)
    if g.ndim != 2:
        raise DataError(f"traces must have shape (n_traces, n_steps); got {g.shape}")
    if history_steps < 1 or horizon_steps < 1:
        raise DataError(
            f"history_steps and horizon_steps must be >= 1; got {history_steps}, {horizon_steps}"
        )
    span = history_steps + horizon_steps
    if span > g.shape[1]:
        return np.empty((0, history_steps)), np.empty(0)
    windows = np.lib.stride_tricks.sliding_window_view(g, span, axis=1)[:, ::stride]
    windows = windows.reshape(-1, span)
    windows = windows[np.isfinite(windows).all(axis=1)]
    return windows[:, :history_steps].copy(), windows[:, -1].copy()


class _Forecaster(nn.Module):
    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(1, hidden_size, batch_first=True)
        self.readout = nn.Linear(hidden_size, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x.unsqueeze(-1))
        return x[:, -1] + self.readout(out[:, -1]).squeeze(-1)


@dataclass(frozen=True, eq=False)
class Forecaster:
    """A trained glucose forecaster; ``predict`` maps histories (mg/dL) to forecasts (mg/dL)."""

    model: _Forecaster = field(repr=False)
    history_steps: int
    horizon_steps: int
    n_train_windows: int
    device: str = "cpu"

    def predict(self, history: np.ndarray, *, batch_size: int = 8192) -> np.ndarray:
        """Forecast the reading ``horizon_steps`` ahead of each history row."""
        x = torch.as_tensor(
            (np.asarray(history) - _CENTER_MG_DL) / _SPREAD_MG_DL, dtype=torch.float32
        )
        if not len(x):
            return np.empty(0)
        self.model.eval()
        out = in_batches(self.model, x, batch_size=batch_size, device=self.device)
        return out.numpy().astype(np.float64) * _SPREAD_MG_DL + _CENTER_MG_DL


def train_forecaster(
    traces: object,
    *,
    history_steps: int = 24,
    horizon_steps: int = 6,
    hidden_size: int = 32,
    max_windows: int = 16_000,
    epochs: int = 8,
    batch_size: int = 256,
    learning_rate: float = 1e-2,
    seed: int = 0,
    device: str = "cpu",
    num_threads: int | None = 1,
) -> Forecaster:
    """Train the LSTM forecaster on the windows of ``traces`` (seeded; global torch RNG kept).

    ``num_threads`` torch threads are used while training (``None`` keeps torch's setting; see
    :func:`synthreview.training.torch_threads`).

    Raises :class:`~synthreview.errors.DataError` when the traces yield no complete window.
    """
    history, target = forecast_windows(
        traces, history_steps=history_steps, horizon_steps=horizon_steps
    )
    if len(history) == 0:
        raise DataError(
            f"traces yield no complete window of {history_steps + horizon_steps} readings "
            "to train a forecaster on"
        )
    rng = np.random.default_rng(seed)
    if len(history) > max_windows:
        keep = np.sort(rng.choice(len(history), size=max_windows, replace=False))
        history, target = history[keep], target[keep]
    x = torch.as_tensor((history - _CENTER_MG_DL) / _SPREAD_MG_DL, dtype=torch.float32)
    y = torch.as_tensor((target - _CENTER_MG_DL) / _SPREAD_MG_DL, dtype=torch.float32)
    x, y = x.to(device), y.to(device)
    with seeded_torch(rng, num_threads):
        model = _Forecaster(hidden_size).to(device)
        train_minibatches(
            model,
            lambda batch: nn.functional.mse_loss(model(x[batch]), y[batch]),
            len(x),
            rng=rng,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            device=device,
        )
    return Forecaster(model, history_steps, horizon_steps, len(x), device)


@dataclass(frozen=True)
class ForecastEvaluation:
    """Test error of one forecaster on real test traces.

    Attributes
    ----------
    rmse : float
        Root mean squared error in mg/dL, >= 0, lower is better.
    clarke : ClarkeResult
        Clarke error grid of the test predictions (reference = measured reading).
    n_train_windows, n_test_windows : int
    accuracy : PointAccuracy or None
        Parkes type 1 zones, MARD and the 15 mg/dL / 15 % share of the same predictions.
    """

    rmse: float
    clarke: ClarkeResult
    n_train_windows: int
    n_test_windows: int
    accuracy: PointAccuracy | None = None


def evaluate_forecaster(
    forecaster: Forecaster, test: object, *, max_test_windows: int = 20_000, seed: int = 0
) -> ForecastEvaluation:
    """RMSE and Clarke zones of ``forecaster`` on the windows of the ``test`` traces."""
    history, target = forecast_windows(
        test, history_steps=forecaster.history_steps, horizon_steps=forecaster.horizon_steps
    )
    if len(history) > max_test_windows:
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(len(history), size=max_test_windows, replace=False))
        history, target = history[keep], target[keep]
    if len(history) == 0:
        warnings.warn(
            "test traces yield no complete forecasting window; RMSE is undefined",
            UndefinedMetricWarning,
            stacklevel=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            clarke = clarke_error_grid(np.empty(0), np.empty(0))
        return ForecastEvaluation(float("nan"), clarke, forecaster.n_train_windows, 0)
    with torch_threads(1):
        prediction = forecaster.predict(history)
    rmse = float(np.sqrt(np.mean((prediction - target) ** 2)))
    return ForecastEvaluation(
        rmse=rmse,
        clarke=clarke_error_grid(target, prediction),
        n_train_windows=forecaster.n_train_windows,
        n_test_windows=len(target),
        accuracy=point_accuracy(target, prediction),
    )


@dataclass(frozen=True)
class ForecastUtility:
    """TSTR and TRTR forecasting results (GlucoSynth Table 1 "RMSE", Table 5 zones).

    Attributes
    ----------
    tstr, trtr : ForecastEvaluation
        Trained on synthetic / on real training traces, both tested on ``test_set``.
    test_set : str
        ``"holdout"``, or ``"real split"`` (a seeded 20 % of real held back) without holdout.
    history_minutes, horizon_minutes : float
    """

    tstr: ForecastEvaluation
    trtr: ForecastEvaluation
    test_set: str
    history_minutes: float
    horizon_minutes: float

    def to_dict(self) -> dict[str, object]:
        """``{tstr_rmse, trtr_rmse, test_set, history_minutes, horizon_minutes, n_test}``."""
        return {
            "tstr_rmse": self.tstr.rmse,
            "trtr_rmse": self.trtr.rmse,
            "test_set": self.test_set,
            "history_minutes": self.history_minutes,
            "horizon_minutes": self.horizon_minutes,
            "n_test": self.tstr.n_test_windows,
            **{
                f"{name}_{key}": getattr(part.accuracy, key) if part.accuracy else None
                for name, part in (("tstr", self.tstr), ("trtr", self.trtr))
                for key in ("mard", "within_15")
            },
        }
