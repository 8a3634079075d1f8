"""``report.html``: one self-contained, offline, printable file for the governance board.

plotly.js is inlined once (``include_plotlyjs=True`` on the first figure, ``False`` after), no
CDN, no web fonts, no external stylesheet: the file renders on an air-gapped laptop and prints
with one figure per block. Every value is HTML-escaped (candidate and column names come from
user files).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from synthreview.figures.audit import (
    before_after_bars,
    fidelity_curves,
    rule_overlap_bars,
    scorecard_table,
)
from synthreview.figures.frontier import frontier_points, privacy_utility_frontier
from synthreview.figures.style import VERDICT_COLORS
from synthreview.judgement.policy import HEADLINES, headline_scores
from synthreview.release.glucose_html import glucose_section

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif;
       margin: 2rem auto; max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1rem; }
h1 { font-size: 1.8rem; margin-bottom: 0.2rem; } h2 { border-bottom: 2px solid #ddd; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.95rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
.light { display: inline-block; width: 0.9em; height: 0.9em; border-radius: 50%;
         margin-right: 0.35em; vertical-align: -0.1em; border: 1px solid #666; }
.verdict { font-weight: bold; text-transform: uppercase; }
.muted { color: #666; font-size: 0.9rem; }
.warn { color: #7f1d1d; font-weight: bold; } .mono { font-family: monospace; font-size: 0.85rem; }
.figure { margin: 1rem 0 2rem; break-inside: avoid; page-break-inside: avoid; }
@media print {
  body { margin: 0; max-width: none; font-size: 10.5pt; }
  h2 { break-before: auto; break-after: avoid; }
  .figure, table, section.candidate { break-inside: avoid; page-break-inside: avoid; }
  .light, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .modebar-container { display: none !important; }
}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return _e(value)


def _share(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{value:.1%}"


def _light(verdict: str) -> str:
    colour = VERDICT_COLORS.get(verdict, VERDICT_COLORS["n/a"])
    return (
        f'<span class="light" style="background:{colour}"></span>'
        f'<span class="verdict">{_e(verdict)}</span>'
    )


def _as_dict(verdicts: Any) -> dict[str, Any]:
    return verdicts.to_dict() if hasattr(verdicts, "to_dict") else dict(verdicts)


def _reference(ref: float | None) -> str:
    return "" if ref is None else f' <span class="muted">(holdout {_fmt(ref)})</span>'


def _scorecard(candidates: Mapping[str, Any], verdicts: Mapping[str, Any]) -> str:
    head = "".join(f"<th>{_e(label)}</th>" for label in HEADLINES.values())
    rows = []
    for name, candidate in candidates.items():
        scores = headline_scores(candidate)
        cells = "".join(f"<td>{_fmt(v)}{_reference(ref)}</td>" for v, ref in scores.values())
        overall = _as_dict(verdicts[name])["overall"] if name in verdicts else "n/a"
        rows.append(f"<tr><th>{_e(name)}</th><td>{_light(overall)}</td>{cells}</tr>")
    return f"<table><tr><th>candidate</th><th>verdict</th>{head}</tr>{''.join(rows)}</table>"


def _verdict_details(name: str, verdicts: Any) -> str:
    v = _as_dict(verdicts)
    rows = "".join(
        f"<tr><td>{_e(r['rule'])}</td><td>{_light(r['verdict'])}</td><td>{_fmt(r['value'])}</td>"
        f"<td>{'≤' if r['direction'] == 'lower' else '≥'} {_fmt(r['pass'])}</td>"
        f"<td>{'>' if r['direction'] == 'lower' else '<'} {_fmt(r['fail'])}</td>"
        f"<td>{_e(r['description'])}</td><td class='muted'>{_e(r['note'])}</td></tr>"
        for r in v["rules"].values()
    )
    return (
        f"<h3>{_e(name)}: {_light(v['overall'])}</h3>"
        "<table><tr><th>rule</th><th>verdict</th><th>value</th><th>pass</th><th>fail</th>"
        f"<th>what</th><th>note</th></tr>{rows}</table>"
    )


#: a rule that removes more than this share of a fresh real sample is flagged in the report
REAL_LOSS_WARNING = 0.03


def _audit_section(content: Mapping[str, Any]) -> str:
    parts = []
    for name, audit in (content.get("audit") or {}).items():
        rows = []
        for r in audit["rules"]:
            expected = r.get("expected_fpr")
            reference = r.get("reference_share")
            real_loss = max(x for x in (expected, reference, 0.0) if isinstance(x, (int, float)))
            warn = (
                ' <span class="warn">removes more than a few % of real data</span>'
                if real_loss > REAL_LOSS_WARNING
                else ""
            )
            active = r.get("active", True)
            rows.append(
                f"<tr><td>{_e(r['label'])}{'' if active else ' (off)'}</td><td>{r['flagged']}</td>"
                f"<td>{r['only']}</td><td>{_share(r.get('share'))}</td>"
                f"<td>{_share(expected)}{warn}</td><td>{_share(reference)}</td>"
                f"<td>{_fmt(r.get('threshold'))}</td></tr>"
            )
        thresholds = ", ".join(
            f"{_e(k)} = {_fmt(v)}" for k, v in (audit["thresholds"] or {}).items()
        )
        after = (content.get("curation") or {}).get(name)
        kept = f"; {after['n_kept']} rows kept in the curated file" if after else ""
        copies = audit.get("copies") or {}
        copy_line = (
            f"<p>Flagged as copies: {copies.get('flagged')} of {copies.get('n_rows')} rows "
            f"({_share(copies.get('share'))}); a fresh real sample: "
            f"{_share(copies.get('reference'))}. Authenticity ratio measured in the "
            f"{_e(audit.get('ratio_space'))} space.</p>"
            if copies
            else ""
        )
        parts.append(
            f"<h3>{_e(name)}</h3><p>{audit['n_removed']} of {audit['n_rows']} rows removed{kept}. "
            f"Thresholds: {thresholds}.</p>{copy_line}<table><tr><th>rule</th>"
            "<th>rows flagged</th><th>flagged by this rule only</th><th>share of rows</th>"
            "<th>a fresh real sample would lose (expected)</th>"
            "<th>the holdout loses (leave-one-out)</th><th>threshold</th></tr>"
            f"{''.join(rows)}</table>"
        )
    return "".join(parts)


def _ci_text(ci: Any) -> str:
    if not isinstance(ci, Sequence) or len(ci) != 2 or None in ci:
        return ""
    return f' <span class="muted">[{_fmt(ci[0])}, {_fmt(ci[1])}]</span>'


def reattack_section(content: Mapping[str, Any]) -> str:
    """Every attack before -> after curation, per candidate (report.json ``reattack``)."""
    parts = []
    for name, reattack in (content.get("reattack") or {}).items():
        rows = "".join(
            f"<tr><td>{_e(a['attack'])}</td>"
            f"<td>{_fmt(a['auc_before'])}{_ci_text(a.get('auc_before_ci'))}</td>"
            f"<td>{_fmt(a['auc_after'])}{_ci_text(a.get('auc_after_ci'))}</td>"
            f"<td>{_fmt(a['tpr_before'])}{_ci_text(a.get('tpr_before_ci'))}</td>"
            f"<td>{_fmt(a['tpr_after'])}{_ci_text(a.get('tpr_after_ci'))}</td>"
            f"<td>{_light('fail') if a['worse'] else _light('pass')}</td></tr>"
            for a in reattack.get("attacks") or []
        )
        note = f'<p class="muted">{_e(reattack.get("note"))}</p>' if reattack.get("note") else ""
        parts.append(
            f"<h3>{_e(name)}</h3>{note}<table><tr><th>attack</th><th>AUC before</th>"
            "<th>AUC after</th><th>TPR at 1 % FPR before</th><th>TPR at 1 % FPR after</th>"
            f"<th>worse beyond the before-interval?</th></tr>{rows}</table>"
        )
    return "".join(parts)


def controls_section(content: Mapping[str, Any]) -> str:
    """The planted-leak control table (report.json ``controls``)."""
    controls = content.get("controls")
    if not controls:
        return ""
    head = rows = ""
    records = controls.get("rows") or []
    attacks = sorted({a for r in records for a in (r.get("attacks") or {})})
    rules = list((records[0].get("recall") or {}) if records else [])
    head = (
        "<tr><th>planted</th><th>rows removed</th><th>planted rows removed</th>"
        + "".join(f"<th>recall: {_e(r.removeprefix('drop_'))}</th>" for r in rules)
        + "".join(f"<th>{_e(a)} AUC / TPR@1%</th>" for a in attacks)
        + "<th>verdict</th><th>failed rules</th></tr>"
    )
    for r in records:
        cells = "".join(f"<td>{_share(r['recall'].get(rule))}</td>" for rule in rules)
        cells += "".join(
            f"<td>{_fmt((r['attacks'].get(a) or {}).get('auc'))} / "
            f"{_fmt((r['attacks'].get(a) or {}).get('tpr_at_fpr_1pct'))}</td>"
            for a in attacks
        )
        rows += (
            f"<tr><td>{_share(r['planted_share'])}</td><td>{_share(r['removed_share'])}</td>"
            f"<td>{_share(r['planted_recall'])}</td>{cells}<td>{_light(r['verdict'])}</td>"
            f"<td>{_e(', '.join(r.get('failed') or []))}</td></tr>"
        )
    return (
        f"<p>The same review on a fresh-like sample of {controls['n_base']} real rows the "
        f"generator never saw (half of the holdout; the other {controls['n_holdout']} rows are "
        "the reference), with training rows planted as exact copies (seed "
        f"{_e(controls['seed'])}, attack sets of {_e(controls['max_attack'])} rows). It shows "
        "what this review can and cannot see at this sample size.</p>"
        f"<table>{head}{rows}</table>"
    )


def _inputs(content: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{_e(i.get('name'))}</td><td>{_e(i.get('role'))}</td><td>{_fmt(i.get('rows'))}</td>"
        f"<td>{_fmt(i.get('columns'))}</td><td class='mono'>{_e(i.get('sha256'))}</td></tr>"
        for i in content.get("inputs") or []
    )
    return (
        "<table><tr><th>name</th><th>role</th><th>rows</th><th>columns</th><th>sha256</th></tr>"
        f"{rows}</table>"
    )


def _errors(candidates: Mapping[str, Any]) -> str:
    items = [
        f"<li>{_e(name)} – {_e(section)}: {_e(message)}</li>"
        for name, c in candidates.items()
        for section, message in (c.get("errors") or {}).items()
    ]
    return f"<h2>Sections that failed</h2><ul>{''.join(items)}</ul>" if items else ""


def key_figures(content: Mapping[str, Any]) -> list[go.Figure]:
    """The figures ``report.html`` shows, built from ``report.json`` content alone.

    Scorecard (when verdicts exist), α-precision and β-recall curves (curated versions dashed),
    before/after bars and, per audited candidate, the rule-overlap bars.
    """
    candidates = content.get("candidates") or {}
    curated = content.get("curated") or {}
    figures = []
    if content.get("verdicts"):
        figures.append(scorecard_table(content["verdicts"]))
    labelled = {**candidates, **{f"{n} (curated)": c for n, c in curated.items()}}
    if any((c.get("fidelity") or {}).get("alpha_precision_curve") for c in labelled.values()):
        figures.append(fidelity_curves(labelled, curve="alpha"))
        figures.append(fidelity_curves(labelled, curve="beta"))
    if curated:
        figures.append(before_after_bars(candidates, curated))
    points = frontier_points(candidates, curated=curated)
    if any(p.kind != "reference" for p in points):
        fig = privacy_utility_frontier(points)
        fig.update_layout(title={"text": "Privacy against utility (up and to the left is better)"})
        figures.append(fig)
    for name, audit in (content.get("audit") or {}).items():
        if audit.get("overlaps"):
            fig = rule_overlap_bars(audit["overlaps"])
            fig.update_layout(title={"text": f"{name}: rows removed, by combination of rules"})
            figures.append(fig)
    return figures


def render_html(
    report_dict: Mapping[str, Any],
    figures: Sequence[go.Figure],
    verdicts: Mapping[str, Any],
) -> str:
    """A self-contained HTML report: inputs, scorecard, verdicts, audit, figures.

    Parameters
    ----------
    report_dict : mapping
        ``report.json`` content (``export.release_dict``) or a plain ``Report.to_dict()``.
    figures : sequence of plotly Figure
        Drawn in order; plotly.js is inlined once with the first.
    verdicts : mapping of candidate name to Verdicts or Verdicts.to_dict()
        Falls back to ``report_dict["verdicts"]`` when empty.

    Returns
    -------
    str
        A complete HTML document that loads nothing from the network.
    """
    verdicts = dict(verdicts) or dict(report_dict.get("verdicts") or {})
    candidates = report_dict.get("candidates") or {}
    blocks = []
    for i, fig in enumerate(figures):
        div = pio.to_html(
            fig,
            full_html=False,
            include_plotlyjs=(i == 0),
            include_mathjax=False,
            div_id=f"figure-{i}",
            config={"displaylogo": False, "responsive": True},
        )
        blocks.append(f'<div class="figure">{div}</div>')
    details = "".join(_verdict_details(n, v) for n, v in verdicts.items())
    audit = _audit_section(report_dict)
    reattack = reattack_section(report_dict)
    controls = controls_section(report_dict)
    glucose = glucose_section(candidates)
    meta = (
        f"synthreview {_e(report_dict.get('synthreview_version'))}"
        f" · seed {_e(report_dict.get('seed'))}"
        f" · sections {_e(', '.join(report_dict.get('sections') or []))}"
        f" · generated {_e(report_dict.get('generated_at', ''))}"
    )
    escaping = report_dict.get("csv_formula_escaping")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>synthreview release report</title><style>{_CSS}</style></head>
<body>
<h1>Synthetic data release report</h1>
<p class="muted">{meta}</p>
<h2>Inputs</h2>{_inputs(report_dict)}
<h2>Scorecard</h2>{_scorecard(candidates, verdicts)}
{"<h2>Policy verdicts</h2>" + details if details else ""}
{"<h2>Audit and curation</h2>" + audit if audit else ""}
{"<h2>Re-attack after curation</h2>" + reattack if reattack else ""}
{"<h2>Planted-leak controls</h2>" + controls if controls else ""}
{"<h2>Glucose: clinical consensus</h2>" + glucose if glucose else ""}
{_errors(candidates)}
<h2>Figures</h2>
{"".join(blocks) if blocks else "<p>No figures.</p>"}
{f'<p class="muted">{_e(escaping)}</p>' if escaping else ""}
</body></html>
"""
