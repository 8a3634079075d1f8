"""report.html, the filed record: decision first, sign-off, provenance, escaping, no network."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from importlib import resources

import jinja2
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import synthreview as sr
from synthreview.errors import ConfigError
from synthreview.judgement.policy import apply_policy, load_policy, parse_policy
from synthreview.judgement.verdicts import DECISION_STYLE, VERDICT_STYLE
from synthreview.metrics.privacy.attack_stats import summarize_attack
from synthreview.metrics.privacy.dp_claim import dp_claim_test
from synthreview.options import ReviewOptions
from synthreview.release.html import key_figures, render_html
from synthreview.release.signoff import DECISIONS, sign_off
from synthreview.review import evaluate

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[a](http://127.0.0.1:9/x)",
    "**bold**",
]
MOMENT = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)


class Tags(HTMLParser):
    """Start tags and attributes, split into inside / outside the plotly figure blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outside: list[tuple[str, dict[str, str | None]]] = []
        self.inside: list[str] = []
        self.text: list[str] = []
        self._depth = 0  # open <div> elements since entering a figure block, 0 = outside

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self._depth:
            self.inside.append(tag)
            self._depth += tag == "div"
        elif tag == "div" and attrs.get("class") == "figure":
            self._depth = 1
        else:
            self.outside.append((tag, attrs))

    def handle_endtag(self, tag):
        if self._depth and tag == "div":
            self._depth -= 1

    def handle_data(self, data):
        if not self._depth:
            self.text.append(data)


def parse(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    tags.close()
    return tags


def _decision(outcome: str, reason: str) -> dict:
    return {"outcome": outcome, "reason": reason, "rule": None, "verdict": "fail"}


def _content(**extra) -> dict:
    content = {
        "candidates": {
            "fresh": {"utility": {"discriminator_auc": 0.55, "k_marginal_binned": {"2": 901.0}}},
            "leaky": {},
            "curated_one": {},
        },
        "decisions": {
            "fresh": _decision("release", "every required rule is met (9), no warnings"),
            "leaky": _decision("do_not_release", "copies of training rows: 20 of 200 rows"),
            "curated_one": _decision(
                "release_after_curation", "as submitted: copies; the curated version meets"
            ),
        },
        "inputs": [
            {"name": "real.csv", "role": "real", "rows": 600, "columns": 21, "sha256": "ab" * 32}
        ],
        "options": {"target": "credit_risk", "max_attack": 200},
        "seed": 7,
        "sections": ["fidelity", "privacy", "utility"],
        "policy": load_policy().to_dict(),
        "audit": {
            "leaky": {
                "thresholds": {"level": 0.01, "mode": "quantile"},
                "n_rows": 200,
                "n_removed": 20,
                "rules": [],
            }
        },
    }
    content.update(extra)
    return content


def _figure() -> go.Figure:
    return go.Figure(go.Bar(x=["a"], y=[1]))


# --- the decision comes first ----------------------------------------------------------------


def test_the_page_opens_with_every_decision_before_any_figure():
    page = render_html(_content(), [_figure()])
    decision = page.index('id="decision"')
    assert decision < page.index('class="figure"') < page.index("* plotly.js v")
    # everything before the decision block is the title and one line of metadata
    assert len(re.sub(r"<[^>]+>", "", page[page.index("<body>") : decision]).split()) < 12
    block = page[decision : page.index("</section>", decision)]
    for name, outcome, reason in (
        ("fresh", "release", "every required rule is met (9), no warnings"),
        ("leaky", "do_not_release", "copies of training rows: 20 of 200 rows"),
        ("curated_one", "release_after_curation", "as submitted: copies; the curated version"),
    ):
        label = DECISION_STYLE[outcome].label
        assert re.search(rf"{name}</span> — <span class=\"badge\"[^>]*>{label}</span>", block)
        assert reason in block
    assert block.index("fresh") < block.index("leaky") < block.index("curated_one")
    assert DECISION_STYLE["release"].css() in block  # the Overview's colours
    # the order of the record after the decision
    ids = ["decision", "signoff", "notices", "policy", "inputs", "options", "versions"]
    positions = [page.index(f'id="{i}"') for i in ids]
    assert positions == sorted(positions) and positions[-1] < page.index('class="figure"')


def test_a_candidate_without_a_decision_reads_not_judged_never_na():
    content = _content()
    del content["decisions"]["leaky"]
    page = render_html(content, [])
    block = page[page.index('id="decision"') : page.index('id="signoff"')]
    assert 'leaky</span> — <span class="badge">not judged</span>' in block
    assert "N/A" not in block and "n/a" not in block
    assert "No decision was taken" not in block


def test_a_record_without_decisions_says_so_plainly():
    content = _content()
    del content["decisions"]
    page = render_html(content, [])
    block = page[page.index('id="decision"') : page.index('id="signoff"')]
    assert "No decision was taken in this record" in block
    assert block.count("not judged</span>") == 3 and "N/A" not in block


def test_an_unknown_outcome_is_an_error_not_a_grey_badge():
    content = _content()
    content["decisions"]["fresh"]["outcome"] = "maybe"
    with pytest.raises(ValueError, match="decision outcome must be one of"):
        render_html(content, [])


# --- provenance ------------------------------------------------------------------------------


def test_policy_inputs_options_and_versions_are_on_file():
    from synthreview.release.export import versions

    page = render_html(_content(), [])
    default = resources.files("synthreview").joinpath("policies/default.toml").read_bytes()
    assert hashlib.sha256(default).hexdigest() in page
    assert "synthreview default" in page and "default.toml" in page
    assert "ab" * 32 in page and "real.csv" in page and ">600<" in page
    options = page[page.index('id="options"') : page.index('id="versions"')]
    assert "credit_risk" in options and ">7<" in options
    assert "fidelity, privacy, utility" in options
    assert "level = 0.01, mode = quantile" in options  # the audit thresholds of leaky
    block = page[page.index('id="versions"') :]
    for name, version in versions().items():
        assert f"<th>{name}</th><td>{version}</td>" in block


def test_notices_are_listed_and_none_reads_none():
    notices = [{"level": "warning", "table": "real.csv", "column": "age", "message": "3 blank"}]
    page = render_html(_content(notices=notices), [])
    block = page[page.index('id="notices"') : page.index('id="policy"')]
    assert "warning" in block and "3 blank" in block and ">age<" in block
    for empty in ([], None):
        page = render_html(_content(notices=empty), [])
        block = page[page.index('id="notices"') : page.index('id="policy"')]
        assert "<p>none</p>" in block


def test_utility_columns_show_their_values_and_say_why_one_is_missing():
    content = _content()
    content["candidates"]["leaky"] = {"fidelity": {}, "errors": {"utility": "ValueError: boom"}}
    page = render_html(content, [])
    table = page[page.index("<h2>Scorecard</h2>") :]
    table = table[: table.index("</table>")]
    fresh = re.search(r"<th>fresh</th>.*?</tr>", table, re.S).group(0)
    assert "0.55" in fresh and "901" in fresh  # discriminator AUC and the 2-marginal
    assert "not measured" in fresh  # TSTR / TRTR: no ML-efficacy result in the record
    leaky = re.search(r"<th>leaky</th>.*?</tr>", table, re.S).group(0)
    assert leaky.count("failed") == 3 and "not computed" in leaky  # utility raised; no privacy
    assert "<td>not judged</td>" in fresh  # no verdicts in this record


# --- escaping and the network ----------------------------------------------------------------


def test_user_text_is_escaped_everywhere_and_nothing_is_loaded():
    evil = " ".join(HOSTILE)
    content = _content(
        notices=[{"level": "warning", "table": evil, "column": evil, "message": evil}],
        options={"target": evil},
        signoff={
            evil: sign_off(
                evil, "release", tool_decision="do_not_release", reason=evil, comment=evil
            ).to_dict()
        },
    )
    content["candidates"][evil] = {"errors": {"utility": evil}}
    content["decisions"][evil] = _decision("do_not_release", evil)
    content["inputs"].append(
        {"name": evil, "role": "synthetic", "rows": 1, "columns": 1, "sha256": evil}
    )
    content["audit"][evil] = {
        "thresholds": {evil: evil},
        "n_rows": 1,
        "n_removed": 0,
        "rules": [{"label": evil, "flagged": 0, "only": 0}],
        "overlaps": [{"rules": evil, "n_rows": 1}],
    }
    page = render_html(content, key_figures(content))
    tags = parse(page)
    outside = {tag for tag, _ in tags.outside}
    assert not outside & {"script", "img", "a", "b", "em", "iframe", "link"}
    assert "<strong>bold</strong>" not in page and "**bold**" in page
    assert all(
        not (name in ("href", "src") or name.startswith("on"))
        for _, attrs in tags.outside
        for name in attrs
    )
    assert set(tags.inside) <= {"div", "script"}  # plotly's own blocks
    text = "".join(tags.text)
    for hostile in HOSTILE:  # shown as typed, in each place it was given
        assert text.count(hostile) >= 8, hostile
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # no URL outside plotly.js, and plotly.js carries no CDN default
    assert re.findall(r"https?://[^\s\"'<]+", text) == ["http://127.0.0.1:9/x)"] * text.count(
        "[a](http://127.0.0.1:9/x)"
    )
    assert "cdn.plot.ly" not in page
    assert page.count("* plotly.js v") == 1
    # figure text: plotly.js reads tags in titles and legends, so names reach it escaped
    assert "\\u003cscript\\u003e" not in page.split("* plotly.js v")[1].split("</script>", 1)[1]
    assert "&amp;lt;" not in page  # escaped once, by the template or by the figure builders


def test_no_template_marks_user_text_safe():
    folder = resources.files("synthreview.release").joinpath("templates")
    for template in folder.iterdir():
        source = template.read_text("utf-8")
        assert "|safe" not in source.replace(" ", "") and "Markup" not in source, template.name
        assert "autoescape false" not in source, template.name


# --- a missing key is an error ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "key"),
    [(("decisions", "fresh"), "reason"), (("inputs", 0), "sha256"), (("policy",), "sha256")],
)
def test_a_missing_required_key_is_an_error_not_a_blank(path, key):
    content = _content()
    entry = content
    for step in path:
        entry = entry[step]
    del entry[key]
    with pytest.raises(jinja2.UndefinedError, match=key):
        render_html(content, [])


def test_a_record_without_candidates_is_refused():
    with pytest.raises(ValueError, match="'candidates' mapping"):
        render_html({"decisions": {}}, [])


def test_figures_must_be_plotly_figures_not_text():
    with pytest.raises(TypeError, match=r"figures\[0\] must be a plotly Figure"):
        render_html(_content(), ["<script>alert(1)</script>"])


# --- sign-off --------------------------------------------------------------------------------


def test_sign_off_validates_reviewer_decision_reason_and_time():
    done = sign_off(" Ann Lee ", "release", tool_decision="release", time=MOMENT)
    assert done.to_dict() == {
        "reviewer": "Ann Lee",
        "decision": "release",
        "reason": "",
        "comment": "",
        "time": "2026-11-25T09:30:00+00:00",
    }
    with pytest.raises(ConfigError, match="reviewer must not be empty; got '  '"):
        sign_off("  ", "release", tool_decision="release")
    with pytest.raises(ConfigError, match="reviewer must be at most 200 characters; got 201"):
        sign_off("x" * 201, "release", tool_decision="release")
    with pytest.raises(ConfigError, match="reason is required when the meeting's decision"):
        sign_off("Ann", "release", tool_decision="do_not_release", reason="   ")
    with pytest.raises(ConfigError, match=r"decision must be one of \['release'"):
        sign_off("Ann", "out_of_date", tool_decision="release")
    with pytest.raises(ConfigError, match="tool_decision must be one of"):
        sign_off("Ann", "release", tool_decision="RELEASE")
    with pytest.raises(ConfigError, match="timezone-aware"):
        sign_off("Ann", "release", tool_decision="release", time=datetime(2026, 1, 1))
    with pytest.raises(ConfigError, match="reviewer must be text"):
        sign_off(None, "release", tool_decision="release")
    overruled = sign_off("Ann", "do_not_release", tool_decision="release", reason="board says no")
    assert overruled.reason == "board says no" and overruled.time.tzinfo is not None
    assert set(DECISIONS) <= set(DECISION_STYLE)


def test_sign_off_block_shows_both_decisions_and_highlights_a_difference():
    signoff = {
        "fresh": sign_off("Ann", "release", tool_decision="release", time=MOMENT).to_dict(),
        "leaky": sign_off(
            "Bob",
            "release_after_curation",
            tool_decision="do_not_release",
            reason="the copies are public records",
            comment="see minutes",
            time=MOMENT,
        ).to_dict(),
    }
    page = render_html(_content(signoff=signoff), [])
    block = page[page.index('id="signoff"') : page.index('id="notices"')]
    fresh = block[block.index(">fresh</th>") : block.index(">leaky</th>")]
    leaky = block[block.index(">leaky</th>") : block.index("</table>")]
    assert "differs" not in fresh and "Ann" in fresh and "2026-11-25T09:30:00+00:00" in fresh
    assert 'class="differs"' in leaky and DECISION_STYLE["do_not_release"].label in leaky
    assert DECISION_STYLE["release_after_curation"].label in leaky
    assert "the copies are public records" in leaky and "see minutes" in leaky and "Bob" in leaky
    # the unsigned candidate keeps lines to fill in on paper
    assert re.search(
        r"curated_one</strong>: Not signed off — reviewer: _+ decision: _+ date: _+", block
    )
    decision = page[page.index('id="decision"') : page.index('id="signoff"')]
    assert "differs from the tool's decision" in decision


def test_without_sign_off_every_candidate_has_blank_lines():
    page = render_html(_content(), [])
    block = page[page.index('id="signoff"') : page.index('id="notices"')]
    assert block.count("Not signed off — reviewer: ____") == 3 and "<table>" not in block


# --- policy digest ---------------------------------------------------------------------------


def test_policy_sha256_is_the_digest_of_the_file_as_loaded(tmp_path):
    default = resources.files("synthreview").joinpath("policies/default.toml").read_bytes()
    assert load_policy().to_dict()["sha256"] == hashlib.sha256(default).hexdigest()
    text = b'[policy]\nname = "strict"\n[rules.mia_auc]\npass = 0.55\nfail = 0.6\n'
    path = tmp_path / "strict.toml"
    path.write_bytes(text)
    assert load_policy(path).sha256 == hashlib.sha256(text).hexdigest()
    assert parse_policy(text).sha256 == hashlib.sha256(text).hexdigest()
    assert parse_policy(text.decode()).sha256 == hashlib.sha256(text).hexdigest()


# --- a real review ---------------------------------------------------------------------------


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "hours": rng.normal(40, 8, n).round(1),
            HOSTILE[0]: rng.choice(["F", "M"], n),
            "group": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.mark.slow
def test_a_real_review_files_the_decisions_of_report_json():
    from synthreview.release.pipeline import review_release

    real, holdout = _frame(160, 0), _frame(160, 1)
    evil = HOSTILE[1]
    review = sr.align(real, {"fresh": _frame(160, 2), evil: real.copy()}, holdout=holdout)
    options = ReviewOptions(max_attack=160, n_bootstrap=0, embedding="none", target=HOSTILE[0])
    report = evaluate(review, options=options, seed=0)
    signoff = {evil: sign_off("Ann", "do_not_release", tool_decision="do_not_release", time=MOMENT)}
    release = review_release(review, report, signoff=signoff, timestamp=MOMENT)
    content = json.loads(release.files["report.json"])
    page = release.files["report.html"].decode()
    block = page[page.index('id="decision"') : page.index('id="signoff"')]
    assert set(content["decisions"]) == {"fresh", evil}
    for name, decision in content["decisions"].items():
        label = DECISION_STYLE[decision["outcome"]].label
        shown = name.replace("<", "&lt;").replace(">", "&gt;")
        assert f'{shown}</span> — <span class="badge" style=' in block
        assert re.search(rf"{re.escape(shown)}</span> — <span[^>]*>{label}<", block)
    assert content["decisions"][evil]["outcome"] == "do_not_release"
    assert content["signoff"][evil]["reviewer"] == "Ann"
    # utility ran for every candidate, so its scorecard columns carry numbers
    scorecard = page[page.index("<h2>Scorecard</h2>") :]
    fresh = re.search(r"<th>fresh</th>.*?</tr>", scorecard, re.S).group(0)
    assert "not computed" not in fresh and "not measured" not in fresh
    tags = parse(page)
    assert not {tag for tag, _ in tags.outside} & {"script", "img", "a"}
    assert "cdn.plot.ly" not in page


def test_a_glucose_record_keeps_its_clinical_sections():
    from tests.test_glucose_report import _report

    glucose = _report().to_dict()
    content = _content(kind="traces")
    content["candidates"]["<b>cgm</b>"] = {"glucose": glucose}
    page = render_html(content, [])
    section = page[page.index("<h2>Glucose: clinical consensus</h2>") :]
    assert "Glycemia risk index" in section and "AGP band distance: 40 mg/dL" in section
    assert "<h3>&lt;b&gt;cgm&lt;/b&gt;</h3>" in section and "<b>cgm</b>" not in page
    assert page.index('id="decision"') < page.index("Glucose: clinical consensus")


def test_a_claimed_guarantee_is_filed_with_its_bound_verdict_and_phantom_share():
    """A tested (ε, δ) claim gets its own block (claim, certified ε, contradiction, the
    dp_claim verdict filed, phantom share), the candidate name escaped; no claim, no block."""
    rng = np.random.default_rng(0)
    members, others = rng.normal(2.0, 1.0, 300), rng.normal(0.0, 1.0, 300)
    leak = summarize_attack(
        "distance", np.r_[members, others], np.r_[np.ones(300, bool), np.zeros(300, bool)],
        n_bootstrap=10,
    )  # fmt: skip
    claim = dp_claim_test([leak], epsilon=1.0, delta=1e-5)
    assert claim.contradicted and claim.certified_epsilon > 1.0
    evil = HOSTILE[0]
    content = _content()
    content["candidates"][evil] = {"privacy": {"dp_claim": claim.to_dict()}}
    content["verdicts"] = {evil: apply_policy(load_policy(), content["candidates"][evil]).to_dict()}
    page = render_html(content, [])
    block = page[page.index("<h2>Claimed privacy guarantee</h2>") :]
    block = block[: block.index("</section>")]
    assert "<h3>&lt;script&gt;alert(1)&lt;/script&gt;</h3>" in block and evil not in page
    assert "ε = 1, δ = 1e-05" in block
    assert f"ε ≥ {claim.certified_epsilon:.4g}" in block
    assert f"<td>{claim.excess:.4g}</td>" in block
    assert "<td>yes (distance)" in block  # the evidence contradicts the claim
    fail = VERDICT_STYLE["fail"].label  # the verdict filed in the record, not a second reading
    assert re.search(rf"rule dp_claim: <span class=\"badge\"[^>]*>{fail}</span>", block)
    assert f"<td>{claim.phantom_share:.4g}</td>" in block
    assert "Amin et al., arXiv 2606.16952" in page
    assert "Claimed privacy guarantee" not in render_html(_content(), [])
