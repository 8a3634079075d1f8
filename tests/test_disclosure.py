"""Issue 36: quasi-identifier replay, k-anonymity and prosecutor risk, answer keys, constraints.

Hand-computed values on a tiny table, pycanon's k-anonymity on an Adult extract
(``tests/reference/qi_reference.py``), and the rules on Adult samples from the bundled extract:
fresh samples pass, planted cases are caught.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthreview
from synthreview.cli import main
from synthreview.errors import ConfigError
from synthreview.io.tables import align, infer_schema, read_table
from synthreview.judgement.policy import apply_policy, load_policy
from synthreview.judgement.rules import SPECS
from synthreview.metrics.privacy.intervals import newcombe_difference, wilson_interval
from synthreview.metrics.privacy.quasi import (
    qi_codes,
    quasi_identifier_risk,
    training_frequencies,
)
from synthreview.metrics.privacy.sensitive_values import sensitive_value_replay
from synthreview.metrics.utility.answer_key import answer_keys
from synthreview.metrics.utility.constraints import check_constraints, parse_constraints
from synthreview.options import ReviewOptions
from synthreview.record.live import initial_options
from synthreview.review import evaluate

REFERENCE = Path(__file__).parent / "reference" / "qi_reference.json"
ADULT = Path(synthreview.__file__).parent / "datasets" / "adult.csv.gz"
QIS = ["age", "sex", "race", "native_country", "education", "marital_status", "occupation"]


def _tiny(rows):
    return pd.DataFrame(rows, columns=["age", "sex"])


TRAIN = _tiny([(30, "M"), (30, "M"), (40, "F"), (50, "M"), (60, "F"), (60, "F"), (60, "F")])
SYNTH = _tiny([(40, "F"), (40, "F"), (30, "M"), (70, "M"), (60, "F"), (60, "F")])
HOLD = _tiny([(30, "M"), (50, "M"), (80, "F"), (80, "F"), (70, "M"), (60, "F"), (20, "F")])


def test_hand_computed_tiny_table():
    r = quasi_identifier_risk(TRAIN, SYNTH, holdout=HOLD, quasi_identifiers=["age", "sex"])
    # f_k of the synthetic rows in training: 1, 1, 2, 0, 3, 3
    assert r.risk.tolist() == pytest.approx([1, 1, 0.5, 0, 1 / 3, 1 / 3])
    assert r.replayed == 2 and r.replay_share == pytest.approx(2 / 6)
    assert r.risk_mean == pytest.approx((1 + 1 + 0.5 + 0 + 2 / 3) / 6)
    # holdout in training: (30,M) 2, (50,M) 1, (60,F) 3, the rest 0
    assert r.holdout_replayed == 1 and r.holdout_replay_share == pytest.approx(1 / 7)
    assert r.holdout_risk_mean == pytest.approx((0.5 + 1 + 1 / 3) / 7)
    assert r.excess == pytest.approx(2 / 6 - 1 / 7)
    assert r.excess_ci == pytest.approx(newcombe_difference(2, 6, 1, 7))
    # k: synthetic classes (40,F) x2, (30,M), (70,M), (60,F) x2; holdout (80,F) x2, rest 1
    assert (r.k_anonymity, r.holdout_k_anonymity, r.train_k_anonymity, r.classes) == (1, 1, 1, 4)
    # balance (equal sizes, no subsample): (40,F) unique in training and absent from the
    # holdout, twice: +2; (70,M) unique in the holdout and absent from training: -1
    assert r.balance_rows == 7 and r.balance == pytest.approx(1 / 6)
    assert r.balance_bound < r.balance and 0 < r.balance_p_value <= 1
    shares = {label: s for label, s, _ in r.risk_histogram}
    assert shares["1 (unique)"] == pytest.approx(2 / 6)
    assert shares["1/2"] == pytest.approx(1 / 6)
    assert shares["0 (not in training)"] == pytest.approx(1 / 6)


def test_k_anonymity_of_a_coarse_table():
    # two classes of 2 and 3 rows: 2-anonymous
    train = _tiny([(1, "a"), (1, "a"), (2, "b"), (2, "b"), (2, "b")])
    r = quasi_identifier_risk(train, train, holdout=None, quasi_identifiers=["age", "sex"])
    assert r.k_anonymity == 2 and r.train_k_anonymity == 2 and r.replayed == 0
    assert math.isnan(r.balance) and math.isnan(r.balance_bound)
    assert r.risk_mean == pytest.approx((2 * 0.5 + 3 / 3) / 5)


def test_codes_compare_numbers_as_numbers_and_missing_as_a_value():
    a = pd.DataFrame({"x": [1, 2, None], "y": ["u", "v", None]})
    b = pd.DataFrame({"x": [1.0, 2.0, np.nan], "y": ["u", "w", None]})
    ca, cb = qi_codes([a, b], ["x", "y"])
    assert ca[0] == cb[0] and ca[1] != cb[1] and ca[2] == cb[2]
    assert training_frequencies(ca, cb).tolist() == [1, 0, 1]


def test_newcombe_published_example():
    # Newcombe (1998) Table II, example (a): 56/70 - 48/80, method 10: 0.0524 to 0.3339
    low, high = newcombe_difference(56, 70, 48, 80)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    # Wilson (1927) by hand for 1 of 10
    z = 1.959963984540054
    center = (0.1 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.09 / 10 + z * z / 400)
    assert wilson_interval(1, 10) == pytest.approx((center - half, center + half))


def test_against_pycanon_and_a_hand_count():
    ref = json.loads(REFERENCE.read_text())
    assert ref["pycanon"] == "1.3.6"
    train, candidate = pd.DataFrame(ref["train"]), pd.DataFrame(ref["candidate"])
    for entry in ref["sets"].values():
        r = quasi_identifier_risk(train, candidate, quasi_identifiers=entry["quasi_identifiers"])
        assert r.train_k_anonymity == entry["train_k"]
        assert r.k_anonymity == entry["candidate_k"]
        assert r.replayed == entry["replayed"]
        assert r.risk_mean == pytest.approx(entry["risk_mean"], rel=1e-12)


def test_row_order_changes_nothing():
    ref = json.loads(REFERENCE.read_text())
    train, candidate = pd.DataFrame(ref["train"]), pd.DataFrame(ref["candidate"])
    holdout = candidate.iloc[:200]
    a = quasi_identifier_risk(train, candidate, holdout=holdout, quasi_identifiers=QIS)
    b = quasi_identifier_risk(
        train.sample(frac=1, random_state=1),
        candidate,
        holdout=holdout.sample(frac=1, random_state=2),
        quasi_identifiers=QIS,
    )
    assert a.to_dict() == b.to_dict()


# --- rules on Adult (the bundled extract) ---------------------------------------------------

N_ADULT = 3000


@pytest.fixture(scope="module")
def adult():
    return pd.read_csv(ADULT)


def adult_split(adult, seed):
    """Training, holdout and a fresh sample: disjoint Adult rows, 3,000 each."""
    rows = adult.sample(3 * N_ADULT, random_state=100 + seed).reset_index(drop=True)
    n = N_ADULT
    return rows[:n], rows[n : 2 * n].reset_index(drop=True), rows[2 * n :].reset_index(drop=True)


def graft_qi(train, fresh, share, seed):
    """``fresh`` with ``share`` of its rows given the QI combinations of training-unique people."""
    rng = np.random.default_rng(seed)
    (codes,) = qi_codes([train], QIS)
    unique = np.flatnonzero(training_frequencies(codes, codes) == 1)
    m = round(share * len(fresh))
    source, target = rng.choice(unique, m, replace=False), rng.choice(len(fresh), m, replace=False)
    out = fresh.copy()
    out.iloc[target, [out.columns.get_loc(q) for q in QIS]] = train.iloc[source][QIS].to_numpy()
    return out


def judge(rule, candidate):
    policy = load_policy()
    verdicts = apply_policy(policy, candidate, kind="table")
    return next(v for v in verdicts.rules if v.rule == rule)


def _qi_candidate(train, synthetic, holdout, seed=0):
    r = quasi_identifier_risk(train, synthetic, holdout=holdout, quasi_identifiers=QIS, seed=seed)
    return {"privacy": {"quasi_identifiers": r.to_dict(), "errors": {}, "skipped": {}}}


@pytest.mark.parametrize("seed", range(5))
def test_fresh_adult_passes_qi_replay(adult, seed):
    train, holdout, fresh = adult_split(adult, seed)
    verdict = judge("qi_replay", _qi_candidate(train, fresh, holdout, seed))
    assert verdict.verdict == "pass", verdict.reason


@pytest.mark.parametrize("seed", range(3))
def test_three_percent_qi_replay_fails(adult, seed):
    train, holdout, fresh = adult_split(adult, seed)
    planted = graft_qi(train, fresh, 0.03, seed)
    verdict = judge("qi_replay", _qi_candidate(train, planted, holdout, seed))
    assert verdict.verdict == "fail", verdict.reason
    assert "age, sex, race" in verdict.reason


def test_no_quasi_identifiers_is_not_judged():
    candidate = {
        "privacy": {
            "errors": {},
            "skipped": {"quasi_identifiers": "no quasi-identifiers named (--quasi-identifiers)"},
        }
    }
    verdict = judge("qi_replay", candidate)
    assert verdict.verdict == "n/a" and "--quasi-identifiers" in verdict.reason
    assert "qi_replay" in SPECS


# --- answer keys (label_leak) --------------------------------------------------------------


def _leak_candidate(train, synthetic, holdout, columns=("income",)):
    schema = infer_schema(train)
    keys = answer_keys(train, synthetic, holdout=holdout, columns=columns, schema=schema)
    return {"utility": {"answer_key": keys.to_dict(), "errors": {}, "skipped": {}}}, keys


def _income_rule(frame, flip=0, seed=0):
    out = frame.copy()
    out["income"] = np.where(out["capital_gain"] > 0, ">50K", "<=50K")
    if flip:
        rows = np.random.default_rng(seed).choice(len(out), flip, replace=False)
        out.loc[rows, "income"] = np.where(out.loc[rows, "income"] == ">50K", "<=50K", ">50K")
    return out


@pytest.mark.parametrize("seed", range(5))
def test_fresh_adult_passes_label_leak(adult, seed):
    train, holdout, fresh = adult_split(adult, seed)
    candidate, _ = _leak_candidate(train, fresh, holdout, ("income", "sex"))
    verdict = judge("label_leak", candidate)
    assert verdict.verdict == "pass", verdict.reason


def test_exact_label_rule_fails_and_is_named(adult):
    train, holdout, fresh = adult_split(adult, 0)
    candidate, keys = _leak_candidate(train, _income_rule(fresh), holdout)
    assert keys.keys[0].rule == "income = >50K iff capital_gain > 0"
    assert keys.keys[0].exact and keys.keys[0].depth == 1
    verdict = judge("label_leak", candidate)
    assert verdict.verdict == "fail"
    assert "income = >50K iff capital_gain > 0" in verdict.reason


def test_near_exact_label_rule_warns_naming_the_column(adult):
    train, holdout, fresh = adult_split(adult, 1)
    candidate, keys = _leak_candidate(train, _income_rule(fresh, flip=15), holdout)
    verdict = judge("label_leak", candidate)
    assert verdict.verdict == "warn", verdict.reason
    assert verdict.reason.startswith("answer key: close to a rule (income:")
    assert keys.keys[0].error == pytest.approx(15 / N_ADULT)


def test_numeric_column_is_skipped_and_no_column_is_not_judged(adult):
    train, holdout, fresh = adult_split(adult, 0)
    _, keys = _leak_candidate(train, fresh, holdout, ("age",))
    assert keys.keys == () and "numeric" in dict(keys.skipped)["age"]
    candidate = {"utility": {"answer_key": keys.to_dict(), "errors": {}, "skipped": {}}}
    verdict = judge("label_leak", candidate)
    assert verdict.verdict == "n/a" and "age: numeric" in verdict.reason
    # a 0/1 outcome stored as numbers is tested as two classes
    zero_one = fresh.assign(income=(fresh["income"] == ">50K").astype(int))
    train01 = train.assign(income=(train["income"] == ">50K").astype(int))
    keys01 = answer_keys(train01, zero_one, holdout=holdout.assign(
        income=(holdout["income"] == ">50K").astype(int)), columns=["income"],
        schema=infer_schema(train01))  # fmt: skip
    assert [k.column for k in keys01.keys] == ["income"] and keys01.skipped == ()
    candidate = {"utility": {"errors": {}, "skipped": {"answer_key": "no target named"}}}
    assert judge("label_leak", candidate).verdict == "n/a"


# --- declared constraints ------------------------------------------------------------------

CONSTRAINTS = """
[[range]]
name = "adult age"
column = "age"
min = 17
max = 90

[[inequality]]
expression = "capital_loss <= capital_gain + 4400"

[[formula]]
expression = "education_num * 2 == education_num + education_num"

[[allowed]]
columns = ["relationship", "sex"]
combinations = [
  ["Husband", "Male"], ["Wife", "Female"], ["Own-child", "Male"], ["Own-child", "Female"],
  ["Not-in-family", "Male"], ["Not-in-family", "Female"], ["Unmarried", "Male"],
  ["Unmarried", "Female"], ["Other-relative", "Male"], ["Other-relative", "Female"],
]
"""


def test_constraint_counts_by_hand():
    frame = pd.DataFrame(
        {"a": [1.0, 5.0, 3.0, np.nan], "b": [2.0, 4.0, 3.0, 1.0], "k": ["x", "y", "x", "z"]}
    )
    text = """
[[range]]
column = "a"
max = 4
[[inequality]]
expression = "a < b"
[[formula]]
expression = "a + 1 == b"
[[unique]]
columns = ["k"]
[[allowed]]
columns = ["k"]
combinations = [["x"], ["y"]]
"""
    parsed = parse_constraints(text, columns=["a", "b", "k"], numeric=["a", "b"])
    report = check_constraints(frame, frame, constraints=parsed)
    got = {c.name: (c.violations, c.rows) for c in report.checks}
    # range: 5 > 4 (NaN not judged); a < b: 5 < 4 and 3 < 3 fail; a + 1 == b: 5+1, 3+1 fail;
    # unique k: the two "x" rows; allowed: "z"
    assert got == {
        "range #1": (1, 3),
        "inequality #1": (2, 3),
        "formula #1": (2, 3),
        "unique #1": (2, 4),
        "allowed #1": (1, 4),
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[range]]\ncolumn = 'agee'\nmin = 1", "[[range]] #1 column: expected an analysed"),
        ("[[range]]\ncolumn = 'age'", "expected min and/or max"),
        ("[[inequality]]\nexpression = '__import__(\"os\") < 1'", "column names, numbers"),
        ("[[inequality]]\nexpression = 'age < 1 < 2'", "one comparison"),
        ("[[formula]]\nexpression = 'age <= 3'", "one comparison (==)"),
        ("[[allowed]]\ncolumns = ['sex']\ncombinations = [['a', 'b']]", "lists of 1 values"),
        ("[[unique]]\ncolumns = []", "a non-empty list"),
        ("[[bogus]]\nx = 1", "arrays of tables among"),
        ("not toml [", "must be valid TOML"),
        ("", "at least one of"),
    ],
)
def test_bad_constraints_name_the_entry(text, message):
    with pytest.raises(ConfigError, match="option constraints") as err:
        parse_constraints(text, columns=["age", "sex"], numeric=["age"])
    assert message in str(err.value) and "got" in str(err.value)


@pytest.mark.parametrize("seed", range(2))
def test_fresh_adult_obeys_constraints_and_violations_are_counted(adult, seed):
    train, holdout, fresh = adult_split(adult, seed)
    schema = infer_schema(train)
    parsed = parse_constraints(CONSTRAINTS, columns=schema.analysed, numeric=schema.numeric)

    def judged(candidate):
        report = check_constraints(train, candidate, holdout=holdout, constraints=parsed)
        body = {"constraints": report.to_dict(), "errors": {}, "skipped": {}}
        return report, judge("constraint_violations", {"utility": body})

    report, verdict = judged(fresh)
    assert verdict.verdict == "pass", verdict.reason
    broken = fresh.copy()
    rows = np.random.default_rng(seed).choice(len(broken), 60, replace=False)
    broken.loc[rows, "age"] = 150
    report, verdict = judged(broken)
    assert report.checks[0].violations == 60 and report.checks[0].real_rate == 0
    assert verdict.verdict == "fail" and "adult age" in verdict.reason


def test_no_constraints_is_not_judged():
    body = {"errors": {}, "skipped": {"constraints": "no constraints declared"}}
    assert judge("constraint_violations", {"utility": body}).verdict == "n/a"


# --- options and the CLI ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("disclosure_cli")
    rows = pd.Series(range(300))
    real = pd.DataFrame(
        {"age": 20 + rows % 50, "sex": ["F", "M", "M"] * 100, "hours": 30 + (rows * 7) % 40}
    )
    real.iloc[:150].to_csv(folder / "train.csv", index=False)
    real.iloc[150:].to_csv(folder / "holdout.csv", index=False)
    real.sample(frac=0.5, random_state=1).to_csv(folder / "copy.csv", index=False)
    (folder / "bad.toml").write_text("[[range]]\ncolumn = 'sex'\nmin = 1\n")
    (folder / "latin1.toml").write_bytes("[[range]] # \xe9\n".encode("latin-1"))
    return folder


def _cli(folder, out, *extra):
    args = ["review", "--real", str(folder / "train.csv"), "--holdout", str(folder / "holdout.csv")]
    return main([*args, "--synthetic", str(folder / "copy.csv"), "--out", str(out), "--quiet",
                 *extra])  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--quasi-identifiers", "age", "sexx"], "option quasi_identifiers must be distinct"),
        (["--quasi-identifiers", "age", "age"], "option quasi_identifiers must be distinct"),
        (["--label-leak-columns", "nope"], "option label_leak_columns must be distinct"),
        (["--constraints", "missing.toml"], "option --constraints must be a readable TOML"),
        (["--constraints", "latin1.toml"], "option --constraints must be UTF-8 text"),
        (["--constraints", "bad.toml"], "option constraints, [[range]] #1 column: expected"),
    ],
)
def test_bad_disclosure_options_exit_2_before_computing(small_files, tmp_path, capsys, extra,
                                                        message, monkeypatch):  # fmt: skip
    def never(*args, **kwargs):
        raise AssertionError("computed despite a bad option")

    monkeypatch.setattr("synthreview.review.prepare", never)
    extra = [str(small_files / e) if e.endswith(".toml") else e for e in extra]
    assert _cli(small_files, tmp_path / "o", *extra) == 2
    err = capsys.readouterr().err
    assert message in err and "got" in err and "Traceback" not in err


@pytest.mark.filterwarnings("ignore:no [23]-way marginals")  # one categorical column
def test_review_records_the_new_evidence(small_files):
    review = align(
        read_table(small_files / "train.csv", role="real"),
        {"copy": read_table(small_files / "copy.csv", name="copy", role="synthetic")},
        holdout=read_table(small_files / "holdout.csv", role="holdout"),
    )
    options = ReviewOptions(
        embedding="none", max_attack=50, quasi_identifiers=("age", "sex"), target="sex",
        constraints="[[range]]\ncolumn = 'age'\nmax = 60\n",
    )  # fmt: skip
    report = evaluate(review, sections=["privacy", "utility"], options=options, seed=0)
    out = report.candidates["copy"].to_dict()
    qi = out["privacy"]["quasi_identifiers"]
    assert qi["quasi_identifiers"] == ["age", "sex"] and qi["n_synthetic"] == 150
    assert out["utility"]["answer_key"]["keys"][0]["column"] == "sex"
    assert out["utility"]["constraints"]["checks"][0]["violations"] > 0
    verdicts = {v.rule: v for v in apply_policy(load_policy(), out, kind="table").rules}
    for rule in ("qi_replay", "label_leak", "constraint_violations"):
        assert verdicts[rule].verdict in ("pass", "warn", "fail"), verdicts[rule].reason
    plain = evaluate(review, sections=["privacy", "utility"],
                     options=ReviewOptions(embedding="none", max_attack=50), seed=0)  # fmt: skip
    plain_verdicts = apply_policy(load_policy(), plain.candidates["copy"].to_dict(), kind="table")
    for v in plain_verdicts.rules:
        if v.rule in ("qi_replay", "label_leak", "constraint_violations"):
            assert v.verdict == "n/a" and v.reason.startswith("not applicable: no ")


# --- the Data page -----------------------------------------------------------------------------


def test_data_page_chooses_quasi_identifiers_and_uploads_constraints():
    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parents[1] / "app.py")
    at = AppTest.from_file(app, default_timeout=180).run()
    at.multiselect(key="quasi_identifiers").set_value(["age", "sex", "race"]).run()
    at.multiselect(key="label_leak_columns").set_value(["sex"]).run()
    good = b"[[range]]\ncolumn = 'age'\nmin = 17\nmax = 90\n"
    at.file_uploader(key="constraints_upload").set_value(("c.toml", good, "application/toml"))
    at.run()
    at.button(key="apply_disclosure").click().run()
    assert not at.exception and not at.error
    options = at.session_state["_options"]
    assert options.quasi_identifiers == ("age", "sex", "race")
    assert options.label_leak_columns == ("sex",)
    assert options.constraints == good.decode()
    bad = b"[[range]]\ncolumn = 'agee'\nmin = 1\n"
    at.file_uploader(key="constraints_upload").set_value(("bad.toml", bad, "application/toml"))
    at.run()
    at.button(key="apply_disclosure").click().run()
    (error,) = at.error
    assert "option constraints, [[range]] #1 column" in error.value.replace("\\", "")
    assert at.session_state["_options"].constraints == good.decode()  # kept as it was


# --- the Privacy page ----------------------------------------------------------------------------


@pytest.mark.slow
def test_privacy_page_shows_qi_replay_answer_keys_and_constraints():
    """Two candidates of 200 Adult rows, no embedding, QIs / a leak column / one constraint
    chosen: the page shows the QI table and risk chart, the answer keys and the constraint."""
    from dataclasses import replace

    from synthreview import demo
    from tests.page_helpers import chart_text, run_page

    full = demo.tables(seed=0, n_train=200)
    review = replace(full, synthetic={n: full.synthetic[n] for n in ("noisy_copy", "fresh_sample")})
    options = replace(
        initial_options(review), embedding="none", max_attack=100,
        quasi_identifiers=("age", "sex", "race"), label_leak_columns=("sex",),
        constraints="[[range]]\nname = 'adult age'\ncolumn = 'age'\nmin = 17\nmax = 60\n",
    )  # fmt: skip
    at = run_page("pages/privacy.py", review, options=options, timeout=300)
    assert not at.exception and not at.error
    assert "Quasi-identifiers, answer keys, declared constraints" in [h.value for h in at.subheader]
    cells = [str(v).replace("\\", "") for t in at.table for v in t.value.to_numpy().ravel()]
    assert "age, sex, race" in cells
    assert any(c.startswith("noisy_copy") or c == "noisy_copy" for c in cells)
    assert "adult age" in cells and any(c.startswith("income = ") for c in cells)
    assert any(c.startswith("sex = ") for c in cells)
    assert "fnlwgt" in cells  # sensitive-value replay: the near copy's unique weights
    assert any(c.startswith("race = ") for c in cells)  # the groups side by side
    charts = [chart_text(c) for c in at.get("plotly_chart")]
    assert any("re-identification risk 1 / f_k" in text for text in charts)


# --- report.html ---------------------------------------------------------------------------------


def test_report_html_files_qi_answer_key_and_constraints_with_their_verdicts():
    from synthreview.release.html import render_html
    from tests.test_report_html import HOSTILE, _content

    quasi = quasi_identifier_risk(TRAIN, SYNTH, holdout=HOLD, quasi_identifiers=["age", "sex"])
    evil = HOSTILE[0]
    content = _content()
    content["candidates"][evil] = {
        "privacy": {
            "quasi_identifiers": quasi.to_dict(), "errors": {}, "skipped": {},
            "sensitive_values": sensitive_value_replay(
                TRAIN, SYNTH, holdout=HOLD, columns=["age"], numeric=["age"]
            ).to_dict(),
        },
        "utility": {
            "answer_key": {"keys": [{"column": "income", "error": 0.0, "holdout_error": 0.17,
                                     "leak": 1.0, "depth": 1, "exact": True,
                                     "rule": "income = >50K iff capital_gain > 0"}]},
            "constraints": {"checks": [{"name": "adult age", "kind": "range",
                                        "description": "age in [17, 90]", "violations": 3,
                                        "rows": 7, "rate": 3 / 7, "real_rate": 0.0,
                                        "holdout_rate": 0.0}]},
            "errors": {}, "skipped": {},
        },
    }  # fmt: skip
    content["verdicts"] = {evil: apply_policy(load_policy(), content["candidates"][evil]).to_dict()}
    page = render_html(content, [])
    block = page[page.index("<h2>Quasi-identifiers, answer keys, declared constraints</h2>") :]
    block = block[: block.index("</section>")]
    assert "<h3>&lt;script&gt;alert(1)&lt;/script&gt;</h3>" in block and evil not in page
    assert "<td>age, sex</td>" in block and "2 of 6 (33.3%); holdout 14.3%" in block
    assert "1 (unique): 33.3% / 14.3%" in block
    assert "income = &gt;50K iff capital_gain &gt; 0" in block
    # ages unique in training: 40 and 50; synthetic rows 40, 40 (one value); holdout 50
    assert "<td>age</td><td>1 of 2</td><td>33.3% / 14.3%</td>" in block
    assert "3 of 7 (42.9%)" in block and "rule constraint_violations:" in block
    assert "rule label_leak:" in block and "rule qi_replay:" in block
    assert "Quasi-identifiers, answer keys" not in render_html(_content(), [])


# --- sensitive-value replay --------------------------------------------------------------------


def test_sensitive_values_by_hand():
    train = pd.DataFrame(
        {"amount": [10.0, 10.0, 7.5, 3.0, np.nan], "code": ["a", "b", "b", "c", None]}
    )
    synth = pd.DataFrame({"amount": [7.5, 7.5, 3.0, 10.0], "code": ["a", "z", "c", None]})
    hold = pd.DataFrame({"amount": [3.0, 1.0], "code": ["b", "b"]})
    r = sensitive_value_replay(train, synth, holdout=hold, columns=["amount", "code"],
                               numeric=["amount"])  # fmt: skip
    got = {c.column: c for c in r.columns}
    # amount: unique in training 7.5 and 3.0 (NaN never); synthetic rows 7.5, 7.5, 3.0
    a = got["amount"]
    assert (a.unique_values, a.reproduced, a.rows, a.holdout_rows) == (2, 2, 3, 1)
    assert a.excess == pytest.approx(3 / 4 - 1 / 2)
    assert a.excess_ci == pytest.approx(newcombe_difference(3, 4, 1, 2))
    # code: unique "a" and "c" (None never); synthetic "a", "c"; holdout none
    c = got["code"]
    assert (c.unique_values, c.reproduced, c.rows, c.holdout_rows) == (2, 2, 2, 0)
    assert c.excess == pytest.approx(2 / 4 - 0)
    assert [x.column for x in r.columns] == ["code", "amount"]  # highest excess first


def test_a_training_copy_replays_fnlwgt_and_a_fresh_sample_does_not(adult):
    train, holdout, fresh = adult_split(adult, 0)
    schema = infer_schema(train)
    args = dict(holdout=holdout, columns=schema.analysed, numeric=schema.numeric)
    copy = sensitive_value_replay(train, train, **args)
    assert copy.columns[0].column == "fnlwgt" and copy.columns[0].excess_ci[0] > 0.5
    fresh_r = sensitive_value_replay(train, fresh, **args)
    assert all(c.excess_ci[0] < 0.01 for c in fresh_r.columns)


# --- worst-group membership risk -----------------------------------------------------------------


def test_group_results_by_hand_and_small_groups_pooled():
    from synthreview.metrics.privacy.attack_stats import summarize_attack
    from synthreview.metrics.privacy.groups import group_membership

    # 100 members then 100 non-members; groups: A (60 + 60), B (35 + 35), C (5 + 5)
    group = np.r_[["A"] * 60, ["B"] * 35, ["C"] * 5].tolist()
    members = pd.DataFrame({"g": group})
    nonmembers = pd.DataFrame({"g": group})
    rng = np.random.default_rng(0)
    scores = np.r_[np.r_[np.full(60, 5.0), rng.normal(0, 1, 40)], rng.normal(0, 1, 100)]
    scores[100:160] = np.linspace(-1, 1, 60)  # A's non-members all below A's members
    truth = np.r_[np.ones(100, bool), np.zeros(100, bool)]
    attack = summarize_attack("toy", scores, truth, n_bootstrap=10)
    found = group_membership([attack], members, nonmembers, columns=["g"])
    by = {r.group: r for r in found.results}
    assert set(by) == {"A", "B", "other"} and found.pooled == {"g": ["C"]}
    assert by["A"].auc == 1.0 and by["A"].tpr_at_fpr_1pct == 1.0
    assert (by["A"].n_members, by["A"].n_nonmembers) == (60, 60)
    assert (by["other"].n_members, by["other"].n_nonmembers) == (5, 5)
    assert 0.2 < by["B"].auc < 0.8
    candidate = {"privacy": {"groups": found.to_dict(), "errors": {}, "skipped": {}}}
    verdict = judge("group_mia_tpr_at_fpr_1pct", candidate)
    assert verdict.verdict == "fail" and "g = A, toy" in verdict.reason
    assert "pooled into 'other' (below 30 rows a side): g: C" in verdict.reason
    skipped = {"privacy": {"errors": {}, "skipped": {"groups": "no grouping columns named"}}}
    assert judge("group_mia_tpr_at_fpr_1pct", skipped).verdict == "n/a"


@pytest.mark.slow
def test_one_small_groups_noisy_copies_fail_the_group_rule_not_the_population_rules(adult):
    """Adult 2,000 rows per split: a fresh sample passes every membership rule; the same sample
    with its Amer-Indian-Eskimo rows replaced by noisy copies of that group's training rows (19
    rows, 1 %) passes the population rules and fails group_mia_tpr_at_fpr_1pct (measured: 16x
    chance)."""
    from synthreview.generators.tables import add_noise

    rows = adult.sample(6000, random_state=100).reset_index(drop=True)
    train, holdout, fresh = rows[:2000], rows[2000:4000], rows[4000:].reset_index(drop=True)
    small = train[train["race"] == "Amer-Indian-Eskimo"].reset_index(drop=True)
    noisy = add_noise(small, schema=infer_schema(train), sigma=0.05, seed=0)
    keep = fresh[fresh["race"] != "Amer-Indian-Eskimo"].iloc[: 2000 - len(noisy)]
    planted = pd.concat([keep, noisy], ignore_index=True)
    review = align(train, {"fresh": fresh, "group_copies": planted}, holdout=holdout)
    options = ReviewOptions(embedding="none", groups=("race", "sex"))
    report = evaluate(review, sections=["privacy"], options=options, seed=0)
    verdicts = {
        name: {r.rule: r.verdict for r in apply_policy(load_policy(), c.to_dict()).rules}
        for name, c in report.candidates.items()
    }
    rules = ("mia_auc", "mia_tpr_at_fpr_1pct", "group_mia_tpr_at_fpr_1pct")
    assert [verdicts["fresh"][r] for r in rules] == ["pass", "pass", "pass"]
    assert [verdicts["group_copies"][r] for r in rules] == ["pass", "pass", "fail"]


# --- the audit's drop_qi_unique rule -------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:no [23]-way marginals")  # one categorical column
def test_audit_drops_qi_unique_rows_only_when_asked_and_states_the_cost(small_files):
    from synthreview.release.audit import Thresholds, audit_table, holdout_audit

    review = align(
        read_table(small_files / "train.csv", role="real"),
        {"copy": read_table(small_files / "copy.csv", name="copy", role="synthetic")},
        holdout=read_table(small_files / "holdout.csv", role="holdout"),
    )
    options = ReviewOptions(embedding="none", max_attack=50, quasi_identifiers=("age", "hours"))
    privacy = (
        evaluate(review, sections=["privacy"], options=options, seed=0).candidates["copy"].privacy
    )
    quasi = privacy.quasi_identifiers
    unique = quasi.risk >= 1.0
    assert unique.any() and not unique.all()
    off = audit_table(None, privacy)
    assert not off["drop_qi_unique"].any() and not off.attrs["rules"]["drop_qi_unique"]["active"]
    on = audit_table(None, privacy, Thresholds(drop_qi_unique=True))
    assert on["drop_qi_unique"].to_numpy().tolist() == unique.tolist()
    assert on.attrs["rules"]["drop_qi_unique"]["expected_fpr"] == quasi.holdout_replay_share
    assert "exactly one training person" in on.loc[unique, "reasons"].iloc[0]
    reference = holdout_audit(None, privacy, Thresholds(drop_qi_unique=True))
    assert reference["drop_qi_unique"].mean() == pytest.approx(quasi.holdout_replay_share)
    # per holdout row, in the holdout's input order: its QIs unique in training
    holdout, train = review.holdout.frame, review.real.frame
    counts = train.groupby(["age", "hours"]).size()
    keys = list(zip(holdout["age"], holdout["hours"], strict=True))
    by_hand = [counts.get(k, 0) == 1 for k in keys]
    assert reference["drop_qi_unique"].to_numpy().tolist() == by_hand
    # the Audit page's preview: a tile for the rule where quasi-identifiers were given (switched
    # off or on), none where the review has none (the rule cannot remove a row there)
    from synthreview.release.pipeline import CandidateAudit

    tiles = {
        p.rule: p for p in CandidateAudit(on, reference, Thresholds(drop_qi_unique=True)).preview()
    }
    assert tiles["drop_qi_unique"].active and tiles["drop_qi_unique"].flagged == unique.sum()
    tiles_off = {p.rule for p in CandidateAudit(off, reference, Thresholds()).preview()}
    assert "drop_qi_unique" in tiles_off
    without = off.assign(qi_unique=pd.array([pd.NA] * len(off), dtype="boolean"))
    assert "drop_qi_unique" not in {
        p.rule for p in CandidateAudit(without, reference, Thresholds()).preview()
    }


# --- real records beyond coincidence are never released unremoved (item 6) -----------------------


def test_real_records_warning_means_release_after_curation():
    from synthreview.judgement.decision import decide
    from synthreview.judgement.policy import RuleVerdict, Verdicts

    def verdicts(real_records: str, overall: str) -> Verdicts:
        rule = RuleVerdict("real_records", real_records, 0.002, 0.001, 0.0025, "lower", "copies")
        other = RuleVerdict("mia_auc", "pass", 0.5, 0.6, 0.7, "lower", "auc")
        return Verdicts(overall, (other, rule))

    warned = verdicts("warn", "warn")
    assert decide("c", warned).outcome == "release"  # no curated version: nothing to ship
    after = decide("c", warned, verdicts("pass", "pass"))
    assert after.outcome == "release_after_curation" and after.rule == "real_records"
    assert "real records beyond what a fresh sample repeats" in after.reason
    assert decide("c", warned, verdicts("pass", "fail")).outcome == "do_not_release"
    assert decide("c", verdicts("pass", "pass"), verdicts("pass", "pass")).outcome == "release"


def test_answer_keys_ignore_row_order_when_sampling(adult, monkeypatch):
    import synthreview.metrics.utility.answer_key as answer_key

    monkeypatch.setattr(answer_key, "MAX_ROWS", 500)  # the trees see a sample of each table
    train, holdout, fresh = adult_split(adult, 2)
    schema = infer_schema(train)
    args = dict(columns=["income", "sex"], schema=schema)
    a = answer_keys(train, fresh, holdout=holdout, **args)
    b = answer_keys(train, fresh.sample(frac=1, random_state=3),
                    holdout=holdout.sample(frac=1, random_state=4), **args)  # fmt: skip
    assert a.to_dict() == b.to_dict()
