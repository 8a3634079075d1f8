"""Person-level review (issue 25 item 1): a person's rows judged together.

The table: the shared CGM recordings (the bundled one-subject Bokeh file and the five iglu
subjects of ``../shared/data``) coded as a longitudinal table, one row per hour with at least
half of its readings: ``hour`` (of day), ``glucose`` (hourly mean, whole mg/dL), ``trend``
(rising / flat / falling by more than 20 mg/dL) and ``variability`` (band of the hour's SD).
Each 8-hour block of a subject's recording plays one *person* (3-8 rows; blocks of 3-10 rows
kept): the files hold six people only, and blocks of their recordings are the nearest real
stand-in for a table of hundreds of people with a few correlated rows each. Hourly codes repeat
across people (a fresh person's row equals some other person's row about one time in five), as
coded visits do, so one copied row says little and a person's whole set of rows says much.

People are split into training (40 %), holdout (30 %) and fresh people (30 %, the "other
people" a perfect generator would produce). ``copy5`` releases the fresh people plus every row
of 5 % of the training people; ``fresh`` releases the fresh people only.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.cli import main
from synthreview.errors import ConfigError, DataError
from synthreview.io.persons import check_person_column, person_key_columns, with_person
from synthreview.io.tables import align
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.judgement.rules import measure_group_mia_tpr
from synthreview.metrics.privacy.person import (
    aggregate_person_scores,
    one_row_per_person,
    person_rounds,
    tpr_interval,
)
from synthreview.options import ReviewOptions, validate_options
from synthreview.release import controls as controls_module
from synthreview.release.audit import PERSON_RULE, Thresholds, apply_thresholds
from synthreview.release.html import render_html
from synthreview.release.pipeline import audit_candidate
from synthreview.review import evaluate

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FEATURES = ["hour", "glucose", "trend", "variability"]
BLOCK_HOURS = 8


def _hourly(frame: pd.DataFrame) -> pd.DataFrame:
    """One coded row per hour with >= 6 of its 12 readings; person = subject + 8-hour block."""
    t = pd.to_datetime(frame["time"])
    df = pd.DataFrame(
        {
            "subject": frame["subject"].to_numpy(),
            "day": t.dt.strftime("%Y-%m-%d").to_numpy(),
            "hour": t.dt.hour.to_numpy(),
            "g": frame["glucose"].astype(float).to_numpy(),
            "t": t.to_numpy(),
        }
    ).sort_values(["subject", "t"], kind="stable")
    grouped = df.groupby(["subject", "day", "hour"], sort=True)["g"]
    stats = grouped.agg(["size", "mean", "std", "first", "last"]).reset_index()
    stats = stats[stats["size"] >= 6]
    change = stats["last"] - stats["first"]
    out = pd.DataFrame(
        {
            "person": stats["subject"] + " " + stats["day"] + " "
            + (stats["hour"] // BLOCK_HOURS).astype(str),
            "hour": stats["hour"].map(lambda h: f"{h:02d}h"),
            "glucose": stats["mean"].round().astype(int),
            "trend": np.where(change > 20, "rising", np.where(change < -20, "falling", "flat")),
            "variability": pd.cut(
                stats["std"].fillna(0), [-1, 10, 25, 40, np.inf],
                labels=["sd<10", "sd10-25", "sd25-40", "sd>40"],
            ).astype(str),
        }
    )  # fmt: skip
    rows = out.groupby("person")["hour"].transform("size")
    return out[(rows >= 3) & (rows <= 10)].reset_index(drop=True)


def load_person_table() -> pd.DataFrame:
    """The coded hourly CGM table of the module docstring (also read by the Privacy page test)."""
    bokeh = pd.read_csv(resources.files("synthreview") / "datasets" / "cgm_one_subject.csv.gz")
    iglu = pd.read_csv(DATA / "cgm_iglu_5_subjects.csv")
    frame = pd.concat(
        [
            pd.DataFrame({"subject": "bokeh", "time": bokeh["datetime"],
                          "glucose": bokeh["glucose"]}),
            pd.DataFrame({"subject": iglu["id"], "time": iglu["time"], "glucose": iglu["gl"]}),
        ],
        ignore_index=True,
    )  # fmt: skip
    return _hourly(frame)


@pytest.fixture(scope="module")
def person_table() -> pd.DataFrame:
    return load_person_table()


def _split(table: pd.DataFrame, seed: int = 0) -> dict[str, pd.DataFrame]:
    people = np.array(sorted(table["person"].unique()))
    np.random.default_rng(seed).shuffle(people)
    n = len(people)
    cut = (2 * n // 5, 7 * n // 10)
    train, hold, fresh = people[: cut[0]], people[cut[0] : cut[1]], people[cut[1] :]
    copied = train[: math.ceil(0.05 * len(train))]

    def rows(who: np.ndarray) -> pd.DataFrame:
        return table[table["person"].isin(who)].reset_index(drop=True)

    return {
        "real": rows(train),
        "holdout": rows(hold),
        "fresh": rows(fresh),
        "copy5": pd.concat([rows(fresh), rows(copied)], ignore_index=True),
    }


@pytest.fixture(scope="module")
def person_report(person_table):
    parts = _split(person_table)
    review = with_person(
        align(
            parts["real"], {"copy5": parts["copy5"], "fresh": parts["fresh"]},
            holdout=parts["holdout"],
        ),
        "person",
    )  # fmt: skip
    options = ReviewOptions(embedding="none", person="person")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(review, sections=["privacy"], options=options)
    return review, report


def _worst(attacks, key: str) -> tuple[float, str]:
    found = [(getattr(a, key), a.attack) for a in attacks if a.error is None]
    return max(found)


def test_the_table_has_3_to_10_rows_per_person(person_table):
    rows = person_table.groupby("person").size()
    assert rows.between(3, 10).all() and len(rows) > 600
    # hourly codes repeat across people: most rows are not unique, most people are
    assert person_table[FEATURES].duplicated(keep=False).mean() > 0.3


@pytest.mark.slow
def test_copying_5pct_of_people_is_seen_per_person_and_fails(person_report):
    _, report = person_report
    privacy = report.candidates["copy5"].privacy
    person = privacy.person_level
    assert person is not None and person.column == "person" and person.aggregate == "mean"
    row_tpr, _ = _worst(privacy.membership_inference, "tpr_at_fpr_1pct")
    person_tpr, attack = _worst(person.attacks, "tpr_at_fpr_1pct")
    assert person_tpr >= 5 * row_tpr, (person_tpr, row_tpr, attack)
    lo, hi = person.attack(attack).tpr_at_fpr_1pct_ci
    assert lo <= person_tpr <= hi
    verdicts = apply_policy(load_policy(None), report.candidates["copy5"].to_dict(), kind="table")
    by_rule = {v.rule: v for v in verdicts.rules}
    assert by_rule["person_mia_tpr_at_fpr_1pct"].verdict == "fail"
    assert "person" in by_rule["person_mia_tpr_at_fpr_1pct"].message


@pytest.mark.slow
def test_a_fresh_sample_of_other_people_passes(person_report):
    _, report = person_report
    verdicts = apply_policy(load_policy(None), report.candidates["fresh"].to_dict(), kind="table")
    by_rule = {v.rule: v for v in verdicts.rules}
    assert by_rule["person_mia_tpr_at_fpr_1pct"].verdict == "pass"
    assert by_rule["person_mia_auc"].verdict == "pass"


@pytest.mark.slow
def test_report_says_rows_were_grouped_and_wp29_targets_people(person_report):
    review, report = person_report
    data = report.candidates["copy5"].privacy.to_dict()["person_level"]
    assert data["column"] == "person" and data["aggregate"] == "mean"
    assert data["n_member_persons"] == review.real.frame["person"].nunique()
    assert "one seeded row per person" in data["wp29_targets"]
    assert 3 <= data["rows_per_person_median"] <= 10
    # the person column is an identifier: no attack or metric reads it
    assert review.schema.kinds["person"] == "identifier"


@pytest.mark.slow
def test_the_audit_flags_and_curates_a_persons_rows_together(person_report):
    _, report = person_report
    audit = audit_candidate(report, "copy5").audit
    assert audit.attrs["person"] == {"column": "person", "grouped": True}
    removed = audit.groupby("person")["removed"]
    assert (removed.all() | ~removed.any()).all()  # every person: all rows or none
    assert audit[PERSON_RULE].any()
    assert audit.loc[audit[PERSON_RULE], "reasons"].str.contains("another row of person").all()
    # the ids kept by the generator decide; without them rows are judged one by one
    alone = audit.copy()
    alone.attrs = {**audit.attrs, "person": {"column": "person", "grouped": False}}
    alone = apply_thresholds(alone, Thresholds(**audit.attrs["thresholds"]))
    assert PERSON_RULE not in alone and alone["removed"].sum() < audit["removed"].sum()


@pytest.mark.slow
def test_report_html_says_rows_were_grouped_by_person(person_report):
    _, report = person_report
    content = report.to_dict()
    page = render_html(content, [])
    assert "Membership by person" in page and "Rows grouped by column" in page
    assert content["options"]["person"] == "person"
    assert content["candidates"]["copy5"]["privacy"]["person_level"]["column"] == "person"


def test_one_row_per_person_gives_the_row_level_result_exactly(person_table):
    one = one_row_per_person(person_table, "person", FEATURES, seed=3)
    people = np.array(sorted(one["person"]))
    np.random.default_rng(1).shuffle(people)
    n = len(people) // 3  # training no larger than the holdout: both reviews score every row
    real, hold, syn = (one[one["person"].isin(p)] for p in (people[:n], people[n : 2 * n],
                                                             people[2 * n :]))  # fmt: skip
    syn = pd.concat([syn, real.iloc[::7]], ignore_index=True)  # some copies: not all at chance
    review = with_person(align(real, {"syn": syn}, holdout=hold), "person")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(review, sections=["privacy"],
                          options=ReviewOptions(embedding="none", person="person"))  # fmt: skip
    privacy = report.candidates["syn"].privacy
    assert privacy.person_level.rows_per_person_max == 1
    for row in privacy.membership_inference:
        per = privacy.person_level.attack(row.attack)
        assert per.error is None, per.error
        for key in ("auc", "tpr_at_fpr_1pct", "tpr_at_fpr_01pct", "advantage"):
            assert getattr(per, key) == getattr(row, key), (row.attack, key)
        assert per.auc_ci == row.auc_ci
    assert (privacy.person_level.epsilon_lower_bound.epsilon
            == privacy.epsilon_lower_bound.epsilon)  # fmt: skip


def test_mean_and_max_aggregates():
    scores = np.array([0.9, 0.1, 0.2, 0.5, 0.4, 0.6])
    is_member = np.array([True, True, True, False, False, False])
    persons = np.array(["a", "a", "b", "c", "c", "d"])
    mean = aggregate_person_scores(scores, is_member, persons, aggregate="mean")
    assert list(mean.persons) == ["a", "b", "c", "d"]
    np.testing.assert_allclose(mean.scores, [0.5, 0.2, 0.45, 0.6])
    assert list(mean.is_member) == [True, True, False, False] and list(mean.n_rows) == [2, 1, 2, 1]
    top = aggregate_person_scores(scores, is_member, persons, aggregate="max")
    np.testing.assert_allclose(top.scores, [0.9, 0.2, 0.5, 0.6])
    # the same row scored in two runs counts once
    twice = aggregate_person_scores(
        np.append(scores, 0.7), np.append(is_member, True), np.append(persons, "b"),
        rows=np.r_[np.arange(6), 2],
    )  # fmt: skip
    np.testing.assert_allclose(twice.scores, [0.5, 0.45, 0.45, 0.6])
    with pytest.raises(ValueError, match="aggregate must be one of"):
        aggregate_person_scores(scores, is_member, persons, aggregate="median")


def test_tpr_interval_is_clopper_pearson():
    low, high = tpr_interval(0.0, 100)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 100))
    low, high = tpr_interval(0.5, 100)
    assert 0.39 < low < 0.5 < high < 0.61
    assert all(math.isnan(v) for v in tpr_interval(float("nan"), 10))


def test_rounds_hold_one_row_per_person_and_ignore_row_order(person_table):
    sample = person_table.iloc[:200]
    rounds = person_rounds(sample, "person", FEATURES, seed=0)
    assert all(not r["person"].duplicated().any() for r in rounds)
    assert sum(len(r) for r in rounds) == len(sample)
    shuffled = person_rounds(sample.sample(frac=1, random_state=5), "person", FEATURES, seed=0)
    for a, b in zip(rounds, shuffled, strict=True):
        pd.testing.assert_frame_equal(a, b)


def _small_review(real, holdout, synthetic=None):
    return align(real, {"syn": real if synthetic is None else synthetic}, holdout=holdout)


def test_a_person_on_both_sides_is_refused(person_table):
    parts = _split(person_table)
    holdout = pd.concat([parts["holdout"], parts["real"].iloc[:3]], ignore_index=True)
    with pytest.raises(DataError, match=r"not both .* got 1 person"):
        with_person(_small_review(parts["real"], holdout, parts["fresh"]), "person")


def _halves(frame: pd.DataFrame, start: float) -> pd.DataFrame:
    return frame.assign(person=start + np.arange(len(frame)) / 2)


@pytest.mark.parametrize(
    ("column", "change", "error", "match"),
    [
        ("no_such_column", lambda r, h: (r, h), ConfigError,
         "option person must be one of the columns"),
        ("person", lambda r, h: (r.assign(person=r["person"].where(r.index > 0)), h),
         DataError, "missing id"),
        ("person", lambda r, h: (_halves(r, 0), _halves(h, 1e6)), DataError,
         "fractional numbers"),
    ],
)  # fmt: skip
def test_bad_person_columns_are_refused_with_the_option_named(
    person_table, column, change, error, match
):
    parts = _split(person_table)
    real, holdout = change(parts["real"].copy(), parts["holdout"].copy())
    fresh = parts["fresh"].assign(person=None) if error is DataError else parts["fresh"]
    with pytest.raises(error, match=match):
        with_person(_small_review(real, holdout, fresh), column)


def test_an_analysed_person_column_is_refused_before_computing(person_table):
    parts = _split(person_table)
    review = _small_review(parts["real"], parts["holdout"], parts["fresh"])
    with pytest.raises(ConfigError, match="must be an identifier column"):
        validate_options(review, ReviewOptions(person="person"))
    validate_options(with_person(review, "person"), ReviewOptions(person="person"))
    check_person_column(with_person(review, "person"), "person")


def test_partly_missing_synthetic_ids_are_refused(person_table):
    parts = _split(person_table)
    fresh = parts["fresh"].copy()
    fresh.loc[0, "person"] = None
    with pytest.raises(DataError, match=r"complete .* or empty"):
        with_person(_small_review(parts["real"], parts["holdout"], fresh), "person")
    fresh["person"] = None  # a generator that did not keep ids: accepted
    review = with_person(_small_review(parts["real"], parts["holdout"], fresh), "person")
    assert review.schema.kinds["person"] == "identifier"


@pytest.mark.slow
def test_without_a_person_column_the_person_rules_are_not_applicable(person_report):
    _, report = person_report
    candidate = report.candidates["fresh"].to_dict()
    candidate["privacy"] = dict(candidate["privacy"], person_level=None)
    verdicts = apply_policy(load_policy(None), candidate, kind="table")
    by_rule = {v.rule: v for v in verdicts.rules}
    assert by_rule["person_mia_auc"].verdict == "n/a"
    assert by_rule["person_mia_tpr_at_fpr_1pct"].verdict == "n/a"


def test_cli_refuses_a_person_in_both_tables_with_exit_2(person_table, tmp_path, capsys):
    parts = _split(person_table)
    holdout = pd.concat([parts["holdout"], parts["real"].iloc[:1]], ignore_index=True)
    for name, frame in (("real", parts["real"]), ("holdout", holdout), ("syn", parts["fresh"])):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    code = main([
        "review", "--real", str(tmp_path / "real.csv"), "--holdout",
        str(tmp_path / "holdout.csv"), "--synthetic", str(tmp_path / "syn.csv"),
        "--person", "person", "--out", str(tmp_path / "out"), "--quiet",
    ])  # fmt: skip
    assert code == 2
    assert "each person must be in the training table or the holdout" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_replace_keeps_person_option():
    assert replace(ReviewOptions(), person="p").person == "p"


# --- issue 34: the person is the unit --------------------------------------------------------

#: the first 120 people (960 rows) of the NLSY wage panel (tests/data/README.md)
PANEL = Path(__file__).resolve().parent / "data" / "wage_panel_120.csv"


def _panel_files(tmp_path: Path) -> dict[str, Path]:
    """Training, holdout and fresh people (40 each) of the panel, split by person."""
    frame = pd.read_csv(PANEL)
    people = np.sort(frame["person_id"].unique())
    order = people[np.random.default_rng(0).permutation(len(people))]
    paths = {}
    for name, ids in (("real", order[:40]), ("holdout", order[40:80]), ("fresh", order[80:])):
        part = frame[frame["person_id"].isin(ids)].copy()
        if name == "fresh":
            part["person_id"] += 100_000  # a generator's own ids
        paths[name] = tmp_path / f"{name}.csv"
        part.to_csv(paths[name], index=False)
    return paths


def _cli(paths: dict[str, Path], out: Path, *extra: str) -> int:
    return main([
        "review", "--real", str(paths["real"]), "--holdout", str(paths["holdout"]),
        "--synthetic", str(paths["fresh"]), "--embedding", "none", "--target", "union",
        "--out", str(out), "--quiet", *extra,
    ])  # fmt: skip


@pytest.mark.slow
def test_cli_with_person_judges_people_on_a_real_panel(tmp_path, capsys):
    paths = _panel_files(tmp_path)
    _cli(paths, tmp_path / "out", "--person", "person_id", "--sections", "privacy", "utility",
         "--claimed-epsilon", "1")  # fmt: skip
    assert "looks like a person key" not in capsys.readouterr().err  # --person named it
    record = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert record["unit"]["unit"] == "person" and record["unit"]["column"] == "person_id"
    rules = record["verdicts"]["fresh"]["rules"]
    # row-level membership shown, not judged; people judged, and fresh people pass
    for rule in ("mia_auc", "mia_tpr_at_fpr_1pct"):
        assert rules[rule]["verdict"] == "n/a" and rules[rule]["measured"] is not None
        assert "shown and not judged" in rules[rule]["reason"]
    for rule in ("person_mia_auc", "person_mia_tpr_at_fpr_1pct", "dp_claim", "tstr_trtr_ratio"):
        assert rules[rule]["verdict"] == "pass", (rule, rules[rule]["reason"])
    candidate = record["candidates"]["fresh"]
    assert candidate["privacy"]["dp_claim"]["unit"] == "person"
    auc = [s for s in candidate["utility"]["ml_efficacy"] if s["metric"] == "roc_auc"]
    assert all(s["unit"] == "person" and s["ratio_ci"][0] <= s["ratio"] <= s["ratio_ci"][1]
               for s in auc)  # fmt: skip
    assert "test people resampled" in rules["tstr_trtr_ratio"]["reason"]


def test_cli_without_person_notices_the_panel_and_says_rows_were_the_unit(tmp_path, capsys):
    paths = _panel_files(tmp_path)
    _cli(paths, tmp_path / "out", "--sections", "utility")
    err = capsys.readouterr().err
    assert "column 'person_id' looks like a person key" in err
    assert "--person person_id" in err
    record = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert record["unit"]["unit"] == "row"
    assert any(n["column"] == "person_id" and "--person" in n["message"]
               for n in record["notices"])  # fmt: skip


def test_person_keys_are_found_on_panels_only():
    frame = pd.read_csv(PANEL)
    assert person_key_columns(frame) == ["person_id"]
    # one row per person: no value repeats, nothing to notice
    assert person_key_columns(frame.drop_duplicates("person_id")) == []
    # the same rows in a random order of people's rows are still a panel
    shuffled = frame.sample(frac=1.0, random_state=0)
    assert person_key_columns(shuffled) == ["person_id"]
    # ids shuffled across rows: other columns no longer follow them
    broken = frame.assign(person_id=np.random.default_rng(0).permutation(frame["person_id"]))
    assert person_key_columns(broken) == []


def test_row_membership_rules_are_not_judged_in_a_person_review():
    attack = {"attack": "logan_classifier", "auc": 0.75, "auc_ci": [0.72, 0.78],
              "tpr_at_fpr_1pct": 0.2, "n_members": 500, "n_nonmembers": 500}  # fmt: skip
    person = {"column": "pid", "attacks": [
        {"attack": "logan_classifier", "auc": 0.52, "auc_ci": [0.45, 0.59],
         "tpr_at_fpr_1pct": 0.01, "tpr_at_fpr_1pct_ci": [0.0, 0.05]}]}  # fmt: skip
    rows_only = {"privacy": {"membership_inference": [attack]}}
    with_people = {"privacy": {"membership_inference": [attack], "person_level": person}}
    policy = load_policy()
    by_rows = apply_policy(policy, rows_only, kind="table").rules
    by_people = apply_policy(policy, with_people, kind="table").rules
    verdict = lambda found, name: next(r for r in found if r.rule == name)  # noqa: E731
    assert verdict(by_rows, "mia_auc").verdict == "fail"
    assert verdict(by_people, "mia_auc").verdict == "n/a"
    assert verdict(by_people, "mia_auc").measured == 0.75  # shown
    assert verdict(by_people, "person_mia_auc").verdict == "pass"


@pytest.mark.slow
def test_planted_controls_divide_people(person_report, monkeypatch):
    review, report = person_report
    seen = {}

    class Captured(Exception):
        pass

    def capture(controls, **kwargs):
        seen["review"] = controls
        raise Captured

    monkeypatch.setattr(controls_module, "evaluate", capture)
    with pytest.raises(Captured):
        controls_module.planted_controls(review, report, shares=(0.0, 0.05))
    controls = seen["review"]
    reference = set(controls.holdout.frame["person"].astype(str))
    hold = review.holdout.frame.assign(person=review.holdout.frame["person"].astype(str))
    real = review.real.frame.assign(person=review.real.frame["person"].astype(str))
    for name, table in controls.synthetic.items():
        ids = table.frame["person"].astype(str)
        base = set(ids) & set(hold["person"])
        assert base and not base & reference, name  # no holdout person on both sides
        planted = set(ids) & set(real["person"])
        if name.endswith("5%"):
            assert planted  # whole training people, every row of each but the last drawn
            whole = [p for p in planted if (ids == p).sum() == (real["person"] == p).sum()]
            assert len(whole) >= len(planted) - 1
        else:
            assert not planted


@pytest.mark.slow
def test_a_sampled_person_level_review_samples_people_and_audits_them_whole():
    """The NLSY panel (545 people x 8 years) split by person, about 1,450 rows a side, reviewed
    with ``sample_rows=1000``: the statistics are estimated on whole people (issue 34: sampling
    above --sample-rows samples people), and the every-row audit still groups the candidate's
    rows by person, so a copied person's rows are removed together."""
    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "shared" / "data" / "wage_panel.csv")
    people = np.sort(frame["person_id"].unique())
    order = people[np.random.default_rng(0).permutation(len(people))]
    third = len(order) // 3
    parts = [frame[frame["person_id"].isin(order[i * third : (i + 1) * third])]
             for i in range(3)]  # fmt: skip
    copied = parts[0][parts[0]["person_id"].isin(order[:5])]
    candidate = pd.concat([parts[2].iloc[: -len(copied)], copied], ignore_index=True)
    review = with_person(
        align(parts[0].reset_index(drop=True), {"syn": candidate},
              holdout=parts[1].reset_index(drop=True)),
        "person_id",
    )  # fmt: skip
    options = ReviewOptions(person="person_id", sample_rows=1000, n_bootstrap=20, max_attack=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(review, sections=("fidelity", "privacy"), options=options, seed=0)
    assert report.sampling is not None
    for name, table in (("real", review.real), ("holdout", review.holdout),
                        ("syn", review.synthetic["syn"])):  # fmt: skip
        sample = report.sampling.table(name)
        assert sample.sampled and 0 < sample.rows_used <= 1000
        ids = table.frame["person_id"].to_numpy()
        drawn = np.zeros(len(ids), bool)
        drawn[sample.positions] = True
        assert not set(ids[drawn]) & set(ids[~drawn])  # whole people in the sample
    audit = audit_candidate(report, "syn", Thresholds(), review=review).audit
    assert audit.attrs["person"]["grouped"] and len(audit) == len(candidate)
    copied_ids = {str(p) for p in order[:5]}
    for person in copied_ids:  # every copied person removed with every one of their rows
        assert audit.loc[audit["person"].astype(str) == person, "removed"].all(), person


def test_no_box_attacks_leave_the_scored_persons_other_rows_out_of_the_reference():
    from synthreview.metrics.privacy.attacks import NoBoxInputs, isotropic_kde_logpdf

    # reference (holdout): person a at 0.0 and 0.1, person b at 5.0 and 5.2, person c at 9.0
    reference = np.array([[0.0], [0.1], [5.0], [5.2], [9.0]])
    people = np.array(["h:a", "h:a", "h:b", "h:b", "h:c"])
    synthetic = np.array([[1.0], [2.0], [3.0], [7.0]])
    attack = reference[[0, 2]]  # a's first row and b's first row, both reference rows
    own = np.array([0, 2])
    by_row = NoBoxInputs(attack, synthetic, reference, own, n_dims=1)
    by_person = NoBoxInputs(attack, synthetic, reference, own, n_dims=1,
                            groups=people[[0, 2]], reference_groups=people)  # fmt: skip
    # leave-one-out finds the person's own other row; leave-person-out the next person
    np.testing.assert_allclose(by_row.reference_nn, [0.1, 0.2], atol=1e-6)
    np.testing.assert_allclose(by_person.reference_nn, [5.0, 4.0], atol=1e-6)
    # the reference density of a's row is taken over b's and c's rows only
    h = by_person.kde_bandwidth
    expected = isotropic_kde_logpdf(attack[:1], reference[2:], bandwidth=h)
    np.testing.assert_allclose(by_person.log_p_reference[:1], expected, rtol=1e-5)
    with pytest.raises(ValueError, match="groups and reference_groups must be given together"):
        NoBoxInputs(attack, synthetic, reference, own, groups=people[[0, 2]])


def test_the_group_rule_of_a_person_review_counts_people():
    """NLSY panel (tests/data/wage_panel_120.csv), 40 people a side, 8 rows each, grouped by
    ``married`` (which changes within a person: the person's first row in value order decides):
    every group's members and non-members are people."""
    frame = pd.read_csv(PANEL)
    people = np.sort(frame["person_id"].unique())
    order = people[np.random.default_rng(0).permutation(len(people))]
    parts = {name: frame[frame["person_id"].isin(ids)].reset_index(drop=True)
             for name, ids in (("real", order[:40]), ("holdout", order[40:80]),
                               ("fresh", order[80:]))}  # fmt: skip
    fresh = parts["fresh"].assign(person_id=parts["fresh"]["person_id"] + 100_000)
    review = with_person(align(parts["real"], {"fresh": fresh}, holdout=parts["holdout"]),
                         "person_id")  # fmt: skip
    options = ReviewOptions(embedding="none", person="person_id", groups=("married",),
                            n_bootstrap=20)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(review, sections=["privacy"], options=options, seed=0)
    found = report.candidates["fresh"].privacy.groups
    assert found is not None and found.results
    assert found.unit == "person"  # the rule's sentence says "(people)", not "(rows)"
    content = report.to_dict()["candidates"]["fresh"]
    assert "non-members (people)" in measure_group_mia_tpr(content, 0).detail
    for group in found.results:
        # at most the 40 people a side, never the 320 rows
        assert group.n_members <= 40 and group.n_nonmembers <= 40, group
    totals = {}
    for group in found.results:
        totals.setdefault(group.attack, [0, 0])
        totals[group.attack][0] += group.n_members
        totals[group.attack][1] += group.n_nonmembers
    assert all(t == [40, 40] for t in totals.values()), totals


@pytest.mark.slow
def test_a_person_review_is_free_of_row_order():
    """Shuffling the rows of training and holdout changes no number of a person-level privacy
    section: the people drawn (attack sets, DCR share, QI balance, ε halves) are drawn in a
    value-defined order of people."""
    frame = pd.read_csv(PANEL)
    people = np.sort(frame["person_id"].unique())
    order = people[np.random.default_rng(0).permutation(len(people))]
    parts = [frame[frame["person_id"].isin(order[a:b])].reset_index(drop=True)
             for a, b in ((0, 40), (40, 70), (70, 120))]  # fmt: skip
    fresh = parts[2].assign(person_id=parts[2]["person_id"] + 100_000)

    def privacy(real: pd.DataFrame, holdout: pd.DataFrame) -> str:
        review = with_person(align(real, {"fresh": fresh}, holdout=holdout), "person_id")
        options = ReviewOptions(embedding="none", person="person_id", claimed_epsilon=0.5,
                                quasi_identifiers=("married", "union"), n_bootstrap=20)  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = evaluate(review, sections=["privacy"], options=options, seed=0)
        found = report.candidates["fresh"].to_dict()["privacy"]
        keys = ("membership_inference", "dcr", "dp_claim", "quasi_identifiers",
                "epsilon_lower_bound", "person_level")  # fmt: skip
        return json.dumps({k: found[k] for k in keys}, sort_keys=True, default=str)

    shuffled = [p.sample(frac=1, random_state=5 + i).reset_index(drop=True)
                for i, p in enumerate(parts[:2])]  # fmt: skip
    assert privacy(parts[0], parts[1]) == privacy(*shuffled)
