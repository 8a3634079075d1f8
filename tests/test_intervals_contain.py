"""No point estimate outside its own interval (issue 27, item 4 and "Done when").

Reviews of the bundled demos (tables and traces), of the small test files and of samples of
the shared datasets are built, and every result's ``to_dict()`` is walked for the interval
conventions the product reports:

* ``{"ci": {name: [low, high]}, name: value}`` (fidelity: IPα, IRβ, authenticity),
* ``{"ci": [low, high], "risk" or "value": value}`` (WP29 risks, rates with a Clopper-Pearson
  interval; ``lower`` beside ``risk`` or ``share`` is a one-sided bound),
* ``{"<name>_ci": [low, high], "<name>": value}`` (attack AUC, TPR at low FPR),
* ``{"value", "ci_low", "ci_high"}`` (table rows),
* ``<name>_lower`` / ``<name>_upper`` beside ``<name>`` (regression coefficients, read from
  the result's own table since ``to_dict`` leaves the bounds out).

Every such triple must hold ``low <= value <= high``. The fidelity interval is also checked on
a hand-computed case and against row permutations.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthreview import demo
from synthreview.generators.tables import add_noise, gaussian_copula
from synthreview.generators.traces import traces_add_noise
from synthreview.io.tables import align, infer_schema, read_table
from synthreview.io.traces import Traces, align_traces, load_traces
from synthreview.metrics.fidelity.section import CI_METHOD, evaluate_fidelity
from synthreview.options import ReviewOptions
from synthreview.review import evaluate

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
#: small enough for the suite, large enough for every section to compute
OPTIONS = ReviewOptions(max_attack=300)


def interval_triples(node: Any, path: str = "") -> Iterator[tuple[str, Any, Any, Any]]:
    """``(path, low, value, high)`` for every interval found in a ``to_dict()`` tree."""
    if isinstance(node, Mapping):
        for key, item in node.items():
            where = f"{path}/{key}"
            if key == "ci" and isinstance(item, Mapping):
                for name, bounds in item.items():
                    yield f"{where}/{name}", bounds[0], node.get(name), bounds[1]
            elif key == "ci" and isinstance(item, list | tuple):
                yield where, item[0], node.get("risk", node.get("value")), item[1]
            elif key.endswith("_ci") and key[: -len("_ci")] in node and item is not None:
                yield where, item[0], node[key[: -len("_ci")]], item[1]
            elif key == "ci_low" and "value" in node:
                yield where, item, node["value"], node.get("ci_high")
            elif key == "lower" and not isinstance(item, Mapping):
                for name in ("risk", "share"):  # one-sided lower bounds
                    if name in node:
                        yield where, item, node[name], math.inf
            elif key.endswith("_lower") and key[: -len("_lower")] in node:
                name = key[: -len("_lower")]
                yield where, item, node[name], node.get(f"{name}_upper")
            yield from interval_triples(item, where)
    elif isinstance(node, list | tuple):
        for i, item in enumerate(node):
            yield from interval_triples(item, f"{path}[{i}]")


def outside(tree: Any) -> tuple[int, list[str]]:
    """How many intervals were checked, and the ones that miss their value."""
    checked, missed = 0, []
    for where, low, value, high in interval_triples(tree):
        if value is None or low is None or high is None:  # nan in JSON: no interval to hold
            continue
        checked += 1
        if not low <= value <= high:
            missed.append(f"{where}: {value!r} outside [{low!r}, {high!r}]")
    return checked, missed


def report_tree(report) -> dict[str, Any]:
    """Every candidate's ``to_dict()`` plus the regression coefficients with their bounds."""
    tree: dict[str, Any] = {}
    for name, result in report.candidates.items():
        tree[name] = result.to_dict()
        utility = result.utility
        for side in (utility and utility.candidate, utility and utility.holdout_reference):
            if side is not None and side.ci_overlap is not None:
                rows = side.ci_overlap.coefficients.to_dict("records")
                tree[name].setdefault("ci_overlap_coefficients", []).extend(rows)
    return tree


def assert_intervals_hold(report, *, at_least: int) -> None:
    tree = report_tree(report)
    checked, missed = outside(tree)
    assert missed == []
    assert checked >= at_least
    for result in report.candidates.values():
        fidelity = result.fidelity or (result.glucose and result.glucose.fidelity)
        if fidelity is not None and fidelity.ci:  # the interval says how it was built
            assert fidelity.to_dict()["ci_method"] == CI_METHOD


def test_the_walker_finds_each_convention_and_flags_a_miss():
    tree = {
        "fidelity": {"ip_alpha": 0.99, "ci": {"ip_alpha": [0.8, 0.97]}},
        "wp29": {"risk": 0.1, "ci": [0.0, 0.2], "lower": 0.05},
        "attack": {"auc": 0.6, "auc_ci": [0.55, 0.65]},
        "coefficients": [{"real": 1.0, "real_lower": 1.5, "real_upper": 2.0}],
        "copies": {"share": 0.02, "lower": 0.01},
        "rows": [{"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}],
        "rate": {"value": 0.3, "ci": [0.1, None]},  # an undefined bound checks nothing
    }
    checked, missed = outside(tree)
    assert checked == 7
    assert missed == [
        "/fidelity/ci/ip_alpha: 0.99 outside [0.8, 0.97]",
        "/coefficients[0]/real_lower: 1.0 outside [1.5, 2.0]",
    ]


def test_fidelity_interval_hand_computed():
    # one grid point, α = β = 0.5: IPα = IRβ = 1 - 2 |P - 0.5|
    real = np.array([[0.0], [1.0], [100.0], [101.0]])  # centre 50.5; NND_1 = 1 for every row
    # IPα: two rows at the centre (inside every α-ball, whatever real rows are drawn) and two
    # beyond the farthest real row (inside none): P_0.5 = 2/4, IPα = 1. A replicate draws k of
    # the 4 rows inside, k ~ Binomial(4, 1/2): IPα* = 1 - 2 |k/4 - 1/2| is 0 (k = 0, 4; 2/16),
    # 0.5 (k = 1, 3; 8/16) or 1 (k = 2; 6/16). Its 2.5 %, 50 % and 97.5 % quantiles are 0, 0.5
    # and 1, so the interval is 1 + (0 - 0.5, 1 - 0.5) clipped to [0, 1] = (0.5, 1.0)
    synthetic = np.array([[50.5], [50.5], [300.0], [300.0]])
    options = {"grid": np.array([0.5]), "k": 1, "prdc_k": 1, "n_bootstrap": 4000, "seed": 3}
    report = evaluate_fidelity(real, synthetic, **options)
    assert report.ip_alpha == 1.0
    assert report.ci["ip_alpha"] == pytest.approx((0.5, 1.0), abs=1e-12)
    # IRβ: the synthetic rows lie within 1 of real rows 0 and 1 only, and the one at the β-ball's
    # centre covers both at β = 0.5, so R_0.5 = 2/4 and IRβ = 1; the replicates draw real rows,
    # k of 4 covered: the same distribution, the same interval
    synthetic = np.array([[0.4], [0.6], [0.5], [0.5]])
    report = evaluate_fidelity(real, synthetic, **options)
    assert report.ir_beta == 1.0
    assert report.ci["ir_beta"] == pytest.approx((0.5, 1.0), abs=1e-12)
    assert report.ci_method == CI_METHOD == "centred percentile"
    assert report.to_dict()["ci_method"] == CI_METHOD
    assert evaluate_fidelity(real, synthetic, **{**options, "n_bootstrap": 0}).ci_method is None


def test_fidelity_interval_holds_the_point_of_a_near_copy():
    # a near-copy: every replicate's curve is noisier than the point's, so IPα and IRβ
    # replicates sit below the point; the plain percentile interval of the same replicates
    # missed it here (IPα 0.968, interval 0.853-0.961), as on issue 27's trace demo
    rng = np.random.default_rng(0)
    real = rng.normal(size=(90, 3))
    synthetic = real + rng.normal(scale=0.05, size=real.shape)
    report = evaluate_fidelity(real, synthetic, n_bootstrap=200, seed=0)
    for name in ("ip_alpha", "ir_beta", "authenticity"):
        low, high = report.ci[name]
        assert 0.0 <= low <= getattr(report, name) <= high <= 1.0, name
    for name in ("ip_alpha", "ir_beta"):
        low, high = report.ci[name]
        assert high - low > 0.01, name  # an interval, not a point


def test_fidelity_interval_does_not_depend_on_row_order():
    rng = np.random.default_rng(1)
    real, synthetic = rng.normal(size=(120, 3)), rng.normal(0.2, 1.1, size=(100, 3))
    synthetic[:10] = synthetic[10:20]  # duplicates are interchangeable
    base = evaluate_fidelity(real, synthetic, n_bootstrap=50, seed=2)
    real_perm, synth_perm = rng.permutation(len(real)), rng.permutation(len(synthetic))
    shuffled = evaluate_fidelity(real[real_perm], synthetic[synth_perm], n_bootstrap=50, seed=2)
    assert shuffled.ci == base.ci


@pytest.fixture(scope="module")
def demo_tables_report():
    review = demo.tables(seed=0, n_train=300)
    options = ReviewOptions(
        max_attack=300, target="income", formula="hours_per_week ~ age + education_num"
    )
    return evaluate(review, options=options, seed=0)


@pytest.mark.slow
def test_demo_tables_report_holds_every_point(demo_tables_report):
    # fidelity (3 per candidate), WP29 (risk and lower bound), attack AUCs, coefficients
    assert_intervals_hold(demo_tables_report, at_least=5 * 20)


@pytest.mark.slow
def test_demo_traces_report_holds_every_point():
    report = evaluate(demo.traces(seed=0), options=OPTIONS, seed=0)
    assert "noisy_copy" in report.candidates  # the candidate issue 27 measured
    assert_intervals_hold(report, at_least=3 * 6)


def test_test_files_reports_hold_every_point():
    adult = read_table(DATA / "adult_small.csv")
    frame = adult.frame
    real, holdout = frame.iloc[:20].reset_index(drop=True), frame.iloc[20:].reset_index(drop=True)
    noisy = add_noise(real, schema=infer_schema(real), sigma=0.1, seed=1)
    review = align(real, {"noisy": noisy}, holdout=holdout)
    assert_intervals_hold(evaluate(review, options=OPTIONS, seed=0), at_least=3)
    # 3 + 2 days: too few for fidelity (it needs 6 training traces and says so); the attack
    # AUCs still come with intervals
    train = load_traces(DATA / "cgm_long.csv")
    held = load_traces(DATA / "cgm_one_subject.csv")
    noisy = Traces.from_array(traces_add_noise(train.values, seed=2), name="noisy")
    traces_review = align_traces(train, {"noisy": noisy}, holdout=held)
    assert_intervals_hold(evaluate(traces_review, options=OPTIONS, seed=0), at_least=3)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.exists(), reason=f"shared datasets not found: {SHARED}")
def test_shared_data_samples_hold_every_point():
    german = pd.read_csv(SHARED / "german_credit.csv")
    order = np.random.default_rng(0).permutation(len(german))
    real = german.iloc[order[:250]].reset_index(drop=True)
    holdout = german.iloc[order[250:500]].reset_index(drop=True)
    fresh = german.iloc[order[500:750]].reset_index(drop=True)
    schema = infer_schema(real)
    candidates = {
        "fresh": fresh,
        "copula": gaussian_copula(real, schema=schema, seed=1),
        "noisy_copy": add_noise(real, schema=schema, sigma=0.1, seed=1),
    }
    review = align(real, candidates, holdout=holdout)
    report = evaluate(review, options=ReviewOptions(max_attack=250, target="creditability"))
    assert_intervals_hold(report, at_least=3 * 20)
    iglu = load_traces(SHARED / "cgm_iglu_5_subjects.csv")
    ids = iglu.meta["source_id"].to_numpy()
    train = iglu.subset(np.flatnonzero(np.isin(ids, ["Subject 1", "Subject 2", "Subject 4"])))
    held = iglu.subset(np.flatnonzero(np.isin(ids, ["Subject 3", "Subject 5"])))
    traces = {
        "noisy_copy": Traces.from_array(traces_add_noise(train.values, seed=3), name="noisy"),
        "shifted": Traces.from_array(np.clip(train.values + 40, 40, 400), name="shifted"),
    }
    report = evaluate(align_traces(train, traces, holdout=held), options=OPTIONS, seed=0)
    assert_intervals_hold(report, at_least=2 * 6)
