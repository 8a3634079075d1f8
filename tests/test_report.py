"""evaluate(): sections per candidate, error isolation, determinism, JSON shape."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import synthreview as sr
from synthreview.options import ReviewOptions
from synthreview.review import evaluate


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(1),
            "sex": rng.choice(["F", "M"], n),
            "group": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.fixture(scope="module")
def review():
    real, holdout = _frame(300, 0), _frame(300, 1)
    fresh = _frame(300, 2)
    return sr.align(
        real, {"fresh": fresh, "copy": real.sample(frac=1.0, random_state=3)}, holdout=holdout
    )


@pytest.mark.slow
def test_top_level_api_is_importable_without_streamlit():
    import subprocess
    import sys

    code = (
        "import sys, synthreview as sr; sr.load_traces; sr.align; sr.DataError; "
        "assert 'streamlit' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.slow
def test_every_section_runs_for_every_candidate(review):
    report = evaluate(review, options=ReviewOptions(max_attack=200, n_bootstrap=20), seed=0)
    assert set(report.candidates) == {"fresh", "copy"}
    for candidate in report.candidates.values():
        assert candidate.errors == {}
        assert candidate.fidelity is not None and candidate.privacy is not None
        assert candidate.utility is not None
    content = report.to_dict()
    json.dumps(content)  # JSON-ready
    fid = content["candidates"]["copy"]["fidelity"]
    assert {"ip_alpha", "ir_beta", "authenticity", "holdout_reference", "prdc", "ci"} <= set(fid)
    # a generator that copies training rows is far less authentic than fresh data
    assert fid["authenticity"] < content["candidates"]["fresh"]["fidelity"]["authenticity"]


def test_no_embedded_rows_outlive_the_evaluation(review, monkeypatch):
    # candidates share one real side through the review's memo, and nothing of the review stays
    # in a module once evaluate returns (a dashboard process serves many sessions)
    from synthreview.metrics.fidelity import section as fidelity

    calls = []
    original = fidelity._real_side

    def spy(*args):
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(fidelity, "_real_side", spy)
    report = evaluate(review, sections=("fidelity",), options=ReviewOptions(n_bootstrap=0), seed=0)
    assert len(review.candidates) == 2 and len(calls) == 1  # shared by both candidates
    assert len(report.context.memo) == 0


def test_no_module_level_caches_in_the_engine():
    # an empty module-level dict filled at run time would keep a reviewer's data beyond the
    # session; constant tables (dict([...]) of rules) are fine
    import ast
    from pathlib import Path

    import synthreview

    offenders = []
    for path in Path(synthreview.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            value = getattr(node, "value", None)
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Call):
                name = ast.unparse(value.func)
                empty = not value.args and not value.keywords
                if empty and name in ("dict", "OrderedDict", "collections.OrderedDict"):
                    offenders.append(f"{path.name}:{node.lineno}")  # filled at run time
                if name in ("defaultdict", "collections.defaultdict"):
                    offenders.append(f"{path.name}:{node.lineno}")
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(value, ast.Dict):
                if not value.keys:  # an empty literal dict filled at run time
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_same_seed_same_json(review):
    options = ReviewOptions(max_attack=200, n_bootstrap=20)
    a = evaluate(review, sections=("fidelity",), options=options, seed=5).to_dict()
    b = evaluate(review, sections=("fidelity",), options=options, seed=5).to_dict()
    assert a == b


def test_a_failing_section_is_isolated(review, monkeypatch):
    # a bad option no longer reaches a section (issue #12: it is refused before computing), so
    # the failure is a section that raises
    def broken(*args, **kwargs):
        raise sr.DataError("utility broke on no_such_column")

    monkeypatch.setattr("synthreview.review.evaluate_utility", broken)
    options = ReviewOptions(max_attack=200, n_bootstrap=20)
    report = evaluate(review, sections=("fidelity", "utility"), options=options, seed=0)
    for candidate in report.candidates.values():
        assert "utility" in candidate.errors and "no_such_column" in candidate.errors["utility"]
        assert candidate.fidelity is not None


def test_a_bad_option_is_refused_before_computing(review, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("a section ran despite a bad option")

    for section in ("fidelity", "privacy", "utility"):
        monkeypatch.setattr(f"synthreview.review.evaluate_{section}", never)
    monkeypatch.setattr("synthreview.review.prepare", never)
    with pytest.raises(sr.ConfigError, match="option target must be one of the analysed"):
        evaluate(review, options=ReviewOptions(target="no_such_column"))


def test_merged_reports_keep_both_sections(review):
    options = ReviewOptions(max_attack=200, n_bootstrap=20)
    a = evaluate(review, sections=("utility",), options=options, seed=0)
    b = evaluate(review, sections=("fidelity",), options=options, seed=0)
    both = a.merged(b)
    assert both.sections == ("fidelity", "utility")
    assert both.candidates["fresh"].utility is a.candidates["fresh"].utility
    assert both.candidates["fresh"].fidelity is b.candidates["fresh"].fidelity


def test_unknown_section_is_rejected(review):
    with pytest.raises(sr.ConfigError, match="sections must be among"):
        evaluate(review, sections=("beauty",))


def _walks(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(120 + np.cumsum(rng.normal(0, 3, (n, 288)), axis=1), 40, 400)


@pytest.mark.slow
def test_motif_options_reach_the_glucose_section():
    from synthreview.io.traces import Traces, align_traces

    real = Traces.from_array(_walks(24, 0), name="real")
    holdout = Traces.from_array(_walks(24, 1), name="holdout")
    # the candidate repeats real's first 12 traces: with coarse motifs they share motifs
    candidate = Traces.from_array(np.vstack([_walks(24, 0)[:12], _walks(12, 2)]), name="cand")
    review = align_traces(real, {"cand": candidate}, holdout=holdout)
    fine = ReviewOptions(max_attack=24, n_bootstrap=10)
    coarse = ReviewOptions(max_attack=24, n_bootstrap=10, motif_length=6, motif_tolerance=20.0)
    motifs = {}
    for label, options in (("fine", fine), ("coarse", coarse)):
        report = evaluate(review, options=options, seed=0)
        assert report.candidates["cand"].errors == {}
        motifs[label] = report.to_dict()["candidates"]["cand"]["glucose"]["motifs"]
    assert motifs["coarse"]["n_real"] != motifs["fine"]["n_real"]  # τ changes the chunking
    assert motifs["coarse"]["coverage"] > motifs["fine"]["coverage"]


def test_bad_motif_options_are_rejected():
    with pytest.raises(sr.ConfigError, match="motif_length"):
        ReviewOptions(motif_length=1)
    with pytest.raises(sr.ConfigError, match="motif_tolerance"):
        ReviewOptions(motif_tolerance=0)


def test_shuffled_real_rows_give_the_same_embedding():
    # the embedding is fitted on the real rows in a value-defined order, so the order in which
    # rows arrive changes no embedded value (and so no fidelity number or audit flag)
    from dataclasses import replace

    import numpy as np

    from synthreview import demo
    from synthreview.review import prepare

    review = demo.tables(n_train=400, n_holdout=400)
    perm = np.random.default_rng(1).permutation(review.real.n_rows)
    real = review.real
    shuffled = replace(
        review,
        real=replace(
            real,
            frame=real.frame.iloc[perm].reset_index(drop=True),
            raw=real.raw.iloc[perm].reset_index(drop=True),
        ),
    )
    a = prepare(review, seed=0).embedded
    b = prepare(shuffled, seed=0).embedded
    assert np.array_equal(a["real"], b["real"][np.argsort(perm)])
    for name in [*review.candidates, "holdout"]:
        assert np.array_equal(a[name], b[name]), name
