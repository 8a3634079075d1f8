"""Privacy figures and tables built from real results of the engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from synthreview.encoding import TabularEncoder
from synthreview.figures import privacy as fig
from synthreview.figures.explain import format_metric, format_number
from synthreview.figures.text import markdown_text
from synthreview.io.schema import Schema
from synthreview.judgement.policy import load_policy, parse_policy
from synthreview.judgement.verdicts import VERDICT_STYLE
from synthreview.metrics.privacy.section import evaluate_privacy

SCHEMA = Schema({"age": "numeric", "sex": "categorical"})


@pytest.fixture(scope="module")
def reports():
    rng = np.random.default_rng(0)

    def table(n):
        return pd.DataFrame(
            {"age": rng.normal(40, 10, n).round(1), "sex": rng.choice(["F", "M"], n)}
        )

    real, holdout, fresh = table(300), table(300), table(300)
    encoder = TabularEncoder(SCHEMA).fit(real)
    kwargs = {"schema": SCHEMA, "encoder": encoder, "sensitive": "sex", "max_attack": 200}
    return real, {
        "copy": evaluate_privacy(real, real.copy(), holdout, **kwargs),
        "fresh": evaluate_privacy(real, fresh, holdout, **kwargs),
    }


def test_roc_overlay_has_chance_line_and_one_curve_per_attack(reports):
    _, by_name = reports
    figure = fig.roc_overlay(by_name["copy"], show_reference=False)
    assert isinstance(figure, go.Figure)
    names = [trace.name for trace in figure.data]
    assert names[0] == "chance"
    assert len(names) == 1 + len(by_name["copy"].membership_inference)
    # one short line per attack: its registry label and AUC (the CI is in the attack table)
    expected = [
        f"{fig.attack_label(a.attack)}: AUC {a.auc:.3f}"
        for a in by_name["copy"].membership_inference
    ]
    assert names[1:] == expected
    log_view = fig.roc_overlay(by_name["copy"], log_scale=True)
    assert log_view.layout.xaxis.type == "log"
    assert any(t.name.startswith("holdout-only") for t in log_view.data)


def test_dcr_histogram_has_reference_and_candidates(reports):
    _, by_name = reports
    names = [t.name for t in fig.dcr_histogram(by_name).data]
    assert names == ["holdout → train (reference)", "copy → train", "fresh → train"]


def test_tables_have_one_row_per_candidate_and_part(reports):
    _, by_name = reports
    attacks = fig.attack_table(by_name)
    assert len(attacks) == 2 * len(by_name["copy"].membership_inference)
    assert set(attacks.loc[attacks["candidate"] == "copy", "verdict"]) <= {"fail", "warn", "pass"}
    assert len(fig.attribute_inference_table(by_name)) == 2
    assert set(fig.l_diversity_table(by_name)["column"]) == {"age"}


def test_verdicts_and_colours_come_from_the_policy(reports):
    policy = load_policy()
    auc = policy.rules["mia_auc"]
    assert fig.rule_verdict("mia_auc", auc.pass_at, policy=policy) == "pass"
    assert fig.rule_verdict("mia_auc", (auc.pass_at + auc.fail_at) / 2, policy=policy) == "warn"
    assert fig.rule_verdict("mia_auc", auc.fail_at + 0.01, policy=policy) == "fail"
    assert fig.rule_verdict("mia_auc", float("nan"), policy=policy) == "n/a"
    # TPR at 1 % FPR is judged in multiples of chance (0.01), as the policy rule says
    tpr = policy.rules["mia_tpr_at_fpr_1pct"]
    assert fig.rule_verdict("mia_tpr_at_fpr_1pct", 0.01 * tpr.fail_at + 0.01) == "fail"
    # an advisory rule (DCR share) warns at worst
    assert not policy.rules["dcr_share"].required
    assert fig.rule_verdict("dcr_share", 0.99, policy=policy) == "warn"
    # a stricter policy changes the figure's verdict: the figure has no thresholds of its own
    strict = parse_policy("[rules.mia_auc]\npass = 0.01\nfail = 0.02\n")
    _, by_name = reports
    attack = next(a for a in by_name["fresh"].membership_inference if a.error is None)
    assert fig.attack_verdict(attack, policy=strict) == "fail"
    table = fig.attack_table({"fresh": by_name["fresh"]}, policy=strict)
    assert set(table.loc[table["error"] == "", "verdict"]) == {"fail"}
    for verdict in ("pass", "warn", "fail", "n/a"):
        assert fig.verdict_color(verdict) == VERDICT_STYLE[verdict].accent


def test_closest_pairs_puts_copies_first_and_lists_positions_only(reports):
    real, by_name = reports
    report = by_name["copy"]
    rows = fig.riskiest_rows(report, n=3)
    assert report.dcr.exact_copy[rows].all()
    listed = fig.closest_pairs(real, real, report, rows=rows, columns=["age", "sex"])
    assert list(listed["exact copy"]) == ["yes"] * 3
    assert list(listed["equal cells"]) == ["2 of 2"] * 3
    # positions, a formatted distance and counts: no cell value of a training row
    assert not set(real["age"].astype(str)) & set(listed.astype(str).to_numpy().ravel())


def test_closest_pair_masks_training_values_unless_raw(reports):
    """Masked like the most exposed records: numbers as decile intervals of the training
    column, rare levels as (rare); equal cells highlighted; raw values only on request."""
    real, by_name = reports
    report = by_name["copy"]
    row = int(fig.riskiest_rows(report, n=1)[0])
    t = int(report.dcr.nearest_train_index[row])
    masked = fig.closest_pair(real, real, report, row=row, columns=["age", "sex"],
                              numeric=["age"])  # fmt: skip
    cells = masked.data
    assert list(cells.index) == ["age", "sex"] and list(cells["equal"]) == ["yes", "yes"]
    age = cells.loc["age", f"training #{t}"]
    assert age.startswith("[") and str(real["age"].iloc[t]) not in age
    low, high = (float(v) for v in age.strip("[]").split(", "))
    assert low <= real["age"].iloc[t] <= high
    css = masked.to_html().split("</style>")[0]
    assert css.count("_row") == 2 * 2  # both cells of both equal columns
    raw = fig.closest_pair(real, real, report, row=row, columns=["age", "sex"], numeric=["age"],
                           raw=True).data  # fmt: skip
    assert float(raw.loc["age", f"training #{t}"]) == real["age"].iloc[t]  # as written
    assert raw.loc["sex", f"training #{t}"] == real["sex"].iloc[t]


def test_wp29_table_uses_registry_labels_and_formats(reports):
    _, by_name = reports
    table = fig.wp29_table(by_name)
    assert "singling out, one column (WP29)" in set(table["risk"])
    assert any(r.startswith("attribute inference (WP29): ") for r in table["risk"])
    assert not any("_" in r for r in table["risk"])  # no ids
    cells = table.drop(columns="attacks").to_numpy().ravel()
    assert all(isinstance(c, str) and "None" not in c and "nan" not in c for c in cells)
    assert len(table.columns) <= 5


def test_reading_tables_write_numbers_and_escape_text(reports):
    """What the page hands to st.table: one row per attack (its label, not its id, as the
    index), numbers in the registry's format, text Markdown-escaped, no n/a column."""
    _, by_name = reports
    report = by_name["copy"]
    attacks = fig.attack_reading_table(report)
    assert len(attacks) == len(report.membership_inference)
    assert set(attacks.index) == {markdown_text(fig.attack_label(a.attack))
                                  for a in report.membership_inference}  # fmt: skip
    tpr = markdown_text("TPR @ FPR 1%")
    expected = sorted((a.tpr_at_fpr_1pct for a in report.membership_inference), reverse=True)
    assert list(attacks[tpr]) == [format_metric("mia_tpr_at_fpr_1pct", v) for v in expected]
    auc = attacks[markdown_text("AUC (95 % CI)")]
    assert all(" \\(" in c and "nan" not in c for c in auc)
    for table in (attacks, fig.wp29_reading_table(by_name),
                  fig.attribute_inference_reading_table(by_name),
                  fig.l_diversity_reading_table(by_name)):  # fmt: skip
        cells = table.to_numpy().ravel().tolist()
        assert all(isinstance(c, str) and c not in ("None", "nan") for c in cells), table
    inference = fig.attribute_inference_reading_table(by_name)
    assert list(inference.index) == ["copy", "fresh"]


def test_most_exposed_records_read_as_columns_and_stay_masked(reports):
    """One column per record (most exposed first), fields as rows, five records a table; the
    values are the engine's masked ones (decile intervals), escaped for Markdown."""
    real, by_name = reports
    found = by_name["copy"].vulnerable
    tables = fig.vulnerable_reading_tables(by_name["copy"], n=7)
    assert [len(t.columns) for t in tables] == [5, 2]
    assert [c for t in tables for c in t.columns] == [f"row {r}" for r in found.rows[:7]]
    first = tables[0]
    assert list(first.index) == [markdown_text("p-value"), "attack", "age", "sex"]
    ages = first.loc["age"]
    assert all(a.startswith("\\[") for a in ages)  # an interval, never the raw value
    raw = {markdown_text(str(v)) for v in real["age"].iloc[found.rows[:5]]}
    assert not raw & set(ages)
    p_values = [format_number(p) for p in found.p_value[:5]]
    assert list(first.loc[markdown_text("p-value")]) == p_values
    assert fig.vulnerable_reading_tables(by_name["copy"], n=0) == []


def test_person_and_shadow_tables_are_moved_off_the_page():
    """Built here, not on the page: the person table drops an empty error column, the shadow
    table answers yes/no."""
    from types import SimpleNamespace as NS

    attack = NS(attack="nndr", auc=0.61234567, tpr_at_fpr_1pct=0.05, tpr_at_fpr_1pct_ci=(0.01,
                0.1), tpr_at_fpr_01pct=0.0, error=None)  # fmt: skip
    row = NS(auc=0.5555555, tpr_at_fpr_1pct=0.02)
    person = fig.person_reading_table(NS(attacks=[attack]), {"nndr": row})
    assert list(person.index) == [markdown_text(fig.attack_label("nndr"))]
    assert "error" not in person.columns
    assert person.iloc[0].tolist()[:3] == ["0.612", "0.050", markdown_text("0.010 to 0.100")]
    target = NS(table="real", row=3, member=True, chosen="exposed", auc=0.75, tpr=NS(value=0.5),
                candidate_score=0.123456, candidate_called=False)  # fmt: skip
    shadow = fig.shadow_reading_table(NS(targets=[target]))
    assert list(shadow.index) == ["real row 3"]
    assert shadow.iloc[0].tolist() == ["yes", "exposed", "0.750", "0.500", "0.123", "no"]
