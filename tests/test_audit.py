"""Audit table, thresholds, rule overlaps and curation: hand-computed cases, file round trips."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import ConfigError, DataError
from synthreview.io.tables import align, read_table
from synthreview.release.audit import (
    RULES,
    Thresholds,
    apply_thresholds,
    audit_table,
    default_thresholds,
    holdout_audit,
    rule_overlaps,
    rule_summary,
)
from synthreview.release.curation import curate, curated_review
from synthreview.release.export import curated_csv_bytes, curated_parquet_bytes


# Duck-typed stand-ins holding the contract fields of FidelityReport.samples / PrivacyReport.dcr
@dataclass(frozen=True)
class Samples:
    alpha_level: np.ndarray
    authentic: np.ndarray


@dataclass(frozen=True)
class Fidelity:
    samples: Samples


@dataclass(frozen=True)
class DCR:
    synthetic_to_train: np.ndarray
    synthetic_to_holdout: np.ndarray | None
    exact_copy: np.ndarray
    holdout_to_train: np.ndarray


@dataclass(frozen=True)
class Privacy:
    dcr: DCR


def make_evidence() -> tuple[Fidelity, Privacy]:
    fidelity = Fidelity(
        Samples(
            alpha_level=np.array([0.10, 0.50, 0.97, 0.99, 0.20, np.nan]),
            authentic=np.array([True, False, True, False, True, True]),
        )
    )
    privacy = Privacy(
        DCR(
            synthetic_to_train=np.array([0.0, 1.0, 2.0, 0.05, 3.0, 1.0]),
            synthetic_to_holdout=np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
            exact_copy=np.array([True, False, False, False, False, False]),
            holdout_to_train=np.arange(101, dtype=float),  # 1st percentile = 1.0
        )
    )
    return fidelity, privacy


def test_thresholds_validate_their_range():
    with pytest.raises(ConfigError, match="alpha"):
        Thresholds(alpha=0.0)
    with pytest.raises(ConfigError, match="alpha"):
        Thresholds(alpha=1.5)
    with pytest.raises(ConfigError, match="min_train_distance"):
        Thresholds(min_train_distance=-1.0)
    assert Thresholds(alpha=None).alpha is None


def test_default_distance_is_low_percentile_of_holdout_to_train():
    _, privacy = make_evidence()
    assert default_thresholds(privacy).min_train_distance == pytest.approx(1.0)
    assert default_thresholds(privacy, percentile=10).min_train_distance == pytest.approx(10.0)
    assert default_thresholds(None).min_train_distance is None


def test_audit_table_rules_and_reasons_hand_computed():
    fidelity, privacy = make_evidence()
    thresholds = Thresholds(alpha=0.95, min_train_distance=0.5)
    audit = audit_table(fidelity, privacy, thresholds)

    assert list(audit["row"]) == [0, 1, 2, 3, 4, 5]
    assert list(audit["drop_outside_alpha"]) == [False, False, True, True, False, False]
    assert list(audit["drop_unauthentic"]) == [False, True, False, True, False, False]
    assert list(audit["drop_too_close"]) == [True, False, False, True, False, False]
    assert list(audit["drop_exact_copy"]) == [True, False, False, False, False, False]
    assert list(audit["removed"]) == [True, True, True, True, False, False]
    assert audit.loc[3, "reasons"] == (
        "outside α=0.95 support; unauthentic; closer than 0.5 to a training row"
    )
    assert audit.loc[4, "reasons"] == ""
    # NaN alpha level (row 5) is missing evidence, never a reason to remove
    assert not audit.loc[5, "removed"]


def test_rules_switch_off():
    fidelity, privacy = make_evidence()
    off = Thresholds(alpha=None, drop_unauthentic=False, drop_exact_copies=False)
    audit = audit_table(fidelity, privacy, off)
    assert not audit["removed"].any()
    assert set(audit["reasons"]) == {""}


def test_missing_section_leaves_its_rules_inactive():
    fidelity, privacy = make_evidence()
    only_privacy = audit_table(None, privacy, Thresholds(min_train_distance=0.5))
    assert only_privacy["alpha_level"].isna().all()
    assert list(only_privacy["removed"]) == [True, False, False, True, False, False]
    only_fidelity = audit_table(fidelity, None, Thresholds(min_train_distance=0.5))
    assert list(only_fidelity["removed"]) == [False, True, True, True, False, False]
    with pytest.raises(DataError, match="fidelity"):
        audit_table(None, None)


@dataclass(frozen=True)
class FidelityWithHoldout:
    samples: Samples
    holdout_samples: Samples


def test_holdout_audit_gives_reference_shares():
    fidelity, privacy = make_evidence()
    holdout = Samples(alpha_level=np.linspace(0.0, 1.0, 101), authentic=np.arange(101) % 2 == 0)
    with_holdout = FidelityWithHoldout(fidelity.samples, holdout)
    thresholds = Thresholds(alpha=0.9, min_train_distance=5.0)
    reference = holdout_audit(with_holdout, privacy, thresholds)
    assert len(reference) == 101
    summary = rule_summary(audit_table(with_holdout, privacy, thresholds), reference)
    assert summary.loc["drop_outside_alpha", "reference_share"] == pytest.approx(10 / 101)
    assert summary.loc["drop_unauthentic", "reference_share"] == pytest.approx(50 / 101)
    assert summary.loc["drop_too_close", "reference_share"] == pytest.approx(5 / 101)  # 0..4
    assert summary.loc["drop_exact_copy", "reference_share"] == 0
    assert holdout_audit(None, None).empty


def test_length_mismatch_is_reported():
    fidelity, _ = make_evidence()
    short = Privacy(DCR(np.zeros(3), None, np.zeros(3, bool), np.ones(3)))
    with pytest.raises(DataError, match="one value per synthetic row"):
        audit_table(fidelity, short)


def test_rule_summary_and_overlaps_add_up():
    fidelity, privacy = make_evidence()
    audit = audit_table(fidelity, privacy, Thresholds(alpha=0.95, min_train_distance=0.5))
    summary = rule_summary(audit)
    assert summary.loc["drop_outside_alpha", "flagged"] == 2
    assert summary.loc["drop_unauthentic", "only"] == 1  # row 1
    assert summary.loc["drop_exact_copy", "only"] == 0  # row 0 is also too close
    assert summary.loc["any", "flagged"] == 4

    overlaps = rule_overlaps(audit)
    assert overlaps["n_rows"].sum() == audit["removed"].sum()
    assert set(overlaps["rules"]) == {
        "too close to a training row + exact copy of a training row",
        "unauthentic",
        "outside α-support",
        "outside α-support + unauthentic + too close to a training row",
    }
    empty = rule_overlaps(
        apply_thresholds(
            audit, Thresholds(alpha=None, drop_unauthentic=False, drop_exact_copies=False)
        )
    )
    assert empty.empty and list(empty.columns) == [*RULES, "rules", "n_rows"]


TRICKY_CSV = (
    "id,age,income,city,note\n"
    "007,39,1.50,Zürich,plain\n"
    '008,-4,"2,5", Genève ,"say ""hi"""\n'
    "009,51,,Lyon,=1+2\n"
    "010,1e3,-7.25,Bern,-abc\n"
    "011,22,3.000,Basel,\n"
    "012,60,8,Chur,@SUM(A1)\n"
)


def tricky_table(name="cand", role="synthetic"):
    return read_table(io.BytesIO(TRICKY_CSV.encode("utf-8")), name=name, role=role)


def audit_removing(n, rows):
    removed = np.zeros(n, bool)
    removed[list(rows)] = True
    privacy = Privacy(DCR(np.where(removed, 0.0, 5.0), None, removed, np.ones(4)))
    return audit_table(None, privacy, Thresholds(alpha=None, drop_unauthentic=False))


def test_curate_keeps_input_strings_and_loses_no_row():
    table = tricky_table()
    audit = audit_removing(table.n_rows, [1, 4])
    curation = curate(table, audit)

    assert list(curation.kept_rows) == [0, 2, 3, 5]
    assert list(curation.removed_rows) == [1, 4]
    # curated ∪ removed = input rows, exactly
    back = pd.concat([curation.kept_raw, curation.removed_raw])
    back.index = np.concatenate([curation.kept_rows, curation.removed_rows])
    pd.testing.assert_frame_equal(back.sort_index(), table.raw)
    assert list(curation.kept_raw.columns) == list(table.raw.columns)
    assert curation.reasons == ("exact copy of a training row",) * 2
    assert list(curation.removed_table().columns[:2]) == ["row", "reasons"]
    assert curation.table.sha256 != table.sha256
    assert curation.table.n_rows == 4


def test_curated_csv_reread_gives_the_input_strings():
    table = tricky_table()
    curation = curate(table, audit_removing(table.n_rows, [1]))
    data = curated_csv_bytes(curation)
    back = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    # cells a spreadsheet would run are quoted; every other cell is the input string
    expected = curation.kept_raw.copy()
    expected["note"] = expected["note"].replace(
        {"=1+2": "'=1+2", "-abc": "'-abc", "@SUM(A1)": "'@SUM(A1)"}
    )
    pd.testing.assert_frame_equal(back, expected, check_dtype=False)
    assert back.loc[back["id"] == "010", "age"].item() == "1e3"
    assert back.loc[back["id"] == "007", "income"].item() == "1.50"


def test_curated_parquet_keeps_dtypes():
    table = tricky_table()
    curation = curate(table, audit_removing(table.n_rows, [0, 2]))
    back = pd.read_parquet(io.BytesIO(curated_parquet_bytes(curation)))
    pd.testing.assert_frame_equal(back, curation.kept_frame)
    assert dict(back.dtypes) == dict(table.frame.dtypes)


@pytest.mark.slow
def test_curate_demo_table_round_trip():
    demo = pytest.importorskip("synthreview.demo")
    review = demo.tables(seed=0, n_train=300)
    table = review.synthetic["copula"]
    rng = np.random.default_rng(0)
    curation = curate(table, audit_removing(table.n_rows, rng.choice(table.n_rows, 40, False)))
    assert len(curation.kept_rows) == table.n_rows - 40
    back = pd.read_csv(
        io.BytesIO(curated_csv_bytes(curation, schema=review.schema)),
        dtype=str,
        keep_default_na=False,
    )
    pd.testing.assert_frame_equal(back, curation.kept_raw.reset_index(drop=True), check_dtype=False)


def test_curated_review_replaces_only_curated_candidates():
    real = read_table(io.BytesIO(TRICKY_CSV.encode()), name="real", role="real")
    review = align(real, {"a": tricky_table("a"), "b": tricky_table("b")})
    curation = curate(review.synthetic["a"], audit_removing(6, [0]))
    curated = curated_review(review, {"a": curation})
    assert curated.candidates == ["a"]
    assert curated.synthetic["a"].n_rows == 5
    assert curated.real is review.real
    with pytest.raises(DataError, match="curations name candidates"):
        curated_review(review, {"zzz": curation})


def test_curated_review_cuts_traces_too():
    from synthreview.io.traces import Traces, align_traces

    rng = np.random.default_rng(0)
    real = Traces.from_array(100 + 20 * rng.random((6, 12)), name="real")
    cand = Traces.from_array(100 + 20 * rng.random((5, 12)), name="cand")
    review = align_traces(real, {"cand": cand})
    curation = curate(review.synthetic["cand"], audit_removing(5, [1, 3]))
    curated = curated_review(review, {"cand": curation})
    assert curated.traces["cand"].n_traces == 3
    np.testing.assert_array_equal(curated.traces["cand"].values, cand.values[[0, 2, 4]])
    assert curated.traces["cand"].sha256 == curation.table.sha256 != cand.sha256
    assert curated.traces["real"] is review.traces["real"]


def test_curate_needs_thresholds_for_foreign_tables():
    table = tricky_table()
    audit = audit_removing(table.n_rows, [1])
    audit.attrs.clear()
    with pytest.raises(ConfigError, match="thresholds"):
        curate(table, audit)
    assert len(curate(table, audit, Thresholds(alpha=None)).removed_rows) == 1
