"""Registry-driven properties: every registered metric that binds a function is checked for
its range, its value on identical data and invariance to the order of input rows.

Nothing here lists metrics by hand (scikit-learn's ``test_common.py`` style): the parametrised
tests take every ``MetricInfo`` of :data:`~synthreview.metrics.registry.REGISTRY` whose
``function`` is set, so a metric added to a catalog is driven here as soon as it binds one. A
metric that binds none must say why (``unbound``); ``test_unbound_metric_says_why`` lists
those, and one with neither fails ``test_every_metric_binds_or_says_why``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import ConfigError, UndefinedMetricWarning
from synthreview.io.schema import Schema
from synthreview.io.traces import Traces
from synthreview.judgement.policy import HEADLINES, check_bindings, load_policy
from synthreview.judgement.rules import SPECS
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.registry import (
    REGISTRY,
    bound_metrics,
    build_registry,
    for_section,
    get,
    unbound_metrics,
)

SCHEMA = Schema({"age": "numeric", "income": "numeric", "hours": "numeric",
                 "sex": "categorical", "job": "categorical"})  # fmt: skip
#: how close to the ideal identical data must come where the estimator itself is noisy (an
#: override, not a list of metrics: a metric absent here gets 1e-6)
TOLERANCE = {"prdc_density": 0.25, "tstr_trtr_ratio": 1e-9}


def bound(registry=None) -> list[str]:
    """Every metric that binds a function (what the properties drive), by name."""
    return sorted(info.name for info in bound_metrics(registry))


def unbound(registry=None) -> list[str]:
    """Every metric without a function, by name."""
    return sorted(info.name for info in unbound_metrics(registry))


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n).astype(float)
    sex = rng.choice(["F", "M"], n)
    return pd.DataFrame(
        {
            "age": age,
            "income": 1000 + 40 * age + rng.normal(0, 300, n) + 200 * (sex == "M"),
            "hours": rng.normal(38, 6, n).round(),
            "sex": sex,
            "job": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
        }
    )


def _traces(n_subjects: int, seed: int, prefix: str) -> Traces:
    """Four-hour CGM windows (5 min) of ``n_subjects`` people, four windows each, in mg/dL."""
    rng = np.random.default_rng(seed)
    steps = np.arange(48)
    rows, ids = [], []
    for s in range(n_subjects):
        base, swing = rng.uniform(100, 170), rng.uniform(15, 45)
        for _ in range(4):
            phase = rng.uniform(0, 2 * np.pi)
            trace = base + swing * np.sin(2 * np.pi * steps / 48 + phase)
            rows.append(np.clip(trace + rng.normal(0, 6, steps.size), 40, 400))
            ids.append(f"{prefix}{s}")
    return Traces.from_array(np.array(rows), name=prefix, source_ids=ids)


def _shuffled(data, seed: int):
    order = np.random.default_rng(seed).permutation(
        len(data) if isinstance(data, pd.DataFrame) else data.n_traces
    )
    if isinstance(data, pd.DataFrame):
        return data.iloc[order].reset_index(drop=True)
    meta = data.meta.iloc[order].reset_index(drop=True)
    return replace(data, values=data.values[order], meta=meta)


@pytest.fixture(scope="module")
def inputs():
    """``{inputs kind: (real, synthetic, holdout, schema)}`` for the bound functions."""
    return {
        "table": (_table(200, 1), _table(200, 2), _table(200, 7), SCHEMA),
        "traces": (_traces(12, 1, "r"), _traces(12, 2, "s"), _traces(12, 7, "h"), None),
    }


def _value(name, real, synthetic, holdout, schema):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return get(name).compute(real, synthetic, holdout=holdout, schema=schema, seed=0)


def test_every_metric_binds_or_says_why():
    neither = sorted(n for n, i in REGISTRY.items() if i.function is None and not i.unbound)
    assert not neither, f"bind a function (function=) or say why not (unbound=) for {neither}"
    assert set(bound()) | set(unbound()) == set(REGISTRY)
    assert set(TOLERANCE) <= set(bound())


def test_a_newly_registered_metric_is_driven():
    new = replace(get("correlation_mae"), name="new_metric", rules=())
    assert "new_metric" in bound(build_registry(REGISTRY.values(), [new]))


@pytest.mark.parametrize("name", unbound())
def test_unbound_metric_says_why(name):
    info = get(name)
    assert len(info.unbound) > 20, name  # a reason a reader can follow, with where it is tested
    with pytest.raises(TypeError, match="binds no function"):
        info.compute(None, None)


@pytest.mark.parametrize("name", bound())
def test_value_within_registered_range(name, inputs):
    info = get(name)
    value = _value(name, *inputs[info.inputs])
    assert info.range[0] <= value <= info.range[1], (name, value)


@pytest.mark.parametrize("name", bound())
def test_identical_data_gives_the_registered_side(name, inputs):
    info = get(name)
    real, synthetic, holdout, schema = inputs[info.inputs]
    value = _value(name, real, real, holdout, schema)
    other = _value(name, real, synthetic, holdout, schema)
    if info.identical == "ideal":
        # at the ideal, or at least as good as a different sample of the same population
        at_ideal = abs(value - info.ideal) <= TOLERANCE.get(name, 1e-6)
        assert at_ideal or not info.better(other, value), (name, value, other)
    else:  # identical rows are copies: worse than a different sample
        assert info.better(other, value), (name, value, other)


@pytest.mark.parametrize("name", bound())
def test_row_order_changes_nothing(name, inputs):
    info = get(name)
    real, synthetic, holdout, schema = inputs[info.inputs]
    a = _value(name, real, synthetic, holdout, schema)
    b = _value(name, _shuffled(real, 5), _shuffled(synthetic, 6), _shuffled(holdout, 7), schema)
    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (name, a, b)


def test_registry_lookups_and_duplicates():
    assert get("ip_alpha").section == "fidelity"
    assert for_section("utility")[0].name == "k_marginal"
    with pytest.raises(KeyError, match="must be one of the registered metrics"):
        get("ipalpha")
    with pytest.raises(KeyError, match="section must be one of"):
        for_section("privcy")
    info = get("ip_alpha")
    with pytest.raises(ValueError, match="metric names must be unique"):
        build_registry([info], [info])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"direction": "up"}, "direction must be one of"),
        ({"section": "quality"}, "section must be one of"),
        ({"range": (1.0, 0.0)}, "range must be"),
        ({"ideal": 2.0}, "range must be"),
        ({"unbound": "both at once"}, "not both"),
        ({"function": "ip_alpha"}, "function must be callable"),
        ({"inputs": "images"}, "inputs must be one of"),
        ({"identical": "best"}, "identical must be one of"),
        ({"rules": "ip_alpha"}, "rules must be a tuple"),
    ],
)
def test_metric_info_validates(kwargs, match):
    base = dict(vars(get("ip_alpha")))
    base.update(kwargs)
    with pytest.raises(ValueError, match=match):
        MetricInfo(**base)


def test_rules_and_metrics_name_each_other():
    check_bindings()  # the shipped rules and catalogs agree (load_policy runs the same check)
    for spec in SPECS.values():
        assert spec.name in get(spec.metric).rules
    assert set(HEADLINES) <= set(REGISTRY)
    for info in REGISTRY.values():
        assert info.meaning and info.holdout_meaning and info.citation, info.name
        assert info.format(0.5) != "n/a" and info.format(float("nan")) == "n/a"


def test_a_rule_the_metric_does_not_name_is_refused_at_load():
    orphan = replace(get("ip_alpha"), rules=())
    registry = {**REGISTRY, "ip_alpha": orphan}
    with pytest.raises(ConfigError, match="must name the rule 'ip_alpha'"):
        check_bindings(SPECS, registry)
    ghost = replace(get("prdc_recall"), rules=("no_such_rule",))
    with pytest.raises(ConfigError, match="no policy can configure"):
        check_bindings(SPECS, {**REGISTRY, "prdc_recall": ghost})
    unregistered = {k: v for k, v in REGISTRY.items() if k != "dcr_share"}
    with pytest.raises(ConfigError, match="must judge a registered metric"):
        check_bindings(SPECS, unregistered)
    audit = replace(get("real_record_share"), key="privacy.real", unbound="")
    audit = replace(audit, function=get("dcr_share").function)
    with pytest.raises(ConfigError, match="audit rule 'real_records' must read the release"):
        check_bindings(SPECS, {**REGISTRY, "real_record_share": audit})


def test_every_light_colours_a_registered_metric():
    policy = load_policy()
    assert policy.lights, "the shipped policy sets the Utility summary's lights"
    for light in policy.lights.values():
        assert light.metric in REGISTRY and light.reason, light.name
        assert 0 <= light.pass_at <= light.fail_at


def test_better_than_holdout_is_suspicious_where_the_registry_says_so():
    flagged = {n for n, i in REGISTRY.items() if i.suspicious_above_holdout}
    assert {"ir_beta", "prdc_recall", "prdc_coverage"} <= flagged
    assert "ip_alpha" not in flagged and "authenticity" not in flagged
    ir_beta = get("ir_beta")
    assert ir_beta.beyond_holdout(0.977, 0.589)  # a copy's IRβ above the fresh sample's
    assert not ir_beta.beyond_holdout(0.5, 0.589)
    assert not ir_beta.beyond_holdout(float("nan"), 0.589)
    assert not get("ip_alpha").beyond_holdout(0.99, 0.9)
