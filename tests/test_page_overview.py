"""AppTest of the Overview page: decisions first, escaped names, policy upload, presentation mode.

The stored results are replaced by a small fixed report (the page only reads results), so the
page logic is covered in seconds; ``test_app_state.py`` runs the real review.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from unittest.mock import patch

import pytest

from synthreview.figures.text import markdown_text, plot_text
from synthreview.io.tables import align, read_table
from synthreview.judgement.policy import HEADLINES
from synthreview.judgement.verdicts import DECISION_STYLE
from synthreview.options import ReviewOptions
from synthreview.record.live import LiveReview
from synthreview.record.session import PRESENTATION_KEY, RAW_ROWS_KEY, ReviewSession
from synthreview.review import CandidateResult, Report, describe_inputs
from tests.page_helpers import run_page

CSV = "a,b\n" + "".join(f"{i},{i * 1.5:.2f}\n" for i in range(12))
# a candidate name a reviewer could upload: Markdown, HTML and a colour directive
NASTY = "<b>x</b>**y**:red[z]"
EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf]")


@dataclass(frozen=True)
class Section:
    content: dict

    def to_dict(self):
        return self.content


def fidelity(ip_alpha=0.93, authenticity=0.6):
    curve = [0.0, 0.5, 1.0]
    return Section(
        {
            "ip_alpha": ip_alpha,
            "ir_beta": 0.85,
            "authenticity": authenticity,
            "alpha_precision_curve": {"alpha": curve, "value": [0.0, 0.45, 0.9]},
            "beta_recall_curve": {"beta": curve, "value": [0.0, 0.4, 0.8]},
            "holdout_reference": {"ip_alpha": 0.95, "ir_beta": 0.9, "authenticity": 0.62},
        }
    )


def privacy(auc=0.51, tpr=0.012):
    return Section(
        {
            "membership_inference": [
                {"attack": "distance", "auc": auc, "tpr_at_fpr_1pct": tpr, "reference_auc": 0.5}
            ],
            "dcr": {"share_closer_to_train": 0.5, "exact_copy_share": 0.0},
            # the WP29 risks are required release rules: a privacy section reports all three
            "wp29": {
                name: {"risk": 0.01, "ci": [0.0, 0.03]}
                for name in (
                    "singling_out_univariate",
                    "singling_out_multivariate",
                    "linkability",
                    "inference",
                )
            },
        }
    )


def utility(k2=960.0, ratio_tstr=0.84):
    return Section(
        {
            "k_marginal": {"1": 990.0, "2": k2, "3": k2 - 30},
            "k_marginal_binned": {"1": 990.0, "2": k2, "3": k2 - 30},
            "discriminator_auc": 0.6,
            "ml_efficacy": [
                {"model": "lr", "metric": "roc_auc", "tstr": ratio_tstr, "trtr": 0.85},
            ],
            "holdout_reference": {
                "k_marginal": {"1": 991.0, "2": 965.0, "3": 935.0},
                "k_marginal_binned": {"1": 991.0, "2": 965.0, "3": 935.0},
                "discriminator_auc": 0.5,
            },
        }
    )


def small_review(names):
    real = read_table(io.BytesIO(CSV.encode()), name="real", role="real")
    # fresh rows: a holdout holding the training rows is refused (io/overlap.py)
    fresh = "a,b\n" + "".join(f"{i},{i * 1.5:.2f}\n" for i in range(100, 112))
    holdout = read_table(io.BytesIO(fresh.encode()), name="holdout", role="holdout")
    cands = {n: read_table(io.BytesIO(CSV.encode()), name=n, role="synthetic") for n in names}
    return align(real, cands, holdout=holdout)


def fake_report(review, sections):
    candidates = {
        name: CandidateResult(name=name, **sections.get(name, {})) for name in review.candidates
    }
    return Report(
        inputs=describe_inputs(review),
        candidates=candidates,
        options=ReviewOptions(),
        seed=0,
        sections=("fidelity", "privacy", "utility"),
    )


@pytest.fixture
def opened():
    review = small_review(["good", "leaky", NASTY])
    report = fake_report(
        review,
        {
            "good": {"fidelity": fidelity(), "privacy": privacy(), "utility": utility()},
            "leaky": {
                "fidelity": fidelity(),
                "privacy": privacy(auc=0.9, tpr=0.4),
                "utility": utility(),
            },
            NASTY: {"fidelity": fidelity(), "privacy": privacy(), "utility": utility(k2=600.0)},
        },
    )
    with (
        patch.object(ReviewSession, "stored_report", return_value=(report, [])),
        patch.object(ReviewSession, "stale_sections", return_value=[]),
        patch.object(ReviewSession, "plan", return_value=[]),
        patch.object(LiveReview, "candidate_report", return_value=report),
        # the fixed sections carry no per-row samples: the copy audit does not cover them, so
        # the release pipeline judges them without the audit rules
        patch("synthreview.release.pipeline.audit_candidate", return_value=None),
    ):
        yield run_page("pages/overview.py", review)


def _decision_html(at) -> str:
    bodies = [h.proto.body for h in at.get("html") if 'sr-decisions"' in h.proto.body]
    assert len(bodies) == 1
    return bodies[0]


def test_one_decision_line_per_candidate_first(opened):
    at = opened
    assert not at.exception
    body = _decision_html(at)
    assert body.count('class="sr-line"') == 3
    labels = re.findall(r'class="sr-badge"[^>]*>([^<]+)<', body)
    assert len(labels) == 3
    assert set(labels) <= {style.label for style in DECISION_STYLE.values()}
    assert labels[0] == DECISION_STYLE["release"].label  # "good" passes every rule
    assert labels[1] == DECISION_STYLE["do_not_release"].label  # the attacker finds 40 %
    # the decisions come before any chart or table
    assert at.get("plotly_chart") and at.subheader[0].value == "Release decisions"


def test_user_text_is_never_markup(opened):
    at = opened
    body = _decision_html(at)
    assert "&lt;b&gt;x&lt;/b&gt;" in body and "<b>x</b>" not in body
    table = at.table[0].value
    # st.table renders Markdown: the name arrives escaped, so it is read as written
    assert markdown_text(NASTY) in set(table.columns) and NASTY not in set(table.columns)


def test_no_emoji_and_readable_numbers(opened):
    at = opened
    texts = [h.proto.body for h in at.get("html")]
    texts += [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts += [str(v) for v in at.table[0].value.to_numpy().ravel()]
    assert not any(EMOJI.search(t) for t in texts)
    table = at.table[0].value
    # the point first, then the value the rule judged and its verdict (figures.explain)
    cell = table.loc[markdown_text(HEADLINES["k_marginal"]), "good"]
    assert cell.startswith("960\\, judged as a shortfall of 5 vs 965") and cell.endswith("PASS")
    assert not any("e+" in str(v) or v == "None" for v in table.to_numpy().ravel())


def test_key_numbers_grow_down_not_sideways(opened):
    """One row per measure (the decision first), one column per candidate after the holdout
    reference: more measures than candidates never widen the table past the page."""
    table = opened.table[0].value
    assert list(table.index) == ["decision", *(markdown_text(v) for v in HEADLINES.values())]
    assert list(table.columns) == [
        "holdout (reference)",
        *(markdown_text(n) for n in ("good", "leaky", NASTY)),
    ]
    assert table.loc["decision", "leaky"] == DECISION_STYLE["do_not_release"].label


def test_frontier_chart_has_every_candidate_and_the_reference(opened):
    at = opened
    chart = at.get("plotly_chart")[0]
    names = [t.get("name") for t in __import__("json").loads(chart.proto.spec)["data"]]
    # a name is drawn as text: plotly gets it with its tags as entities
    assert {"good", "leaky", plot_text(NASTY), "real data (reference)"} <= set(names)


def test_uploaded_policy_changes_the_decision(opened):
    at = opened
    strict = b"[policy]\nname = 'strict'\n[rules.mia_auc]\npass = 0.5\nfail = 0.505\n"
    at.file_uploader(key="overview_policy_upload").upload("strict.toml", strict, "text/plain")
    at.run()
    assert not at.exception
    # a new policy is never applied to the old release silently: out of date until re-run
    labels = re.findall(r'class="sr-badge"[^>]*>([^<]+)<', _decision_html(at))
    assert set(labels) == {DECISION_STYLE["out_of_date"].label}
    at.button(key="run_review_overview").click().run()  # only the release steps run again
    assert not at.exception
    labels = re.findall(r'class="sr-badge"[^>]*>([^<]+)<', _decision_html(at))
    assert labels[0] == DECISION_STYLE["do_not_release"].label


def test_presentation_mode_hides_controls_and_enlarges(opened):
    at = opened
    at.toggle(key="presentation_mode").set_value(True).run()
    assert not at.exception
    assert at.table  # the key numbers, a static table whose cells wrap
    styles = [h.proto.body for h in at.get("html")]
    assert any("stSidebar" in s and "display: none" in s for s in styles)
    assert not any("http" in s for s in styles)  # no fonts or files from the network
    assert not at.file_uploader  # no controls while presenting


def test_not_computed_yet_offers_the_run_button():
    review = small_review(["good"])
    at = run_page("pages/overview.py", review, run_review=False)
    assert not at.exception
    assert any("not been computed" in i.value for i in at.info)
    assert at.button(key="run_review_page").label == "Run review"


def _page_links(at) -> list[str]:
    """Pages the main area links to (the sidebar's "See the decisions" is not counted)."""
    return [element.proto.page for element in at.main.get("page_link")]


def test_presentation_mode_keeps_page_navigation(opened):
    """The sidebar is hidden while presenting: a row of links opens every page, presentation
    mode holds on the page opened, raw training rows stay masked there, and the row's
    *Leave presentation* ends it."""
    import app_state

    at = opened
    assert not _page_links(at)  # the sidebar navigates outside presentation mode
    at.toggle(key="presentation_mode").set_value(True).run()
    pages = [path for group in app_state.PAGES.values() for path, _, _ in group]
    assert _page_links(at) == [p.removeprefix("pages/").removesuffix(".py") for p in pages]
    at.session_state[RAW_ROWS_KEY] = True
    at.switch_page("pages/glossary.py").run()
    assert not at.exception
    assert at.session_state[PRESENTATION_KEY] is True
    assert len(_page_links(at)) == len(pages)
    assert any("stSidebar" in h.proto.body and "display: none" in h.proto.body
               for h in at.get("html"))  # fmt: skip
    with patch("streamlit.session_state", at.session_state):
        assert app_state.session().show_raw_rows() is False  # a shared screen never shows real rows
    at.button(key="presentation_leave").click().run()
    assert not at.exception
    assert at.session_state[PRESENTATION_KEY] is False
    assert not _page_links(at)
