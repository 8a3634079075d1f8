"""Per-subject privacy of traces and the trace audit rules (issue 17, items 6 and 7)."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import DataError, UndefinedMetricWarning
from synthreview.io.traces import Traces
from synthreview.metrics.glucose.plausibility import (
    SENSOR_RANGES,
    plausibility_samples,
    trace_plausibility,
)
from synthreview.metrics.glucose.subjects import subject_privacy
from synthreview.metrics.glucose.trace_rules import TRACE_RULES, trace_rule_columns
from synthreview.release.audit import (
    Thresholds,
    apply_thresholds,
    audit_table,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from tests.test_audit import DCR, Privacy

N_STEPS = 4


def _traces(levels: list[float], ids: list[str], name: str) -> Traces:
    """Constant traces: the RMS distance between two of them is the difference of levels."""
    values = np.repeat(np.asarray(levels, float)[:, None], N_STEPS, axis=1)
    return Traces.from_array(values, name=name, source_ids=ids)


@pytest.fixture
def tiny():
    real = _traces([100, 160, 180, 230, 300], ["A", "A", "B", "B", "E"], "real")
    holdout = _traces([120, 260, 150, 330], ["C", "C", "D", "D"], "holdout")
    synthetic = _traces([100, 205], ["s1", "s2"], "syn")
    return real, synthetic, holdout


def test_subject_auc_by_hand(tiny) -> None:
    # window distances to the closest synthetic trace (100, 205):
    # members A: 0, 45; B: 25, 25; E: 95; non-members C: 20, 55; D: 50, 125
    result = subject_privacy(*tiny)
    table = result.subjects.set_index("subject")
    assert table["dcr_mg_dl"].to_dict() == pytest.approx(
        {"A": 0.0, "B": 25.0, "C": 20.0, "D": 50.0, "E": 95.0}
    )
    # max aggregation: score = -min distance; member beats non-member in (A,C) (A,D) (B,D)
    assert result.aggregate == "max"
    assert result.subject_auc == pytest.approx(3 / 6)
    # per window, 14 of 20 member/non-member pairs put the member closer
    assert result.window_auc == pytest.approx(14 / 20)
    mean = subject_privacy(*tiny, aggregate="mean")  # A 22.5, B 25, E 95 vs C 37.5, D 87.5
    assert mean.subject_auc == pytest.approx(4 / 6)
    assert (result.n_member_subjects, result.n_nonmember_subjects) == (3, 2)
    assert result.member_dcr_median == pytest.approx(25.0)
    assert result.nonmember_dcr_median == pytest.approx(35.0)
    # scale = median holdout distance 52.5; A's window at 0 < 0.2 * 52.5 is reproduced
    assert result.scale_mg_dl == pytest.approx(52.5)
    assert result.memorised == ("A",)
    assert table.loc["A", "n_reproduced"] == 1 and table.loc["A", "role"] == "member"
    # leave-one-out: no holdout window comes within 0.2 of the others' median
    assert result.expected_window_fpr == 0.0 and result.expected_subject_fpr == 0.0
    syn = result.synthetic
    assert syn["nearest_subject"].tolist() == ["A", "B"]
    assert syn["from_memorised"].tolist() == [True, False]
    assert syn["reproduces"].tolist() == [True, False]


def _subjects(n_subjects: int, days: int, seed: int, first: int = 0):
    """Simulated CGM days: a level per person, a mean-reverting walk and meal bumps per day."""
    rng = np.random.default_rng(seed)
    values, ids = [], []
    t = np.arange(288)
    for s in range(n_subjects):
        level = rng.normal(150, 25)
        for _ in range(days):
            g = np.empty(288)
            g[0] = level + rng.normal(0, 20)
            for i in range(1, 288):
                g[i] = g[i - 1] + 0.05 * (level - g[i - 1]) + rng.normal(0, 3)
            meals = rng.integers(0, 250, 3)
            g += sum(50 * np.exp(-0.5 * ((t - m - 12) / 8) ** 2) for m in meals)
            values.append(np.clip(g, 40, 400))
            ids.append(f"P{first + s}")
    return np.array(values), ids


@pytest.fixture(scope="module")
def cohort():
    real_v, real_ids = _subjects(5, 6, seed=1)
    hold_v, hold_ids = _subjects(3, 6, seed=2, first=5)
    fresh_v, _ = _subjects(4, 6, seed=3, first=8)
    real = Traces.from_array(real_v, name="real", source_ids=real_ids)
    holdout = Traces.from_array(hold_v, name="holdout", source_ids=hold_ids)
    fresh = Traces.from_array(fresh_v, name="fresh")
    noise = np.random.default_rng(4).normal(0, 2, (6, 288))
    copies = np.r_[real_v[0:3], real_v[6:9]] + noise  # 3 days each of P0 and P1
    memorising = Traces.from_array(np.r_[fresh_v[:18], copies], name="memorising")
    return real, holdout, fresh, memorising


def test_memorising_candidate_flags_its_subjects(cohort) -> None:
    real, holdout, _, memorising = cohort
    result = subject_privacy(real, memorising, holdout)
    assert result.memorised == ("P0", "P1")
    table = result.subjects.set_index("subject")
    assert table.loc[["P0", "P1"], "n_reproduced"].tolist() == [3, 3]
    # every copy is drawn from a memorised subject; the audit rule removes all six
    assert result.synthetic["from_memorised"].to_numpy()[18:].all()
    assert result.synthetic["reproduces"].sum() == 6
    # the two copied persons are the closest of all: per-subject AUC above chance
    assert result.subject_auc > 0.5
    assert table.loc["P0", "dcr_mg_dl"] < 3 and table.loc["P1", "dcr_mg_dl"] < 3


def test_fresh_candidate_flags_no_subject(cohort) -> None:
    real, holdout, fresh, _ = cohort
    result = subject_privacy(real, fresh, holdout)
    assert result.memorised == ()
    assert not result.synthetic["from_memorised"].any()
    assert result.expected_window_fpr == 0.0
    assert result.subject_auc == pytest.approx(
        # recomputed from the per-subject table with the max aggregation
        _auc_by_pairs(result.subjects)
    )


def _auc_by_pairs(subjects: pd.DataFrame) -> float:
    member = subjects.loc[subjects["role"] == "member", "score"].to_numpy()
    other = subjects.loc[subjects["role"] == "non-member", "score"].to_numpy()
    wins = (member[:, None] > other[None, :]).sum() + 0.5 * (member[:, None] == other).sum()
    return wins / (len(member) * len(other))


def test_synthetic_person_with_a_copied_day_loses_every_day(cohort) -> None:
    real, holdout, fresh, _ = cohort
    values = np.r_[fresh.values[:4], real.values[:1]]
    ids = ["g1", "g1", "g2", "g3", "g1"]  # synthetic person g1: two fresh days and a copy
    candidate = Traces.from_array(values, name="persons", source_ids=ids)
    result = subject_privacy(real, candidate, holdout)
    assert result.memorised == ("P0",)
    assert result.synthetic["from_memorised"].tolist() == [True, True, False, False, True]


def test_shared_ids_leave_subject_auc_undefined(tiny) -> None:
    real, synthetic, _ = tiny
    holdout = _traces([120, 260], ["A", "B"], "holdout")
    with pytest.warns(UndefinedMetricWarning, match="per-subject AUC needs"):
        result = subject_privacy(real, synthetic, holdout)
    assert np.isnan(result.subject_auc) and result.n_shared_subjects == 2
    assert "2 ids on both sides" in result.note
    assert np.isfinite(result.window_auc)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"aggregate": "median"}, "aggregate must be one of"),
        ({"copy_ratio": 0.0}, "copy_ratio must be in"),
        ({"copy_ratio": 0.3, "subject_ratio": 0.2}, "subject_ratio must be in"),
    ],
)
def test_subject_privacy_bad_options(tiny, kwargs, match) -> None:
    with pytest.raises(DataError, match=match):
        subject_privacy(*tiny, **kwargs)


def test_subject_privacy_needs_two_holdout_traces(tiny) -> None:
    real, synthetic, _ = tiny
    with pytest.raises(DataError, match="at least 2 holdout traces"):
        subject_privacy(real, synthetic, _traces([120], ["C"], "h"))


# ---------------------------------------------------------------- plausibility


def test_sensor_range_flags_by_hand() -> None:
    g = np.full((3, 12), 120.0)
    g[1, 5] = 401.0  # above Dexcom's 400, inside Libre's 500
    g[2, 0] = 39.0  # below both
    out = plausibility_samples(g)
    assert out["outside_range"].tolist() == [False, True, True]
    assert out["n_outside_range"].tolist() == [0, 1, 1]
    assert out["glucose_max"].tolist() == [120.0, 401.0, 120.0]
    libre = plausibility_samples(g, sensor_range_mg_dl=SENSOR_RANGES["libre"])
    assert libre["outside_range"].tolist() == [False, False, True]


def test_rate_flags_by_hand() -> None:
    t = np.arange(12)
    fast = 100 + np.minimum(t, 6) * (200 / 6)  # 200 mg/dL in 30 min: 6.67 mg/dL/min
    slow = 100 + np.minimum(t, 6) * (170 / 6)  # 170 mg/dL in 30 min: 5.67 mg/dL/min
    spike = np.full(12, 150.0)
    spike[4] = 250  # one jumpy reading: 100 mg/dL and back, net 0 over 30 min
    out = plausibility_samples(np.stack([fast, slow, spike]))
    assert out["max_rate_mg_dl_min"].to_numpy() == pytest.approx([200 / 30, 170 / 30, 100 / 30])
    assert out["implausible_rate"].tolist() == [True, False, False]
    # over 15 minutes the slow rise is 85 / 15 = 5.67 as well; a 5 mg/dL/min limit flags both
    strict = plausibility_samples(np.stack([fast, slow]), max_rate_mg_dl_min=5.0,
                                  rate_window_minutes=15)  # fmt: skip
    assert strict["implausible_rate"].tolist() == [True, True]


def test_missing_readings_never_flag() -> None:
    g = np.full((2, 8), np.nan)
    g[1, :] = 120.0
    g[1, 7] = np.nan
    out = plausibility_samples(g)
    assert np.isnan(out.loc[0, "max_rate_mg_dl_min"]) and np.isnan(out.loc[0, "glucose_min"])
    assert out["outside_range"].tolist() == [False, False]
    assert out["implausible_rate"].tolist() == [False, False]


def test_plausibility_report_states_the_rate_on_real_data() -> None:
    real = np.full((4, 12), 120.0)
    holdout = np.full((5, 12), 120.0)
    holdout[0, 3] = 420.0  # one fresh day a Dexcom could not have written: 20 %
    synthetic = np.full((2, 12), 120.0)
    synthetic[1, 2] = 30.0
    report = trace_plausibility(real, synthetic, holdout)
    assert report.outside_range_share == 0.5 and report.reference == "holdout"
    assert report.reference_outside_range_share == pytest.approx(0.2)
    assert trace_plausibility(real, synthetic).reference == "real"
    assert set(report.to_dict()) >= {"sensor_range_mg_dl", "reference_implausible_rate_share"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sensor_range_mg_dl": (400, 40)}, "sensor_range_mg_dl must be finite"),
        ({"sensor_range_mg_dl": "x"}, "sensor_range_mg_dl must be"),
        ({"max_rate_mg_dl_min": 0}, "max_rate_mg_dl_min must be > 0"),
        ({"rate_window_minutes": 12}, "rate_window_minutes must be a positive multiple"),
    ],
)
def test_plausibility_bad_options(kwargs, match) -> None:
    with pytest.raises(DataError, match=match):
        plausibility_samples(np.full((2, 12), 120.0), **kwargs)


# ---------------------------------------------------------------- audit rules


def _glucose(real, synthetic, holdout):
    return types.SimpleNamespace(
        plausibility=trace_plausibility(real, synthetic, holdout),
        subject_privacy=subject_privacy(real, synthetic, holdout),
    )


def test_audit_drops_implausible_and_memorised_rows(cohort) -> None:
    real, holdout, _, memorising = cohort
    values = memorising.values.copy()
    values[0, 10] = 450.0  # outside the sensor range
    values[1, 100:107] = 100.0 + np.arange(7) * 35.0  # 210 mg/dL in 30 minutes
    candidate = Traces.from_array(values, name="bad")
    glucose = _glucose(real, candidate, holdout)
    n = len(values)
    privacy = Privacy(DCR(np.ones(n), None, np.zeros(n, bool), np.ones(5)))
    audit = audit_table(None, privacy, Thresholds(alpha=None), traces=trace_rule_columns(glucose))
    assert audit["drop_outside_sensor_range"].tolist() == [True] + [False] * (n - 1)
    # the 450 reading is also a jump of about 300 mg/dL within 30 minutes
    assert np.flatnonzero(audit["drop_implausible_rate"]).tolist() == [0, 1]
    assert audit["drop_memorised_subject"].to_numpy()[18:].all()
    assert audit["removed"].to_numpy()[[0, 1, *range(18, 24)]].all()
    assert "outside 40-400 mg/dL" in audit.loc[0, "reasons"]
    assert "mg/dL/min over 30 min" in audit.loc[1, "reasons"]
    assert "subject 'P0'" in audit.loc[18, "reasons"]
    rules = audit.attrs["rules"]
    assert rules["drop_outside_sensor_range"]["expected_fpr"] == 0.0
    assert rules["drop_memorised_subject"]["expected_fpr"] == 0.0
    assert rules["drop_implausible_rate"]["threshold"] == 6.0
    summary = rule_summary(audit)
    assert summary.loc["drop_memorised_subject", "label"] == TRACE_RULES["drop_memorised_subject"]
    assert summary.loc["any", "flagged"] == int(audit["removed"].sum())
    assert "drop_memorised_subject" in rule_overlaps(audit).columns
    # switched off, the flags stay as evidence but remove nothing; back on, they remove again
    off = apply_thresholds(audit, Thresholds(alpha=None, drop_implausible=False,
                                             drop_memorised_subjects=False))  # fmt: skip
    assert not off["removed"].any() and off["drop_memorised_subject_flag"].to_numpy()[18:].all()
    again = apply_thresholds(off, Thresholds(alpha=None))
    assert again["removed"].tolist() == audit["removed"].tolist()


def test_holdout_audit_carries_the_plausibility_rules(cohort) -> None:
    real, holdout, fresh, _ = cohort
    glucose = _glucose(real, fresh, holdout)
    m = holdout.n_traces
    privacy = Privacy(DCR(np.ones(fresh.n_traces), None, np.zeros(fresh.n_traces, bool),
                          np.ones(m)))  # fmt: skip
    reference = holdout_audit(None, privacy, Thresholds(alpha=None),
                              traces=trace_rule_columns(glucose, holdout=True))  # fmt: skip
    assert len(reference) == m and not reference["drop_memorised_subject"].any()
    audit = audit_table(None, privacy, Thresholds(alpha=None), traces=trace_rule_columns(glucose))
    assert not audit["removed"].any()  # a fresh candidate of plausible traces keeps every row
    summary = rule_summary(audit, reference)
    assert summary.loc["drop_implausible_rate", "reference_share"] == 0.0


def test_trace_evidence_must_match_the_rows(cohort) -> None:
    real, holdout, fresh, _ = cohort
    glucose = _glucose(real, fresh, holdout)
    privacy = Privacy(DCR(np.ones(3), None, np.zeros(3, bool), np.ones(3)))
    with pytest.raises(DataError, match="one per audited trace"):
        audit_table(None, privacy, Thresholds(alpha=None), traces=trace_rule_columns(glucose))


def test_no_glucose_evidence_adds_no_rule() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        columns, rules = trace_rule_columns(None)
    assert columns.empty and rules == {}


def test_dashboard_tables_of_subjects_and_plausibility(tiny) -> None:
    from synthreview.figures.glucose import plausibility_table, subject_privacy_table, subject_rows

    real, synthetic, holdout = tiny
    result = types.SimpleNamespace(
        subject_privacy=subject_privacy(real, synthetic, holdout),
        plausibility=trace_plausibility(real, synthetic, holdout),
        privacy=None,
    )
    table = subject_privacy_table({"cand": result, "failed": types.SimpleNamespace()})
    assert table["candidate"].tolist() == ["cand"]
    assert table.loc[0, "subject AUC (max)"] == pytest.approx(0.5)
    assert table.loc[0, "memorised subjects"] == "A"
    rows = subject_rows({"cand": result})
    assert rows.columns[0] == "candidate" and len(rows) == 5
    shares = plausibility_table({"cand": result})
    assert shares["source"].tolist() == ["cand", "holdout (expected rate)"]


def test_leave_one_out_medians_match_brute_force() -> None:
    from synthreview.metrics.glucose.subjects import leave_one_out_medians

    rng = np.random.default_rng(0)
    for n in (2, 3, 4, 7, 10):
        for _ in range(20):
            x = rng.integers(0, 4, n).astype(float)  # ties on purpose
            brute = [np.median(np.delete(x, i)) for i in range(n)]
            assert leave_one_out_medians(x) == pytest.approx(brute)
    assert np.isnan(leave_one_out_medians(np.array([1.0]))).all()
