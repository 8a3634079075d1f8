"""``report.html``: the filed record of a release, one self-contained, offline, printable file.

The page opens with each candidate's decision and reason in the Overview's words and colours
(:data:`synthreview.judgement.verdicts.DECISION_STYLE`), then the meeting's sign-off, the load
notices, the policy (name and sha256), the inputs (sha256), the options, the versions, and then
the evidence: key figures, the scorecard and rule verdicts, audit, curation, re-attack, planted
controls and the glucose tables.

It is rendered from the Jinja2 templates in ``synthreview/release/templates/``
(:mod:`synthreview.release.templating`: autoescaping on, ``StrictUndefined``). Every string from
the record is escaped by the template engine; the only markup the page takes from Python is the
plotly figure HTML, built here from figure objects with plotly.js inlined once (no CDN, no web
fonts, no external stylesheet), so the file renders on an air-gapped laptop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go
import plotly.io as pio
from markupsafe import Markup

from synthreview.figures.audit import (
    before_after_bars,
    fidelity_curves,
    rule_overlap_bars,
    scorecard_table,
)
from synthreview.figures.explain import headline_readings
from synthreview.figures.frontier import frontier_points, privacy_utility_frontier
from synthreview.figures.text import plot_text
from synthreview.judgement.decision import SHIPPING_OUTCOMES
from synthreview.judgement.policy import HEADLINES, headline_scores
from synthreview.metrics.registry import get as metric_info
from synthreview.release.export import versions
from synthreview.release.glucose_html import glucose_context
from synthreview.release.templating import render

#: a rule that removes more than this share of a fresh real sample is flagged in the report
REAL_LOSS_WARNING = 0.03
#: plotly.js's default address for map outlines (geo figures only; none in this report): the
#: inlined library is given a local default instead, so the file names no CDN at all
_TOPOJSON_CDN = 'dflt:"https://cdn.plot.ly/un/"'
_TOPOJSON_LOCAL = 'dflt:"./topojson/"'


@dataclass(frozen=True)
class ScoreCell:
    """One headline metric of one candidate.

    ``missing`` says why ``value`` is None: ``"not computed"`` (the section is not in this
    record), ``"failed"`` (the section raised) or ``"not measured"`` (the section ran but this
    metric has no value, e.g. no target column for TSTR); empty when there is a value.
    ``reading`` is the rule's verdict record as every page writes it (the point, the value the
    rule judged, the verdict: ``figures.explain.rule_reading``) and ``why`` the sentence a point
    beyond the line its verdict is within needs; both empty when the record holds no verdict.
    """

    value: float | None
    reference: float | None
    missing: str
    reading: str = ""
    why: str = ""


@dataclass(frozen=True)
class ScoreRow:
    """A candidate's scorecard row: its overall verdict (None: not judged) and headline cells."""

    name: str
    verdict: str | None
    cells: tuple[ScoreCell, ...]


@dataclass(frozen=True)
class AuditRuleRow:
    """One audit rule's summary row and whether it removes too much real data."""

    rule: Mapping[str, object]
    real_loss_warning: bool


@dataclass(frozen=True)
class AuditView:
    """One audited candidate: the ``report.json`` audit entry, its rows and its curation.

    ``ships``: its decision's outcome ships data (``judgement.decision.SHIPPING_OUTCOMES``), so its
    curated file is in the record.
    """

    name: str
    audit: Mapping[str, object]
    rules: tuple[AuditRuleRow, ...]
    curation: Mapping[str, object] | None
    ships: bool = False


@dataclass(frozen=True)
class SectionFailure:
    """A section that raised for a candidate, with its recorded message."""

    candidate: str
    section: str
    message: str


@dataclass(frozen=True)
class ControlsView:
    """The planted-leak control table: the record and the columns its rows share."""

    controls: Mapping[str, object]
    rules: tuple[str, ...]
    attacks: tuple[str, ...]


def _mapping(value: object) -> Mapping[str, object]:
    """``value`` when it is a mapping (a JSON object of the record), else an empty one."""
    return value if isinstance(value, Mapping) else {}


def _records(value: object) -> list[Mapping[str, object]]:
    """The mappings of a JSON array of the record (anything else: none)."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list | tuple) else []


def candidate_names(content: Mapping[str, object]) -> list[str]:
    """Every candidate of the record: those reviewed, then any only a decision names."""
    names = [str(n) for n in _mapping(content["candidates"])]
    names += [str(n) for n in _mapping(content.get("decisions")) if str(n) not in names]
    return names


def _missing(candidate: Mapping[str, object], section: str) -> str:
    if section in _mapping(candidate.get("errors")):
        return "failed"
    if section not in candidate:
        return "not computed"
    return "not measured"


def _k(content: Mapping[str, object]) -> int:
    rules = _mapping(_mapping(content.get("policy")).get("rules"))
    k = _mapping(rules.get("k_marginal")).get("k", 2)
    return k if isinstance(k, int) and not isinstance(k, bool) else 2


def scorecard(content: Mapping[str, object]) -> tuple[list[str], list[ScoreRow]]:
    """Headline labels and one :class:`ScoreRow` per reviewed candidate.

    The k-marginal column uses the policy's ``k`` (2 when the record has no policy). A value
    that is missing says why: its section was not computed, failed, or ran without it.
    """
    k = _k(content)
    labels = [f"{k}-marginal" if key == "k_marginal" else label for key, label in HEADLINES.items()]
    verdicts = _mapping(content.get("verdicts"))
    rows = []
    for name, entry in _mapping(content["candidates"]).items():
        candidate = _mapping(entry)
        readings = headline_readings(verdicts.get(name))
        cells = tuple(
            ScoreCell(
                value,
                reference,
                "" if value is not None else _missing(candidate, metric_info(key).section),
                readings[key].short if key in readings else "",
                readings[key].why if key in readings else "",
            )
            for key, (value, reference) in headline_scores(candidate, k=k).items()
        )
        judged = _mapping(verdicts.get(name)).get("overall")
        rows.append(ScoreRow(str(name), None if judged is None else str(judged), cells))
    return labels, rows


def _real_loss(rule: Mapping[str, object]) -> float:
    shares = (rule.get("expected_fpr"), rule.get("reference_share"), 0.0)
    return max(float(x) for x in shares if isinstance(x, int | float) and not isinstance(x, bool))


def audit_views(content: Mapping[str, object]) -> list[AuditView]:
    """Every audited candidate with its rule rows and its curation summary (when curated).

    An audit entry without ``rules`` is an error (``KeyError``), as in the template.
    """
    curation = _mapping(content.get("curation"))
    decisions = _mapping(content.get("decisions"))
    views = []
    for name, entry in _mapping(content.get("audit")).items():
        audit = _mapping(entry)
        rules = _records(audit["rules"])
        views.append(
            AuditView(
                str(name),
                audit,
                tuple(AuditRuleRow(r, _real_loss(r) > REAL_LOSS_WARNING) for r in rules),
                _mapping(curation[name]) if name in curation else None,
                _mapping(decisions.get(name)).get("outcome") in SHIPPING_OUTCOMES,
            )
        )
    return views


def section_failures(content: Mapping[str, object]) -> list[SectionFailure]:
    """Every section recorded as failed (``candidates[name].errors``), in report order."""
    return [
        SectionFailure(str(name), str(section), str(message))
        for name, candidate in _mapping(content["candidates"]).items()
        for section, message in _mapping(_mapping(candidate).get("errors")).items()
    ]


def controls_view(content: Mapping[str, object]) -> ControlsView | None:
    """The planted-leak controls with the recall and attack columns (None without controls)."""
    controls = _mapping(content.get("controls"))
    if not controls:
        return None
    records = _records(controls.get("rows"))
    attacks = sorted({str(a) for r in records for a in _mapping(r.get("attacks"))})
    rules = [str(r) for r in _mapping(records[0].get("recall"))] if records else []
    return ControlsView(controls, tuple(rules), tuple(attacks))


def shadow_attacks(content: Mapping[str, object]) -> list[tuple[str, Mapping[str, object]]]:
    """``(candidate, privacy.shadow)`` of every candidate whose review ran the shadow attack."""
    found = []
    for name, entry in _mapping(content.get("candidates")).items():
        shadow = _mapping(_mapping(_mapping(entry).get("privacy")).get("shadow"))
        if shadow:
            found.append((str(name), shadow))
    return found


def person_levels(content: Mapping[str, object]) -> list[tuple[str, dict[str, object]]]:
    """``(candidate, privacy.person_level)`` of every candidate reviewed by person.

    Each entry gains ``row_attacks`` (attack -> its row-level result) for the side-by-side table.
    """
    found = []
    for name, entry in _mapping(content.get("candidates")).items():
        privacy = _mapping(_mapping(entry).get("privacy"))
        person = _mapping(privacy.get("person_level"))
        if person:
            rows = {str(_mapping(a).get("attack")): _mapping(a)
                    for a in privacy.get("membership_inference") or []}  # fmt: skip
            found.append((str(name), {**person, "row_attacks": rows}))
    return found


def dp_claims(content: Mapping[str, object]) -> list[tuple[str, dict[str, object]]]:
    """``(candidate, privacy.dp_claim)`` of every candidate whose review tested a claimed ε.

    Each entry gains ``verdict``: the record's ``dp_claim`` rule verdict (None when the record
    holds no verdicts), so the block states the judgement filed, not a second reading.
    """
    verdicts = _mapping(content.get("verdicts"))
    found = []
    for name, entry in _mapping(content.get("candidates")).items():
        claim = _mapping(_mapping(_mapping(entry).get("privacy")).get("dp_claim"))
        if claim:
            rules = _mapping(_mapping(verdicts.get(name)).get("rules"))
            verdict = _mapping(rules.get("dp_claim")) or None
            found.append((str(name), {**claim, "verdict": verdict}))
    return found


def disclosures(content: Mapping[str, object]) -> list[tuple[str, dict[str, object]]]:
    """``(candidate, evidence)`` of every candidate whose review named quasi-identifiers, tested
    an answer key or declared constraints (issue 36).

    ``evidence`` holds ``quasi`` (``privacy.quasi_identifiers``), ``values`` (the first five
    columns of ``privacy.sensitive_values``), ``keys``
    (``utility.answer_key.keys``), ``constraints`` (``utility.constraints.checks``) and
    ``verdicts``: the record's verdicts of ``qi_replay``, ``label_leak`` and
    ``constraint_violations`` (rule -> verdict mapping; absent rules left out).
    """
    verdicts = _mapping(content.get("verdicts"))
    found = []
    for name, entry in _mapping(content.get("candidates")).items():
        privacy = _mapping(_mapping(entry).get("privacy"))
        utility = _mapping(_mapping(entry).get("utility"))
        quasi = _mapping(privacy.get("quasi_identifiers"))
        keys = [_mapping(k) for k in _mapping(utility.get("answer_key")).get("keys") or []]
        checks = [_mapping(c) for c in _mapping(utility.get("constraints")).get("checks") or []]
        values = _mapping(privacy.get("sensitive_values")).get("columns") or []
        values = [_mapping(v) for v in values[:5]]  # highest excess first
        if not (quasi or keys or checks or values):
            continue
        rules = _mapping(_mapping(verdicts.get(name)).get("rules"))
        judged = {
            rule: _mapping(rules.get(rule))
            for rule in ("qi_replay", "label_leak", "constraint_violations")
            if _mapping(rules.get(rule))
        }
        evidence = {"quasi": quasi, "keys": keys, "constraints": checks, "values": values}
        found.append((str(name), {**evidence, "verdicts": judged}))
    return found


def key_figures(content: Mapping[str, object]) -> list[go.Figure]:
    """The figures ``report.html`` shows, built from ``report.json`` content alone.

    Scorecard (when verdicts exist), α-precision and β-recall curves (curated versions dashed),
    before/after bars and, per audited candidate, the rule-overlap bars.
    """
    candidates = {str(n): _mapping(c) for n, c in _mapping(content.get("candidates")).items()}
    curated = {str(n): _mapping(c) for n, c in _mapping(content.get("curated")).items()}
    verdicts = _mapping(content.get("verdicts"))
    figures = []
    if verdicts:
        figures.append(scorecard_table(verdicts))
    labelled = {**candidates, **{f"{n} (curated)": c for n, c in curated.items()}}
    if any(_mapping(c.get("fidelity")).get("alpha_precision_curve") for c in labelled.values()):
        figures.append(fidelity_curves(labelled, curve="alpha"))
        figures.append(fidelity_curves(labelled, curve="beta"))
    if curated:
        figures.append(before_after_bars(candidates, curated))
    points = frontier_points(candidates, curated=curated)
    if any(p.kind != "reference" for p in points):
        fig = privacy_utility_frontier(points)
        fig.update_layout(title={"text": "Privacy against utility (up and to the left is better)"})
        figures.append(fig)
    for name, entry in _mapping(content.get("audit")).items():
        overlaps = _records(_mapping(entry).get("overlaps"))
        if overlaps:
            fig = rule_overlap_bars(overlaps)
            # a title set here bypasses the builders' escaping: plotly.js reads tags in it
            title = f"{plot_text(name)}: rows removed, by combination of rules"
            fig.update_layout(title={"text": title})
            figures.append(fig)
    return figures


def figure_markup(figures: Sequence[go.Figure]) -> list[Markup]:
    """Each figure as an HTML fragment; plotly.js inlined once, with the first.

    The only markup ``report.html`` takes from Python: plotly writes it from figure objects
    (titles and labels inside are JSON-encoded by plotly, not pasted as HTML).
    """
    blocks = []
    for i, fig in enumerate(figures):
        if not isinstance(fig, go.Figure):
            raise TypeError(
                f"figures[{i}] must be a plotly Figure; got {type(fig).__name__} instead"
            )
        div = pio.to_html(
            fig,
            full_html=False,
            include_plotlyjs=(i == 0),
            include_mathjax=False,
            div_id=f"figure-{i}",
            config={"displaylogo": False, "responsive": True},
        )
        if i == 0:
            div = div.replace(_TOPOJSON_CDN, _TOPOJSON_LOCAL, 1)
        # plotly's own output for a Figure object, never text from the record
        blocks.append(Markup(div))
    return blocks


def render_html(
    content: Mapping[str, object],
    figures: Sequence[go.Figure],
    verdicts: Mapping[str, object] | None = None,
) -> str:
    """The filed record as one self-contained HTML page.

    Parameters
    ----------
    content : mapping
        ``report.json`` content (``bundle.release_dict``) or a plain ``Report.to_dict()``; only
        ``candidates`` is required. Read: ``decisions``, ``signoff``, ``notices``, ``policy``,
        ``inputs``, ``options``, ``seed``, ``sections``, ``audit``, ``curation``, ``verdicts``,
        ``curated_verdicts``, ``reattack``, ``controls``, ``versions`` (default: this machine's,
        :func:`synthreview.release.export.versions`).
    figures : sequence of plotly Figure
        Drawn in order (e.g. :func:`key_figures`); plotly.js is inlined once with the first.
    verdicts : mapping, optional
        Accepted for older callers and ignored: the page shows the record's own ``verdicts``
        and ``decisions``, so it cannot disagree with ``report.json``.

    Returns
    -------
    str
        A complete HTML document that loads nothing from the network.

    Raises
    ------
    ValueError
        ``content`` has no ``candidates`` mapping.
    jinja2.UndefinedError
        The record lacks a key the page needs: a field of an entry it has, e.g. a decision
        without ``reason`` or an input without ``sha256``.
    """
    del verdicts  # the record's verdicts are the ones filed
    if not isinstance(content, Mapping) or not isinstance(content.get("candidates"), Mapping):
        got = type(content).__name__ if not isinstance(content, Mapping) else sorted(content)
        raise ValueError(
            f"content must be a report.json mapping with a 'candidates' mapping; got {got} instead"
        )
    labels, rows = scorecard(content)
    return render(
        "report.html",
        content=content,
        names=candidate_names(content),
        decisions=content.get("decisions"),
        signoff=content.get("signoff"),
        headline_labels=labels,
        scorecard_rows=rows,
        audits=audit_views(content),
        controls=controls_view(content),
        failures=section_failures(content),
        shadows=shadow_attacks(content),
        persons=person_levels(content),
        claims=dp_claims(content),
        disclosures=disclosures(content),
        figures=figure_markup(figures),
        versions=content.get("versions") or versions(),
        **glucose_context(_mapping(content["candidates"])),
    )
