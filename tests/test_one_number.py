"""One number per claim (issue 38): a rule's value, judged value, line and verdict are written by
one function (``figures.explain.rule_reading``) from the judgement's own record, and a
candidate's copies are counted by one function (``release.audit.copy_counts``)."""

from __future__ import annotations

import pandas as pd
import pytest

from synthreview.figures.audit import scorecard_frame
from synthreview.figures.explain import (
    headline_readings,
    readings_markdown,
    rule_reading,
    section_readings,
)
from synthreview.figures.text import markdown_text
from synthreview.judgement.policy import apply_policy, judge_rule, load_policy
from synthreview.release.audit import (
    Thresholds,
    audit_table,
    copy_counts,
    holdout_audit,
    real_records,
    rule_summary,
)
from synthreview.release.bundle import AuditRecord
from synthreview.release.html import render_html
from synthreview.release.verdicts import copy_excess
from tests.test_audit import make_evidence


def _attacks(best_auc: float, n: int = 13) -> list[dict]:
    """``n`` attacks on 50 members and 50 non-members; the first reaches ``best_auc`` with a
    wide interval, the others sit at 0.55."""
    return [
        {
            "attack": f"attack_{i}",
            "auc": best_auc if i == 0 else 0.55,
            "auc_ci": [best_auc - 0.15, best_auc + 0.15] if i == 0 else [0.45, 0.65],
            "tpr_at_fpr_1pct": 0.06,
            "n_members": 50,
            "n_nonmembers": 50,
        }
        for i in range(n)
    ]


def _candidate(best_auc: float = 0.708) -> dict:
    return {
        "privacy": {
            "membership_inference": _attacks(best_auc),
            "dcr": {"share_closer_to_train": 0.53, "n_synthetic": 200},
        },
        "utility": {"discriminator_auc": 0.62, "holdout_reference": {"discriminator_auc": 0.52}},
    }


def _verdict(rule: str, candidate: dict):
    policy = load_policy()
    return judge_rule(policy.rules[rule], candidate, kind="table", missing="incomplete")


def test_a_point_beyond_the_line_beside_a_pass_carries_the_bound_and_the_sentence():
    verdict = _verdict("mia_auc", _candidate(0.708))
    # the judgement's own record: the point, the bound it judged and the point's judged value
    assert verdict.verdict == "pass" and verdict.measured == pytest.approx(0.708)
    assert verdict.bound == pytest.approx(verdict.value) and verdict.bound < 0.6
    assert verdict.point == pytest.approx(0.708) and verdict.point > verdict.fail_at
    reading = rule_reading(verdict)
    assert reading.value == "0.708"
    assert reading.judged == f"judged on the 95 % lower bound {verdict.bound:.3f} over 13 " \
        "attacks (Bonferroni)"  # fmt: skip
    assert reading.judged_value == f"{verdict.bound:.3f}"
    assert reading.line == "passes at most 0.6, fails above 0.7" and reading.verdict == "PASS"
    assert "0.708 alone would fail" in reading.why and "bound" in reading.why
    assert reading.text.startswith("0.708; judged on the 95 % lower bound")
    assert reading.why in reading.text
    # the record filed in report.json reads the same
    assert rule_reading(verdict.to_dict()) == reading


def test_a_point_within_its_verdict_needs_no_sentence():
    failing = _verdict("mia_auc", _candidate(0.95))
    reading = rule_reading(failing)
    assert failing.verdict == "fail" and reading.verdict == "FAIL" and reading.why == ""
    assert "judged on the 95 % lower bound" in reading.judged
    # a rule judged without a bound: its judged quantity in the rule's own units
    discriminator = rule_reading(_verdict("discriminator_auc", _candidate()))
    assert discriminator.value == "0.620"
    assert discriminator.judged == "judged as a distance from 0.5 of 0.120"
    assert discriminator.why == ""
    # multiples of chance: the judged number says so
    tpr = rule_reading(_verdict("mia_tpr_at_fpr_1pct", _candidate()))
    assert tpr.value == "0.060" and tpr.judged_value.endswith("× chance")
    assert "fails above 10× chance" in tpr.line


def test_an_advisory_rule_beyond_its_fail_line_says_it_only_warns(tmp_path):
    policy_file = tmp_path / "advisory.toml"
    policy_file.write_text("[rules.discriminator_auc]\nrequired = false\n", encoding="utf-8")
    policy = load_policy(policy_file)
    candidate = {"utility": {"discriminator_auc": 0.97}}
    verdict = judge_rule(
        policy.rules["discriminator_auc"], candidate, kind="table", missing="incomplete"
    )
    reading = rule_reading(verdict)
    assert verdict.verdict == "warn" and reading.verdict == "WARN"
    assert "does not require this rule" in reading.why


def test_key_numbers_and_scorecard_state_the_same_judged_value():
    verdicts = apply_policy(load_policy(), _candidate(0.708), kind="table")
    readings = headline_readings(verdicts)
    assert readings == headline_readings(verdicts.to_dict())
    card = scorecard_frame({"copula": verdicts})
    for key, rule in (("mia_auc", "mia_auc"), ("discriminator_auc", "discriminator_auc")):
        cell = readings[key].short
        assert rule_reading(verdicts[rule]).short == cell
        assert markdown_text(cell) in list(card.iloc[:, 0])
    assert "judged on the 95 % lower bound" in readings["mia_auc"].short


def _audit(**thresholds) -> tuple[pd.DataFrame, pd.DataFrame]:
    fidelity, privacy = make_evidence()
    chosen = Thresholds(**thresholds)
    return (
        audit_table(fidelity, privacy, chosen),
        holdout_audit(fidelity, privacy, chosen),
    )


def test_copy_counts_agree_with_every_rule_that_counts_copies():
    audit, reference = _audit()
    counts = copy_counts(audit)
    found = real_records(audit, reference)
    excess = copy_excess(audit, reference)
    assert counts.n_rows == 6 == found.n_rows
    assert (counts.exact_training, counts.exact_holdout) == (found.in_training, found.in_holdout)
    assert counts.real_records == found.matched == 1
    # what the audit_copies rule counts, and what the Audit page's "removed by any rule" tile
    copies = audit[["drop_unauthentic", "drop_too_close", "drop_exact_copy"]].any(axis=1)
    assert counts.flagged_as_copies == excess.flagged == int(copies.sum()) >= 1
    assert counts.removed == rule_summary(audit).loc["any", "flagged"] == int(audit.removed.sum())
    assert counts.near_copies is None  # the distance rule is off by default
    assert counts.unauthentic == int(audit["drop_unauthentic"].sum())
    lines = dict(counts.rows())
    assert lines["removed by any rule"] == str(counts.removed)
    assert lines["near copies (closer to training than fresh rows)"] == "off"
    assert f"{counts.removed} removed by any rule" in counts.sentence()
    # the record files the same counts
    record = AuditRecord(audit, reference, audit_thresholds(audit), excess).to_dict()
    assert record["copy_counts"] == counts.to_dict()


def audit_thresholds(audit: pd.DataFrame) -> Thresholds:
    return Thresholds(**{k: v for k, v in audit.attrs["thresholds"].items()
                         if k in Thresholds.__dataclass_fields__})  # fmt: skip


def test_copy_counts_read_rows_that_are_records_whatever_is_removed():
    on, _ = _audit(drop_too_close=True)
    assert copy_counts(on).near_copies == int(on["drop_too_close"].sum())
    off, _ = _audit(drop_exact_copies=False)
    counts = copy_counts(off)
    # exact copies are counted from the row hashes even when their rule removes nothing
    assert counts.exact_training == 1 and not off["drop_exact_copy"].any()
    # a hand-made table: rows equal to training, to the holdout, to both
    table = pd.DataFrame(
        {
            "exact_copy": [True, False, True, False],
            "holdout_copy": [False, True, True, pd.NA],
            "drop_unauthentic": [False, False, False, True],
            "drop_too_close": [False] * 4,
            "drop_exact_copy": [True, False, True, False],
            "removed": [True, True, True, True],
        }
    )
    table.attrs["rules"] = {"drop_too_close": {"active": False}}
    counts = copy_counts(table)
    assert (counts.exact_training, counts.exact_holdout, counts.real_records) == (2, 2, 3)
    assert (counts.flagged_as_copies, counts.removed, counts.near_copies) == (3, 4, None)
    assert counts.unauthentic == 1


def test_report_html_states_the_judged_value_and_the_copy_counts():
    audit, reference = _audit()
    excess = copy_excess(audit, reference)
    verdicts = apply_policy(load_policy(), _candidate(0.708), kind="table")
    content = {
        "candidates": {"copula": _candidate(0.708)},
        "verdicts": {"copula": verdicts.to_dict()},
        "policy": load_policy().to_dict(),
        "audit": {"copula": AuditRecord(audit, reference, Thresholds(), excess).to_dict()},
    }
    page = render_html(content, [])
    reading = rule_reading(verdicts["mia_auc"])
    assert reading.short in page and reading.line in page
    assert reading.why in page  # the sentence beside the PASS
    counts = copy_counts(audit)
    assert (
        f"{counts.real_records} of {counts.n_rows} rows equal a real record "
        f"({counts.exact_training} in training, {counts.exact_holdout} in the holdout); "
        f"{counts.flagged_as_copies} flagged as copies; {counts.removed} removed by any rule"
    ) in page


def test_section_pages_list_their_rules_in_the_same_words():
    verdicts = apply_policy(load_policy(), _candidate(0.708), kind="table")
    utility = section_readings(verdicts, "utility")
    labels = [label for label, _ in utility]
    assert "discriminator AUC" in labels
    assert all(r.key != "n/a" for _, r in utility)
    assert not any(label == "MIA AUC (worst attack)" for label in labels)
    text = readings_markdown("*copula*", verdicts, ("utility", "privacy"))
    assert text.startswith(f"**{markdown_text('*copula*')}**")
    assert markdown_text(rule_reading(verdicts["mia_auc"]).text) in text
    assert markdown_text(rule_reading(verdicts["discriminator_auc"]).text) in text
    assert readings_markdown("x", verdicts, "glucose") == ""  # no trace rule applies to a table
