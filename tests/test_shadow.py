"""Shadow-model attacks on the generator (issue 25 item 3): plugins, the attack, its budget,
its rule and where its numbers go (report.json, report.html)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthreview
from synthreview.cli import main
from synthreview.errors import ConfigError, DataError
from synthreview.figures.text import markdown_text
from synthreview.generators.builtin import copula, memorise
from synthreview.generators.plugin import check_generated, load_generator
from synthreview.io.schema import Schema
from synthreview.io.tables import align, infer_schema
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.metrics.privacy import shadow as shadow_module
from synthreview.metrics.privacy.shadow import (
    ShadowSettings,
    clopper_pearson_rate,
    shadow_attack,
)
from synthreview.options import ReviewOptions, validate_options
from synthreview.release.html import render_html
from synthreview.review import evaluate
from tests.page_helpers import run_page

BUILTIN = "synthreview.generators.builtin"
COLUMNS = ["age", "education_num", "hours_per_week", "sex", "relationship", "race", "income"]


@pytest.fixture(scope="module")
def adult():
    """Bundled Adult rows over columns whose levels each hold >= 2 % of the rows.

    A Gaussian copula with empirical marginals reproduces a level only when a training row has
    it, so a level unique to a target leaks its membership (that is the copula's real rare-value
    leak, measured in the benchmark); without rare levels the copula should be at chance.
    """
    frame = pd.read_csv(Path(synthreview.__file__).parent / "datasets" / "adult.csv.gz")[COLUMNS]
    for col in ("sex", "relationship", "race", "income"):
        share = frame[col].value_counts(normalize=True)
        frame = frame[frame[col].isin(share[share >= 0.02].index)]
    rows = frame.sample(400, random_state=100).reset_index(drop=True)
    return rows.iloc[:200].reset_index(drop=True), rows.iloc[200:].reset_index(drop=True)


def _attack(real, holdout, generator, *, k=20, t=10, seed=0, limit=600.0, name="memorise"):
    settings = ShadowSettings(f"{BUILTIN}:{name}", n_shadows=k, n_targets=t, time_limit_s=limit)
    return shadow_attack(
        real, generator(real, len(real), 7), holdout, settings=settings,
        schema=infer_schema(real), seed=seed,
    )  # fmt: skip


# --- plugins -----------------------------------------------------------------------------------


def test_load_generator_returns_the_named_callable():
    assert load_generator(f"{BUILTIN}:copula") is copula
    assert load_generator(f" {BUILTIN} : memorise ") is memorise


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("no_colon_here", "must be 'module:function'"),
        ("a:b:c", "must be 'module:function'"),
        ("1bad.module:f", "dotted Python names"),
        ("synthreview_no_such_module:f", "cannot be imported on this machine"),
        (f"{BUILTIN}:no_such_function", "has no attribute 'no_such_function'"),
        (f"{BUILTIN}:__all__", "must name a callable"),
    ],
)
def test_load_generator_names_the_option_and_what_was_received(spec, match):
    with pytest.raises(ConfigError, match=match) as caught:
        load_generator(spec)
    assert "generator" in str(caught.value)


def test_generated_output_is_checked():
    train = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    with pytest.raises(DataError, match="must return a pandas DataFrame; got list"):
        check_generated([[1, "x"]], train, spec="m:f")
    with pytest.raises(DataError, match=r"left out \['b'\]"):
        check_generated(train[["a"]], train, spec="m:f")
    with pytest.raises(DataError, match="returned no rows"):
        check_generated(train.iloc[:0], train, spec="m:f")
    out = check_generated(train.assign(extra=0)[["b", "extra", "a"]], train, spec="m:f")
    assert list(out.columns) == ["a", "b"]


def test_builtin_generators_have_the_plugin_signature(adult):
    real, _ = adult
    copied = memorise(real, len(real), 3)
    assert sorted(map(tuple, copied.to_numpy())) == sorted(map(tuple, real.to_numpy()))
    assert len(memorise(real, 450, 3)) == 450
    drawn = copula(real, 50, 3)
    assert list(drawn.columns) == list(real.columns) and len(drawn) == 50
    assert copula(real, 50, 3).equals(drawn)  # seeded
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        memorise(real, 0, 1)


# --- the attack: the Done-when on small budgets -------------------------------------


@pytest.mark.slow
def test_memorising_generator_is_caught(adult):
    real, holdout = adult
    result = _attack(real, holdout, memorise)
    assert result.complete and len(result.targets) == 10
    assert result.tpr_at_fpr_1pct.value >= 0.5  # issue 25 Done-when
    assert result.fpr.value <= 0.01
    assert result.tpr_at_fpr_1pct.ci[0] > 0.5  # the interval clears 0.5 too
    # the candidate itself: training targets called members, holdout targets not
    assert result.candidate_hits.n >= 1 and result.candidate_hits.value == 1.0
    assert result.candidate_false_alarms.value == 0.0


@pytest.mark.slow
def test_copula_is_within_the_interval_of_chance(adult):
    real, holdout = adult
    result = _attack(real, holdout, copula, name="copula")
    assert result.complete
    low, high = result.tpr_at_fpr_1pct.ci
    assert low <= 0.01 <= high  # issue 25 Done-when: chance = 1 % false alarms
    assert result.tpr_at_fpr_1pct.value <= 0.05
    assert abs(result.auc - 0.5) < 0.1


def test_time_limit_gives_a_partial_result_that_is_not_judged(adult):
    real, holdout = adult
    result = _attack(real, holdout, memorise, limit=1e-9)
    assert not result.complete and result.targets == ()
    assert result.note.startswith("stopped at the time limit")
    assert math.isnan(result.tpr_at_fpr_1pct.value)
    content = {"privacy": {"shadow": result.to_dict()}}
    verdict = next(r for r in apply_policy(load_policy(), content).rules
                   if r.rule == "shadow_tpr_at_fpr_1pct")  # fmt: skip
    assert verdict.verdict != "pass"
    assert "partial, not judged" in verdict.reason


@pytest.mark.slow
def test_row_order_changes_nothing(adult):
    real, holdout = adult
    first = _attack(real, holdout, copula, k=6, t=3, name="copula").to_dict()
    shuffled = real.sample(frac=1.0, random_state=5)  # keeps its index: input positions move
    second = shadow_attack(
        shuffled.reset_index(drop=True), copula(real, len(real), 7), holdout,
        settings=ShadowSettings(f"{BUILTIN}:copula", 6, 3),
        schema=infer_schema(real),
    ).to_dict()  # fmt: skip
    for entry in (first, second):
        entry.pop("elapsed_s")
    positions = {int(p): i for i, p in enumerate(shuffled.index)}
    for target in first["targets"]:
        if target["table"] == "real":
            target["row"] = positions[target["row"]]
    assert first == second


def test_clopper_pearson_rate_reference_values():
    # exact binomial interval: 0 of 10 -> upper 1 - 0.025 ** 0.1; 10 of 10 -> lower 0.025 ** 0.1
    assert clopper_pearson_rate(0, 10).ci[1] == pytest.approx(1 - 0.025**0.1)
    assert clopper_pearson_rate(10, 10).ci[0] == pytest.approx(0.025**0.1)
    assert clopper_pearson_rate(5, 10).ci == pytest.approx((0.187086, 0.812914), abs=1e-6)
    assert math.isnan(clopper_pearson_rate(0, 0).value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_shadows": 3}, "n_shadows must be an integer >= 4"),
        ({"n_targets": 0}, "n_targets must be an integer >= 1"),
        ({"time_limit_s": 0}, "time_limit_s must be a number of seconds > 0"),
        ({"time_limit_s": float("inf")}, "time_limit_s must be finite"),
    ],
)
def test_settings_are_checked(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        ShadowSettings(f"{BUILTIN}:copula", **kwargs)


# --- the review: options, section, rule, report -----------------------------------------------


@pytest.fixture(scope="module")
def review(adult):
    real, holdout = adult
    return align(real, {"copy": memorise(real, len(real), 1)}, holdout=holdout)


def test_options_check_the_generator_before_computing(review):
    with pytest.raises(ConfigError, match="cannot be imported on this machine"):
        validate_options(review, ReviewOptions(generator="no_such_module_xyz:fit"))
    with pytest.raises(ConfigError, match="option shadow_models must be an integer >= 4"):
        validate_options(review, ReviewOptions(generator=f"{BUILTIN}:copula", shadow_models=2))
    with pytest.raises(ConfigError, match="option shadow_time_limit"):
        validate_options(review, ReviewOptions(shadow_time_limit=-1))
    validate_options(review, ReviewOptions(generator=f"{BUILTIN}:memorise"))


@pytest.mark.slow
def test_privacy_section_runs_the_attack_and_the_record_carries_it(review):
    options = ReviewOptions(
        embedding="none", max_attack=200, n_bootstrap=0, generator=f"{BUILTIN}:memorise",
        shadow_models=10, shadow_targets=4,
    )  # fmt: skip
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    privacy = report.candidates["copy"].privacy
    assert privacy.shadow is not None and "shadow" not in privacy.errors
    # the first half of the targets are the records the no-box attacks expose most
    exposed = [t for t in privacy.shadow.targets if t.chosen == "exposed"]
    assert len(exposed) == 2 and all(t.member for t in exposed)
    assert [t.row for t in exposed] == [int(r) for r in privacy.vulnerable.rows[:2]]
    content = report.to_dict()
    entry = json.loads(json.dumps(content))["candidates"]["copy"]["privacy"]["shadow"]
    assert entry["generator"] == f"{BUILTIN}:memorise" and entry["complete"] is True
    assert entry["tpr_at_fpr_1pct"] >= 0.5 and len(entry["tpr_at_fpr_1pct_ci"]) == 2
    assert len(entry["targets"]) == 4
    verdicts = apply_policy(load_policy(), content["candidates"]["copy"])
    rule = next(r for r in verdicts.rules if r.rule == "shadow_tpr_at_fpr_1pct")
    assert rule.verdict == "warn" and not rule.required  # advisory: warns, never fails
    assert "shadow-model attacker" in rule.reason and "x chance" not in rule.reason
    html = render_html(content, [])
    assert "Shadow-model attack on the generator" in html
    assert f"{BUILTIN}:memorise" in html


def test_without_a_generator_the_attack_is_skipped_and_the_rule_is_not_applicable(review):
    options = ReviewOptions(embedding="none", max_attack=200, n_bootstrap=0)
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    privacy = report.candidates["copy"].privacy
    assert privacy.shadow is None and "no generator given" in privacy.skipped["shadow"]
    verdicts = apply_policy(load_policy(), report.to_dict()["candidates"]["copy"])
    rule = next(r for r in verdicts.rules if r.rule == "shadow_tpr_at_fpr_1pct")
    assert rule.verdict == "n/a"


@pytest.mark.slow
def test_a_failing_generator_is_the_attack_s_error_not_the_section_s(review):
    options = ReviewOptions(
        embedding="none", max_attack=200, n_bootstrap=0,
        generator="tests.hostile_generators:not_a_table",
        shadow_models=4, shadow_targets=1,
    )  # fmt: skip
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    privacy = report.candidates["copy"].privacy
    assert "must return a pandas DataFrame" in privacy.errors["shadow"]
    assert privacy.membership_inference  # the rest of the section still ran


# --- the command line ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(adult, tmp_path_factory):
    folder = tmp_path_factory.mktemp("shadow_cli")
    real, holdout = adult
    real.to_csv(folder / "train.csv", index=False)
    holdout.to_csv(folder / "holdout.csv", index=False)
    memorise(real, len(real), 1).to_csv(folder / "copy.csv", index=False)
    return folder


def _cli(files, out, *extra):
    return main([
        "review", "--real", str(files / "train.csv"), "--holdout", str(files / "holdout.csv"),
        "--synthetic", str(files / "copy.csv"), "--out", str(out), "--quiet", *extra,
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--generator", "no_such_module_xyz:fit"], "cannot be imported on this machine"),
        (["--generator", f"{BUILTIN}:nothing"], "has no attribute 'nothing'"),
        (["--generator", f"{BUILTIN}:copula", "--shadow-models", "1"], "shadow_models"),
        (["--shadow-targets", "0"], "shadow_targets"),
        (["--shadow-time-limit", "0"], "shadow_time_limit"),
    ],
)
def test_cli_refuses_a_bad_generator_before_computing(files, tmp_path, capsys, extra, message):
    out = tmp_path / "out"
    assert _cli(files, out, *extra) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # nothing computed, nothing written


@pytest.mark.slow
def test_cli_writes_the_attack_into_report_json(files, tmp_path, capsys):
    out = tmp_path / "out"
    code = _cli(
        files, out, "--sections", "privacy", "--embedding", "none", "--max-attack", "100",
        "--generator", f"{BUILTIN}:memorise", "--shadow-models", "4", "--shadow-targets", "2",
    )  # fmt: skip
    assert code in (1, 3)
    report = json.loads((out / "report.json").read_text())
    shadow = report["candidates"]["copy"]["privacy"]["shadow"]
    assert shadow["n_shadows"] == 4 and len(shadow["targets"]) == 2
    verdicts = report["verdicts"]["copy"]["rules"]
    assert verdicts["shadow_tpr_at_fpr_1pct"]["verdict"] in ("fail", "warn", "pass")
    assert "shadow" in (out / "report.html").read_text()


@pytest.mark.slow
def test_schema_free_generators_see_every_column(adult):
    # the plugin gets the training table as loaded (all columns), features use analysed ones
    real, holdout = adult
    schema = Schema({c: k for c, k in infer_schema(real).kinds.items() if c != "race"})
    # the generator raises (an error of the attack) unless its rows carry "race"
    result = shadow_attack(real, real, holdout, schema=schema,
                           settings=ShadowSettings("tests.hostile_generators:needs_every_column",
                                                   4, 1))  # fmt: skip
    assert result.complete and len(result.targets) == 1


# --- the Privacy page ----------------------------------------------------------------------------


@pytest.mark.slow
def test_privacy_page_names_a_generator_and_shows_the_attack(review):
    at = run_page("pages/privacy.py", review, timeout=300)
    assert not at.exception
    assert any("no generator given" in i.value for i in at.info)
    # the browser picks an installed generator; it cannot type a module (docs/security.md)
    assert not [t for t in at.text_input if t.key == "privacy_generator_path"]
    assert {"copula", "memorise"} <= set(at.selectbox(key="privacy_generator").options)
    at.selectbox(key="privacy_generator").set_value("memorise")
    at.number_input(key="privacy_shadow_k").set_value(4)
    at.number_input(key="privacy_shadow_t").set_value(2).run()
    assert not at.exception and not at.error
    at.run()  # the sidebar, drawn before the page, now sees the privacy section stale
    at.button(key="run_review").click().run()
    at = at.switch_page("pages/privacy.py").run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "generator memorise," in shown
    assert "2 targets × 4 shadows" in shown
    # a static table (cells wrap at 1280 px), its labels Markdown-escaped, the target as index
    tables = [t.value for t in at.table if markdown_text("called a member") in t.value.columns]
    assert len(tables) == 1 and len(tables[0]) == 2
    wanted = {markdown_text(c) for c in ("in training", "AUC", "TPR at FPR 0")}
    assert wanted <= set(tables[0].columns)
    assert all("row" in str(i) for i in tables[0].index)


def test_no_generator_is_not_applicable_even_when_missing_rules_fail(tmp_path):
    strict = tmp_path / "strict.toml"
    strict.write_text('[policy]\nmissing = "fail"\n')
    skipped = {"privacy": {"skipped": {"shadow": "no generator given (--generator ...)"}}}
    failed = {"privacy": {"errors": {"shadow": "generator 'm:f' returned no rows"}}}
    verdicts = {}
    for name, content in (("skipped", skipped), ("failed", failed)):
        rules = apply_policy(load_policy(strict), content).rules
        verdicts[name] = next(r for r in rules if r.rule == "shadow_tpr_at_fpr_1pct")
    assert verdicts["skipped"].verdict == "n/a"
    assert verdicts["failed"].verdict == "fail"  # a failure is not "does not apply"
    assert "returned no rows" in verdicts["failed"].reason


# --- issue 34: with --person the shadows' training sets divide people --------------------------


class _Recording:
    """An in-process stand-in for GeneratorProcess: memorises and records each training set."""

    def __init__(self):
        self.trains = []

    def sample(self, train, n, seed, *, deadline):
        self.trains.append(train.copy())
        return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def test_shadow_training_sets_hold_whole_people_and_the_target_person_in_or_out():
    rng = np.random.default_rng(0)
    n_people, rows = 60, 4
    level = np.repeat(rng.normal(0, 1, 2 * n_people), rows)
    frame = pd.DataFrame({
        "person": np.repeat([f"p{i}" for i in range(2 * n_people)], rows),
        "x": level + rng.normal(0, 0.1, len(level)),
        "kind": np.repeat(rng.choice(["a", "b", "c"], 2 * n_people), rows),
    })  # fmt: skip
    real, holdout = frame.iloc[: n_people * rows], frame.iloc[n_people * rows :]
    real, holdout = real.reset_index(drop=True), holdout.reset_index(drop=True)
    schema = Schema({"person": "identifier", "x": "numeric", "kind": "categorical"})
    settings = ShadowSettings("unused:name", n_shadows=6, n_targets=3)
    generator = _Recording()
    result = shadow_module._shadow_attack(
        real, real.iloc[::3].reset_index(drop=True), holdout, generator=generator,
        settings=settings, schema=schema, exposed=(), person="person", seed=0, progress=None,
    )  # fmt: skip
    assert len(result.targets) == 3 and len(generator.trains) == 3 * 6
    sizes = frame["person"].value_counts()
    for t, target in enumerate(result.targets):
        source = real if target.table == "real" else holdout
        person = source["person"].iloc[target.row]
        for s, train in enumerate(generator.trains[t * 6 : (t + 1) * 6]):
            counts = train["person"].value_counts()
            assert (counts == sizes[counts.index]).all()  # every person brings every row
            with_target = s < 3  # labels: the first half of the shadows hold the target
            assert (person in counts.index) == with_target, (t, s)
            assert len(train) <= len(real)
