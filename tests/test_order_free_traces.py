"""Row order never changes a trace review's rule values or audit (issue 22, item 7, traces).

A small CGM review (random-walk day traces; a fresh candidate and a noisy copy of real) is
evaluated with the glucose section twice with the same seed: as given, and with the real,
holdout and synthetic traces each shuffled. Every rule of the default policy must give the
identical value and reference (not close), and the audit must remove the same traces once its
rows are put back in input order. Before the traces were put in a value-defined order, the
seekers' attack sets, the embedding's and the forecasters' minibatches and the test windows
were drawn by position and the values moved.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthreview.generators.traces import traces_add_noise
from synthreview.io.traces import Traces, align_traces
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.metrics.glucose.seekers import trace_gru_seeker, trace_nn_seeker
from synthreview.metrics.privacy.section import evaluate_privacy_arrays
from synthreview.options import ReviewOptions
from synthreview.release.pipeline import audit_candidate
from synthreview.review import evaluate

# one-day random walks have no multi-day or episode metrics to compare: not what is tested here
pytestmark = pytest.mark.filterwarnings("ignore::synthreview.errors.UndefinedMetricWarning")


def _walks(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(140 + np.cumsum(rng.normal(0, 4, (n, 288)), axis=1), 40, 400)


def _permutation(n: int, seed: int) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(n)
    assert (order != np.arange(n)).any()
    return order


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _review(real: Traces, holdout: Traces, candidates: dict[str, Traces]):
    review = align_traces(real, candidates, holdout=holdout)
    options = ReviewOptions(max_attack=40, n_bootstrap=10)
    report = evaluate(review, options=options, seed=0)
    content = report.to_dict()["candidates"]
    policy = load_policy()
    rules, removed = {}, {}
    for name in report.candidates:
        assert "errors" not in content[name].get("glucose", {}), content[name]["glucose"]
        for rule in apply_policy(policy, content[name], kind="traces").rules:
            rules[name, rule.rule] = (rule.value, rule.reference)
        removed[name] = audit_candidate(report, name).audit["removed"].to_numpy(bool)
    return rules, removed


@pytest.fixture(scope="module")
def cgm():
    real = Traces.from_array(_walks(24, 10), name="real")
    holdout = Traces.from_array(_walks(16, 11), name="holdout")
    candidates = {
        "fresh": Traces.from_array(_walks(20, 12), name="fresh"),
        "noisy": Traces.from_array(traces_add_noise(real.values, sigma=3.0, seed=1), name="noisy"),
    }
    return real, holdout, candidates, _review(real, holdout, candidates)


def test_the_trace_rules_are_not_trivial(cgm):
    *_, (rules, removed) = cgm
    values = {rule for (_, rule), (value, _) in rules.items() if value is not None}
    assert {"mia_auc", "dcr_share", "ip_alpha", "tstr_trtr_ratio"} <= values
    assert rules["noisy", "mia_auc"][0] > 0.6  # a leaky candidate: the values are not all chance
    assert removed["noisy"].any() and len(removed["fresh"]) == 20


def test_shuffled_traces_give_identical_rule_values_and_audit(cgm):
    real, holdout, candidates, (rules, removed) = cgm
    real_order, holdout_order = _permutation(len(real.values), 7), _permutation(16, 8)
    orders = {n: _permutation(len(c.values), i + 1) for i, (n, c) in enumerate(candidates.items())}
    shuffled = {n: c.subset(orders[n]) for n, c in candidates.items()}
    again, removed_again = _review(real.subset(real_order), holdout.subset(holdout_order), shuffled)
    assert set(again) == set(rules)
    moved = {
        key: (rules[key], again[key])
        for key in rules
        if not all(_same(a, b) for a, b in zip(rules[key], again[key], strict=True))
    }
    assert not moved, f"rule values changed when the traces were shuffled: {moved}"
    for name, flags in removed.items():
        back = np.empty_like(removed_again[name])
        back[orders[name]] = removed_again[name]  # row i of the shuffled file is input row order[i]
        np.testing.assert_array_equal(back, flags, err_msg=f"audit of {name!r} moved")


def test_array_privacy_reports_rows_at_input_positions():
    real, holdout = _walks(30, 2)[:, ::12], _walks(20, 3)[:, ::12]
    synthetic = real + np.random.default_rng(4).normal(0, 2, real.shape)
    given = evaluate_privacy_arrays(real, synthetic, holdout, max_attack=12, seed=0)
    r, h, s = _permutation(30, 5), _permutation(20, 6), _permutation(30, 7)
    again = evaluate_privacy_arrays(real[r], synthetic[s], holdout[h], max_attack=12, seed=0)
    assert [a.auc for a in again.membership_inference] == [
        a.auc for a in given.membership_inference
    ]
    assert again.dcr.to_dict() == given.dcr.to_dict()
    # per-synthetic-row arrays follow the synthetic input; row numbers name input positions
    np.testing.assert_array_equal(again.dcr.synthetic_to_train, given.dcr.synthetic_to_train[s])
    np.testing.assert_array_equal(r[again.dcr.nearest_train_index],
                                  given.dcr.nearest_train_index[s])  # fmt: skip
    np.testing.assert_array_equal(again.dcr.holdout_to_train, given.dcr.holdout_to_train[h])


def test_seekers_do_not_depend_on_row_order():
    real, holdout = _walks(20, 4), _walks(20, 5)
    synthetic = traces_add_noise(real, sigma=5.0, seed=6)
    r, h, s = _permutation(20, 1), _permutation(20, 2), _permutation(20, 3)
    nn_a = trace_nn_seeker(real, synthetic, holdout, max_attack=8, n_bootstrap=10)
    nn_b = trace_nn_seeker(real[r], synthetic[s], holdout[h], max_attack=8, n_bootstrap=10)
    assert (nn_a.auc, nn_a.reference_auc) == (nn_b.auc, nn_b.reference_auc)
    options = {"max_attack": 8, "epochs": 1, "n_bootstrap": 10}
    gru_a = trace_gru_seeker(real, synthetic, holdout, **options)
    gru_b = trace_gru_seeker(real[r], synthetic[s], holdout[h], **options)
    assert gru_a.auc == gru_b.auc
