"""Statistics on samples, evidence on every row (issue 26 item 2; synthreview.sampling)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthreview.errors import ConfigError
from synthreview.figures.text import markdown_text
from synthreview.io.row_hash import value_order
from synthreview.io.tables import align, table_from_frame
from synthreview.judgement.policy import load_policy
from synthreview.options import ReviewOptions
from synthreview.release import rows as rows_module
from synthreview.release.audit import Thresholds
from synthreview.release.pipeline import (
    EVERY_ROW_AUDIT_SHARE,
    audit_candidate,
    release_candidate,
    review_release,
)
from synthreview.release.rows import every_row_evidence
from synthreview.review import evaluate
from synthreview.sampling import plan_sentence, sample_positions, sample_review

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
N, SAMPLE, PLANTED = 1200, 1000, 30


@pytest.fixture(scope="module")
def leak():
    """Adult: 1,200 training, 1,200 holdout rows and a candidate of 1,170 fresh rows plus 30
    verbatim training rows that the 1,000-row real sample does *not* hold."""
    adult = pd.read_csv(DATA / "adult.csv").sample(3 * N, random_state=0).reset_index(drop=True)
    real = table_from_frame(adult.iloc[:N].reset_index(drop=True), name="real", role="real")
    holdout = adult.iloc[N : 2 * N].reset_index(drop=True)
    in_sample = set(sample_positions(real, SAMPLE, seed=0).tolist())
    outside = np.array([i for i in range(N) if i not in in_sample])[:PLANTED]
    fresh = adult.iloc[2 * N : 3 * N - PLANTED]
    candidate = pd.concat([fresh, real.frame.iloc[outside]], ignore_index=True)
    review = align(
        real,
        {"leak": table_from_frame(candidate, name="leak", role="synthetic")},
        holdout=table_from_frame(holdout, name="holdout", role="holdout"),
    )
    planted = np.arange(N - PLANTED, N)
    return review, planted


OPTIONS = ReviewOptions(sample_rows=SAMPLE, n_bootstrap=20, max_attack=500)


@pytest.fixture(scope="module")
def sampled_report(leak):
    review, _ = leak
    return evaluate(review, sections=("fidelity", "privacy"), options=OPTIONS, seed=0)


def test_tables_at_or_below_the_size_are_not_sampled(leak):
    review, _ = leak
    same, sampling = sample_review(review, N, seed=0)
    assert same is review and sampling is None
    assert sample_review(review, None, seed=0) == (review, None)
    with pytest.raises(ConfigError, match="option sample_rows must be None"):
        ReviewOptions(sample_rows=10)


def test_a_person_level_review_is_sampled_by_person(leak):
    # issue 34: whole people (here: everyone of one age), never a person's rows split
    review, _ = leak
    sampling = sample_review(review, SAMPLE, seed=0, person="age")[1]
    real = sampling.table("real")
    ages = review.real.frame["age"].to_numpy()
    drawn = np.zeros(len(ages), bool)
    drawn[real.positions] = True
    assert real.sampled and not set(ages[drawn]) & set(ages[~drawn])


def test_the_plan_says_before_a_run_what_the_run_samples(leak):
    """plan_sentence (shown beside the dashboard's control) agrees with sample_review."""
    review, _ = leak
    plan = plan_sentence(review, SAMPLE)
    sampled = sample_review(review, SAMPLE, seed=0)[1]
    assert [t.name for t in sampled.tables if t.sampled] == ["real", "holdout", "leak"]
    assert f"random sample of {SAMPLE:,} rows (real, holdout, leak)" in plan
    assert "every synthetic row" in plan
    assert f"at most {N:,} rows" in plan_sentence(review, N)
    assert "whole people (by 'age')" in plan_sentence(review, SAMPLE, person="age")
    assert "on every row (exact" in plan_sentence(review, None)
    with pytest.raises(ConfigError, match="option sample_rows"):
        plan_sentence(review, 10)


def test_the_sample_is_free_of_row_order(leak):
    review, _ = leak
    real = review.real
    shuffled = replace(real, frame=real.frame.sample(frac=1, random_state=3).reset_index(drop=True))

    def drawn(table):
        rows = table.frame.iloc[sample_positions(table, SAMPLE, seed=0)].reset_index(drop=True)
        return rows.iloc[value_order(rows)].reset_index(drop=True)

    pd.testing.assert_frame_equal(drawn(real), drawn(shuffled))
    assert not drawn(real).equals(drawn(replace(real, role="holdout")))  # a stream per role


@pytest.mark.slow
def test_population_statistics_are_those_of_the_samples(leak, sampled_report):
    review, _ = leak
    sampled, sampling = sample_review(review, SAMPLE, seed=0)
    on_samples = evaluate(
        sampled, sections=("fidelity", "privacy"), options=replace(OPTIONS, sample_rows=None)
    )
    assert sampled_report.candidates["leak"].to_dict() == on_samples.candidates["leak"].to_dict()
    content = sampled_report.to_dict()
    assert [(t["rows_used"], t["rows_total"]) for t in content["sampling"]["tables"]] == [
        (SAMPLE, N)
    ] * 3
    assert sampling.describe()[0] == "real: estimated on 1,000 of 1,200 rows"
    # the inputs are the files as given, not the samples
    assert {i["rows"] for i in content["inputs"]} == {N}
    assert "sampling" not in on_samples.to_dict()  # a review on every row says nothing


def test_the_audit_judges_every_row_and_finds_copies_outside_the_real_sample(leak, sampled_report):
    review, planted = leak
    # the sampled sections cannot see them: their sources are not in the real sample
    assert sampled_report.candidates["leak"].privacy.dcr.exact_copies == 0
    audited = audit_candidate(sampled_report, "leak", review=review)
    audit = audited.audit
    assert len(audit) == N and list(audit["row"]) == list(range(N))
    assert audit.loc[planted, "drop_exact_copy"].all()
    assert audit.loc[planted, "removed"].all()
    assert int(audit["drop_exact_copy"].sum()) == PLANTED
    assert audit.attrs["search"] == [
        "exact nearest training row of every synthetic row (1,200) and holdout-sample row "
        "(1,000) among 1,200"
    ]  # small enough for the exact search
    assert len(audited.reference) == SAMPLE  # calibrated on the holdout sample
    # a fresh real sample's loss stays near the 1 % quantile level of each calibrated rule
    fresh = audit.iloc[: N - PLANTED]
    assert fresh["removed"].mean() < 0.05


def test_a_sampled_audit_needs_the_review_and_refuses_the_paper_mode(leak, sampled_report):
    review, _ = leak
    with pytest.raises(ConfigError, match="review must be given"):
        audit_candidate(sampled_report, "leak")
    with pytest.raises(ConfigError, match="paper"):
        audit_candidate(sampled_report, "leak", Thresholds(mode="paper"), review=review)


@pytest.fixture(scope="module")
def sampled_release(leak, sampled_report):
    """The CLI's release (``--curate``) of the sampled review, and what it told its progress."""
    review, _ = leak
    told: list[tuple[float, str]] = []
    release = review_release(review, sampled_report, curate=True,
                             progress=lambda f, m: told.append((f, m)))  # fmt: skip
    return release, told


def test_the_release_progress_only_grows_audit_first(sampled_release):
    """The every-row audit reports on the first half of the candidate's range, its curated
    re-evaluation on the rest (issue 39: the printed fraction never goes back)."""
    _, told = sampled_release
    fractions = [f for f, _ in told]
    assert fractions == sorted(fractions) and 0.0 <= fractions[0] and fractions[-1] <= 1.0
    audit = [f for f, m in told if m.startswith("every-row audit of leak")]
    curated = [f for f, m in told if not m.startswith("every-row audit of leak")]
    assert audit and curated
    assert max(audit) <= EVERY_ROW_AUDIT_SHARE <= min(curated) and max(curated) > 0.9


def test_the_record_says_what_was_sampled_and_what_the_search_measured(leak, sampled_release):
    review, _ = leak
    release, _ = sampled_release
    html = release.files["report.html"].decode()
    assert "estimated on" in html and "of 1,200 rows" in html.replace("1200", "1,200")
    assert "audit search, leak" in html and "exact nearest training row" in html
    curated = release.candidates["leak"].curated
    assert curated.report.sampling is not None  # its statistics on samples of the kept rows
    kept = curated.curation.kept_rows
    # "after" is the submitted sample less the removed rows, not a new draw
    drawn = curated.report.sampling.table("leak")
    submitted = sample_review(review, SAMPLE, seed=0)[1].table("leak").positions
    assert drawn.rows_total == len(kept) and drawn.rows_used == np.isin(submitted, kept).sum()
    assert np.array_equal(kept[drawn.positions], submitted[np.isin(submitted, kept)])
    # the curated set's audit is the submitted rows' evidence, numbered as in the curated file
    left = curated.audit.audit
    assert list(left["row"]) == list(range(len(kept)))
    submitted = release.candidates["leak"].audit.audit
    assert np.array_equal(
        left["authenticity_ratio"].to_numpy(), submitted["authenticity_ratio"].to_numpy()[kept]
    )
    assert not left["exact_copy"].any() and left.attrs["search"]
    judged = {v.rule: v.verdict for v in curated.verdicts.rules}
    assert judged["real_records"] == "pass" and judged["audit_copies"] == "pass"


@pytest.mark.slow
def test_the_dashboard_says_what_was_sampled_and_names_file_rows(leak):
    from tests.page_helpers import run_page

    review, _ = leak
    options = replace(OPTIONS, embedding="none")
    at = run_page("pages/privacy.py", review, options=options, timeout=400)
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "numbers as in the files" in captions
    _, sampling = sample_review(review, SAMPLE, seed=0)
    pairs = next(t.value for t in at.table if "nearest training row" in " ".join(t.value.columns))
    shown = {int(str(r)) for r in pairs.index}
    assert shown <= set(sampling.table("leak").positions.tolist())
    # the rows are named as in the files: their cells, read from the files, give the counts
    synthetic, real = review.synthetic["leak"].frame, review.real.frame
    columns = review.schema.analysed
    for row, line in pairs.iterrows():
        s, t = synthetic.iloc[int(str(row))], real.iloc[int(str(line["nearest training row"]))]
        same = sum(
            bool(pd.isna(s[c]) and pd.isna(t[c]))
            if pd.isna(s[c]) or pd.isna(t[c])
            else bool(s[c] == t[c])
            for c in columns
        )
        assert line["equal cells"] == f"{same} of {len(columns)}"
    at = at.switch_page("pages/overview.py").run()
    assert not at.exception, at.exception
    overview = " ".join(c.value for c in at.caption)
    # the line as the record words it (Markdown-escaped, like every text that names a table)
    assert markdown_text(sampling.sentence()) in overview
    assert "estimated on random samples" in overview


def test_an_index_above_the_exact_size_flags_every_planted_copy_and_files_its_recall(
    leak, sampled_report
):
    review, planted = leak
    exact = every_row_evidence(review, sampled_report, "leak", index="exact")
    ivf = every_row_evidence(review, sampled_report, "leak", index="ivf")
    assert len(ivf.search) == 3 and all("1-NN recall" in line for line in ivf.search)
    assert ivf.copies.ratio[planted].max() == 0.0  # every verbatim copy found at distance 0
    assert ivf.dcr.exact_copy[planted].all() and ivf.dcr.exact_copies == PLANTED
    # an index never finds a row nearer than the exact search does
    assert (ivf.copies.train_distance >= exact.copies.train_distance - 1e-9).all()
    with pytest.raises(ConfigError, match="index must be"):
        every_row_evidence(review, sampled_report, "leak", index="faiss")


def test_the_every_row_audit_reports_each_search_stage(leak, sampled_report, monkeypatch):
    """At a million rows the index's training, filling and searches run for minutes: each is
    reported as it starts, through the progress the CLI prints (its release's)."""
    review, _ = leak
    told: list[tuple[float, str]] = []
    every_row_evidence(review, sampled_report, "leak", index="ivf",
                       progress=lambda f, m: told.append((f, m)))  # fmt: skip
    stages = [m for _, m in told]
    assert all(m.startswith("every-row audit of leak: ") for m in stages)

    def first(text: str) -> int:
        return next(i for i, m in enumerate(stages) if text in m)

    assert first("encoding 1,200 training and 1,200 synthetic rows") == 0
    assert first("training the IVF index") < first("rows to the IVF index")
    assert first("rows to the IVF index") < first("checking the IVF index's recall")
    assert first("checking the IVF index's recall") < first("searching 1,200 rows in the IVF")
    assert sum("rows to the IVF index" in m for m in stages) == 1  # one index for every search
    assert sum("searching" in m for m in stages) == 3  # synthetic, holdout, training rows
    # the release the CLI runs tells its progress the same stages (auto: the index above
    # EXACT_PAIRS, here every size)
    monkeypatch.setattr(rows_module, "EXACT_PAIRS", 0)
    told.clear()
    release_candidate(review, sampled_report, "leak", policy=load_policy(), curate_when="never",
                      progress=lambda f, m: told.append((f, m)))  # fmt: skip
    assert [m for _, m in told] == stages
