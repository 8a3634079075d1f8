"""One review, one verdict: the dashboard's decisions equal the release bundle's (the CLI's).

The dashboard's Run review computes the sections, the copy audit and, for a candidate that
fails as submitted, its curated version with the re-attack. The Overview judges those with the
same policy and the same audit as ``review_release`` (what the CLI's ``--out`` and the Audit
page's export call), so every rule verdict, the audit rules included, and every decision must
be equal for the same files, options and seed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from synthreview.io.tables import align, read_table
from synthreview.record.session import SUMMARY_KEY
from synthreview.release.pipeline import review_release
from synthreview.review import evaluate
from tests.page_helpers import run_page

pytestmark = pytest.mark.slow  # a whole dashboard review beside the CLI's

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="module")
def german_review(tmp_path_factory):
    if not (SHARED / "german_credit.csv").is_file():
        pytest.skip("needs ../shared/data/german_credit.csv")
    folder = tmp_path_factory.mktemp("german")
    german = pd.read_csv(SHARED / "german_credit.csv").sample(frac=1.0, random_state=1)
    german = german.reset_index(drop=True)
    train, holdout, fresh = german.iloc[:300], german.iloc[300:600], german.iloc[600:900]
    # 10 % planted training rows: the copy audit and the attacks must see them
    leaky = pd.concat([fresh.iloc[:270], train.iloc[:30]])
    files = {"train": train, "holdout": holdout, "fresh": fresh, "leaky": leaky}
    for name, frame in files.items():
        frame.to_csv(folder / f"{name}.csv", index=False)
    return align(
        read_table(folder / "train.csv", role="real"),
        [read_table(folder / f"{n}.csv", role="synthetic") for n in ("fresh", "leaky")],
        holdout=read_table(folder / "holdout.csv", role="holdout"),
    )


def test_dashboard_decisions_equal_the_release_bundle(german_review):
    at = run_page("pages/overview.py", german_review, timeout=900)
    assert not at.exception, at.exception
    summaries = list(at.session_state[SUMMARY_KEY].values())
    assert len(summaries) == 1
    dashboard = summaries[0]
    report = evaluate(german_review, options=dashboard.report.options, seed=dashboard.report.seed)
    release = review_release(german_review, report, curate=True)

    for name in german_review.candidates:
        ours, theirs = dashboard.verdicts[name].to_dict(), release.verdicts[name].to_dict()
        # the audit rule is judged on the Overview too, from the same audit
        assert "audit_copies" in ours["rules"]
        assert ours == theirs, name
        decision, expected = dashboard.decisions[name], release.decisions[name]
        assert (decision.outcome, decision.reason) == (expected.outcome, expected.reason), name
    # the planted copies fail as submitted, so the run curated and re-attacked that candidate;
    # its curated version is judged like the bundle's after-curation set (copies left, re-attack)
    assert release.verdicts["leaky"].overall == "fail"
    after = dashboard.releases["leaky"].curated.verdicts.to_dict()
    assert {"audit_copies", "reattack"} <= set(after["rules"])
    assert after == release.after_verdicts["leaky"].to_dict()
    # the curated set is re-evaluated with every section the policy reads, utility included
    assert {"fidelity", "privacy", "utility"} <= set(dashboard.curated["leaky"])
