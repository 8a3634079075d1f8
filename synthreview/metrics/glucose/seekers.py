"""Hide-and-Seek seekers on glucose traces: membership inference from released traces.

The NeurIPS 2020 Hide-and-Seek privacy challenge (paper 002, §3) defines two seekers that see
the released (generated) traces D̃ and an enlarged set D̂ = members ∪ non-members, and must tell
which traces of D̂ were used to train the generator:

- ``trace_nn_seeker`` (§3.1): the L2 distance of each D̂ trace to its nearest generated trace,
  traces zero-padded to equal length and flattened; the closest are called members.
- ``trace_gru_seeker`` (§3.2, "binary predictor", an RNN): a GRU classifier trained with binary
  cross-entropy to label D̂ traces 1 and generated traces 0; the traces it scores lowest (most
  like generated ones) are called members.

Both score the attack rows of
:func:`synthreview.metrics.privacy.membership.attack_set` (same ``max_attack`` and ``seed`` as
:func:`~synthreview.metrics.privacy.section.evaluate_privacy_arrays`, drawn from the traces in
value order)
and return :class:`~synthreview.metrics.privacy.membership.AttackResult` via
:func:`~synthreview.metrics.privacy.membership.summarize_attack`, so they sit beside the tabular
attacks
in reports and ROC plots. ROC AUC: 0.5 is ideal (chance), 1 = every member identified.

Missing readings are filled by linear interpolation before comparison (they are missing data,
not padding). The GRU reads half-hourly means (``downsample=6``) standardised with fixed
constants, trains on at most ``max_train`` traces per label (seeded) and scores every attack
trace, as the challenge does (members and non-members carry the same label, so training on
some of them does not tell the classifier who is a member).

Every input is put in an order defined by its values (``synthreview.io.row_hash.value_order``)
before rows are drawn, so shuffling the real, holdout or released traces changes no estimate.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import torch
from torch import nn

from synthreview.embeddings.lstm_autoencoder import fill_gaps
from synthreview.errors import error_message
from synthreview.io.row_hash import value_order
from synthreview.metrics.privacy.attack_stats import (
    AttackResult,
    attack_set,
    failed_attack,
    summarize_attack,
)
from synthreview.metrics.privacy.membership import nn_seeker_scores
from synthreview.training import in_batches, seeded_torch, train_minibatches

TRACE_ATTACKS = ("trace_nn_seeker", "trace_gru_seeker")
log = logging.getLogger(__name__)
_CENTER_MG_DL = 140.0
_SPREAD_MG_DL = 60.0


def pad_flatten(traces: object, n_steps: int) -> np.ndarray:
    """Traces as flat float32 vectors of ``n_steps`` values, zero-padded (or cut) at the end."""
    g = fill_gaps(_values(traces))
    out = np.zeros((len(g), n_steps), dtype=np.float32)
    m = min(n_steps, g.shape[1])
    out[:, :m] = g[:, :m]
    return out


def _values(traces: object) -> np.ndarray:
    values = getattr(traces, "values", traces)
    return np.asarray(traces if callable(values) else values, dtype=np.float64)


def _in_value_order(traces: np.ndarray) -> np.ndarray:
    """``traces`` sorted by their values (row hashes): the same rows for any input order."""
    return traces[value_order(pd.DataFrame(np.asarray(traces, dtype=np.float64)))]


def trace_nn_seeker(
    real: object,
    synthetic: object,
    holdout: object,
    *,
    max_attack: int = 10_000,
    n_bootstrap: int = 200,
    seed: int = 0,
) -> AttackResult:
    """Nearest-neighbour seeker on zero-padded flattened traces (Hide-and-Seek §3.1).

    Parameters
    ----------
    real, synthetic, holdout : Traces or array-like of shape (n, n_steps)
        Training traces (members), released traces, holdout traces (non-members), mg/dL.
    max_attack, n_bootstrap, seed
        See :func:`synthreview.metrics.privacy.membership.attack_set` and ``summarize_attack``.

    Returns
    -------
    AttackResult
        ``attack="trace_nn_seeker"``, with the holdout-only sanity ``reference_auc`` and the
        challenge accuracy. AUC 0.5 is ideal, 1 is full disclosure.
    """
    r, s, h = (_values(x) for x in (real, synthetic, holdout))
    n_steps = max(r.shape[1], s.shape[1], h.shape[1])
    # attack rows are drawn by position: draw them from a value-defined order
    r, s, h = (_in_value_order(pad_flatten(x, n_steps)) for x in (r, s, h))
    sets = attack_set(len(r), len(h), max_attack=max_attack, seed=seed)
    scores = nn_seeker_scores(np.r_[r[sets.real_rows], h[sets.holdout_rows]], s)
    ref = np.r_[h[sets.reference_member_rows], h[sets.reference_nonmember_rows]]
    return summarize_attack(
        "trace_nn_seeker",
        scores,
        sets.is_member,
        reference_scores=nn_seeker_scores(ref, s),
        reference_is_member=sets.reference_is_member,
        with_challenge=True,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )


class _GRUClassifier(nn.Module):
    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.gru = nn.GRU(1, hidden_size, batch_first=True)
        self.readout = nn.Linear(hidden_size, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h = self.gru(x.unsqueeze(-1))
        return self.readout(h[-1]).squeeze(-1)


def _gru_inputs(g: np.ndarray, downsample: int) -> torch.Tensor:
    n_blocks = max(g.shape[1] // downsample, 1)
    blocks = g[:, : n_blocks * downsample].reshape(len(g), n_blocks, -1).mean(axis=2)
    return torch.as_tensor((blocks - _CENTER_MG_DL) / _SPREAD_MG_DL, dtype=torch.float32)


def trace_gru_seeker(
    real: object,
    synthetic: object,
    holdout: object,
    *,
    max_attack: int = 10_000,
    max_train: int = 2_000,
    hidden_size: int = 32,
    downsample: int = 6,
    epochs: int = 10,
    batch_size: int = 128,
    learning_rate: float = 5e-3,
    n_bootstrap: int = 200,
    seed: int = 0,
    device: str = "cpu",
    num_threads: int | None = 1,
) -> AttackResult:
    """Recurrent (GRU) binary-classifier seeker on traces (Hide-and-Seek §3.2).

    Parameters
    ----------
    real, synthetic, holdout : Traces or array-like of shape (n, n_steps)
        Members, released traces, non-members (mg/dL).
    max_attack : int, default=10_000
        Attack-set size per side (:func:`~synthreview.metrics.privacy.membership.attack_set`).
    max_train : int, default=2_000
        Training traces per label at most (seeded subsample of attack and released traces).
    hidden_size, downsample, epochs, batch_size, learning_rate
        The GRU and its Adam training (binary cross-entropy, gradient norm clipped at 1).
    n_bootstrap, seed, device
    num_threads : int or None, default=1
        Torch threads while training and scoring (``None`` keeps torch's setting).

    Returns
    -------
    AttackResult
        ``attack="trace_gru_seeker"``; member score = minus the classifier's logit. AUC 0.5
        is ideal, 1 is full disclosure. No ``reference_auc`` (it would need a second model).
    """
    # attack rows, training subsamples and minibatches are drawn by position: draw them from a
    # value-defined order of every input
    r, s, h = (_in_value_order(fill_gaps(_values(x))) for x in (real, synthetic, holdout))
    sets = attack_set(len(r), len(h), max_attack=max_attack, seed=seed)
    attack = np.r_[r[sets.real_rows], h[sets.holdout_rows]]
    n_steps = min(attack.shape[1], s.shape[1])
    attack, s = attack[:, :n_steps], s[:, :n_steps]
    rng = np.random.default_rng(seed)
    pos = rng.choice(len(attack), size=min(max_train, len(attack)), replace=False)
    neg = rng.choice(len(s), size=min(max_train, len(s)), replace=False)
    x = torch.cat([_gru_inputs(attack[pos], downsample), _gru_inputs(s[neg], downsample)])
    y = torch.cat([torch.ones(len(pos)), torch.zeros(len(neg))])
    x, y = x.to(device), y.to(device)
    with seeded_torch(rng, num_threads):
        model = _GRUClassifier(hidden_size).to(device)
        # balance the labels when the attack set and the released set differ in size
        weight = torch.tensor(len(neg) / len(pos), device=device)
        train_minibatches(
            model,
            lambda batch: nn.functional.binary_cross_entropy_with_logits(
                model(x[batch]), y[batch], pos_weight=weight
            ),
            len(x),
            rng=rng,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            device=device,
        )
        model.eval()
        logits = in_batches(model, _gru_inputs(attack, downsample), batch_size=4096, device=device)
    return summarize_attack(
        "trace_gru_seeker",
        -logits.numpy().astype(np.float64),
        sets.is_member,
        with_challenge=True,
        n_bootstrap=n_bootstrap,
        seed=seed,
    )


def trace_attacks(
    real: object,
    synthetic: object,
    holdout: object,
    *,
    max_attack: int = 10_000,
    n_bootstrap: int = 200,
    seed: int = 0,
    device: str = "cpu",
) -> tuple[AttackResult, ...]:
    """Both trace seekers; one that raises is returned with ``error`` set, the other still runs."""
    results = []
    for name, seeker, options in (
        ("trace_nn_seeker", trace_nn_seeker, {}),
        ("trace_gru_seeker", trace_gru_seeker, {"device": device}),
    ):
        try:
            results.append(seeker(real, synthetic, holdout, max_attack=max_attack,
                                  n_bootstrap=n_bootstrap, seed=seed, **options))  # fmt: skip
        except Exception as exc:  # a failed attack must not hide the other one
            log.exception("trace seeker %r failed", name)
            results.append(failed_attack(name, error_message(exc)))
    return tuple(results)
