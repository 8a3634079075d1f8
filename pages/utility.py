"""Utility: does the synthetic data answer the questions the real data answers?"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

import app_state
from synthreview.errors import ConfigError
from synthreview.figures import explain
from synthreview.figures import utility as fig
from synthreview.figures.explain import format_number
from synthreview.figures.text import markdown_text
from synthreview.metrics.utility.regression import parse_formula, suggest_formula

session = app_state.session()  # this browser session's review

NONE = "(none)"

app_state.require_review_or_record()  # an opened record's numbers need no data
# an opened record's options are shown, not changed (its numbers are evidence)
locked = session.locked()
# the rows themselves: the loaded files (an opened record's only when their sha256 are its own)
review = session.record_rows()
kind = session.review_kind()
st.header("Utility")
st.caption(
    "General and specific utility after the Urban Institute appendix (proportions, means, "
    "percentiles, k-marginals, correlations, discriminator, regression CI overlap) and ML "
    "efficacy after Eiring (2022). Every number sits beside its holdout reference: the same "
    "metric for the holdout table, i.e. what sampling noise alone costs."
)
if kind != "table":
    st.info("Utility metrics are for tables; glucose traces are reviewed on the Glucose page.")
    st.stop()

current = session.get_options()
left, middle, right = st.columns([1, 1, 2])
schema = review.schema if review is not None else None
# without the rows (an opened record), the choices are the record's own
analysed = list(schema.analysed) if schema is not None else [c for c in [current.target] if c]
categorical = list(schema.categorical) if schema is not None else list(current.groups)
choices = [NONE, *analysed]
default_target = current.target if current.target in analysed else NONE
target = left.selectbox(
    "Target column (ML efficacy)", choices, index=choices.index(default_target),
    key="utility_target", help="Categorical target: classification; numeric: regression.",
    disabled=locked,
)  # fmt: skip
default_groups = [c for c in current.groups if c in categorical]
groups = middle.multiselect(
    "Grouping columns", categorical, default=default_groups, key="utility_groups",
    help="Proportion and mean errors are also computed within each level of each column.",
    disabled=locked,
)  # fmt: skip
suggested = (suggest_formula(schema) or "") if schema is not None else ""
text = right.text_input(
    "Regression formula (CI overlap)", value=current.formula or "", key="utility_formula",
    placeholder=suggested or "y ~ a + b", disabled=locked,
    help="'y ~ a + b^2 + c[level] + d': b^2 adds a square, c[level] a 0/1 indicator, a "
    "categorical d is one-hot encoded (first level dropped). Leave empty to skip. "
    f"Suggested for this data: {markdown_text(suggested or 'none')}.",
)  # fmt: skip
# Options change only when the reviewer changes a widget: opening the page never rewrites them
# (it used to write its own default formula into the options that key the results, so every
# visit made utility stale and recomputed it).
formula = current.formula
if text.strip() != (current.formula or "") and not locked:
    formula = None
    if text.strip():
        try:
            formula = str(parse_formula(text, schema=schema, real=review.real.frame))
        except ConfigError as exc:
            right.error(markdown_text(f"Formula not used: {exc}"))
if not session.holdout_given():
    st.warning("No holdout table: holdout references and ML efficacy are skipped.")

options = replace(
    current, target=None if target == NONE else target, groups=tuple(groups), formula=formula
)
if options != current and not locked:
    session.set_options(options)  # marks utility stale; Run review recomputes only it
report = app_state.get_report(("utility",))
reports = app_state.section_results(report, "utility")
if not reports:
    st.stop()


def part_error(name: str, part: str) -> bool:
    """Show a failed metric's error in place; True when it failed."""
    message = reports[name].errors.get(part)
    if message:
        app_state.show_error(message, what=f"{part.replace('_', ' ').capitalize()} of {name}")
    return bool(message)


st.subheader("Summary")
policy = session.get_policy()
summary = session.view("utility_summary", lambda: fig.utility_summary(reports, policy=policy))
# a static table whose headers and cells wrap: every candidate's name is read whole at 1280 px
# (a data grid cut the headers to its column widths)
with st.container(key="utility_summary"):
    st.table(session.view("utility_summary_styled", summary.reading_styled))
st.caption("What each row means is listed below the table; a row's direction is under better.")
st.caption(markdown_text(fig.light_caption(policy)))
# the release rules of this section: the value each judged, its line and verdict, written as the
# Overview writes them (figures.explain.rule_reading)
verdicts = session.rule_verdicts(report)
rules = {n: explain.readings_markdown(n, v, "utility") for n, v in verdicts.items()}
if any(rules.values()):
    with st.container(key="utility_rules"):
        st.subheader("Release rules")
        for text in rules.values():
            if text:
                st.markdown(text)
with st.expander("What each row means"):
    st.markdown(
        "\n".join(f"- **{markdown_text(label)}**: {markdown_text(text)}"
                   for label, text in summary.meanings())
    )  # fmt: skip
for name, result in reports.items():
    for part, why in result.skipped.items():
        st.caption(markdown_text(f"{name}: {part.replace('_', ' ')} skipped — {why}"))
    for part in result.errors:
        part_error(name, part)

chosen = st.selectbox("Candidate for the detailed figures", list(reports), key="utility_candidate")
detail = reports[chosen].candidate

st.subheader("Correlations")
if detail.correlation is not None:
    st.plotly_chart(
        session.view("utility_correlation",
                       lambda: fig.correlation_heatmaps(detail.correlation, name=chosen), chosen),
        key="utility_correlation",
    )  # fmt: skip

st.subheader("k-marginals")
st.plotly_chart(session.view("utility_kmarginal", lambda: fig.k_marginal_bars(reports)),
                key="utility_kmarginal")  # fmt: skip
if detail.k_marginal is not None:
    km = detail.k_marginal
    counts = ", ".join(f"k={k}: {km.n_marginals[k]} of {km.n_possible[k]}" for k in km.scores)
    st.caption(
        "Score = (1 − mean total variation distance over the marginals) × 1000, over the "
        f"categorical columns. Marginals evaluated: {counts}"
        + (" (seeded random sample)." if km.sampled else " (all).")
    )
    binned = detail.k_marginal_binned
    if binned is not None:
        with st.expander("k-marginal including binned numeric columns"):
            st.write({f"k = {k}": format_number(v) for k, v in binned.scores.items()})
            st.caption("Numeric columns cut at the real data's quintiles (ties merged); "
                       "upper-inclusive edges:")  # fmt: skip
            st.json(dict(binned.bins), expanded=False)
    k = st.radio("Worst marginals for k =", list(km.scores), horizontal=True, key="utility_k")
    worst = km.worst.get(k, ())
    if worst:
        labels = [f"{' × '.join(m.columns)} (TVD {format_number(m.tvd)})" for m in worst]
        which = st.selectbox("Marginal", range(len(worst)), format_func=labels.__getitem__,
                             key="utility_marginal")  # fmt: skip
        st.plotly_chart(
            session.view("utility_marginal", lambda: fig.marginal_heatmap(worst[which]),
                           chosen, k, which),
            key="utility_marginal_heatmap",
        )  # fmt: skip
else:
    part_error(chosen, "k_marginal")

st.subheader("Percentiles")
# the numeric columns the percentiles were computed on (an opened record has no schema)
measured = detail.percentiles.table["column"] if detail.percentiles is not None else ()
numeric = list(schema.numeric) if schema is not None else list(dict.fromkeys(measured))
if numeric:
    column = st.selectbox("Numeric column", numeric, key="utility_percentile_column")
    st.plotly_chart(
        session.view("utility_percentiles", lambda: fig.percentile_figure(reports, column),
                       column),
        key="utility_percentiles",
    )  # fmt: skip
    if detail.percentiles is not None:
        rows = detail.percentiles.table
        st.dataframe(fig.number_table(rows[rows["column"] == column]), hide_index=True)

if groups:
    st.subheader("Errors by group")
    for kind in ("proportions", "means") if numeric else ("proportions",):

        def group_bars(kind=kind):
            return fig.group_error_bars(reports, kind=kind)

        st.plotly_chart(
            session.view("utility_groups", group_bars, kind), key=f"utility_groups_{kind[0]}"
        )

st.subheader("ML efficacy: train on synthetic, test on real")
if any(r.ml_efficacy is not None for r in reports.values()):
    st.plotly_chart(session.view("utility_efficacy", lambda: fig.efficacy_bars(reports)),
                    key="utility_efficacy")  # fmt: skip
    task = next(r.ml_efficacy for r in reports.values() if r.ml_efficacy is not None)
    if task.positive_class is not None:
        st.caption(
            "ROC AUC and F1 score the class "
            f"'{markdown_text(task.positive_class)}' (the rarer one)."
        )
else:
    st.info(markdown_text(next(iter(reports.values())).skipped.get("ml_efficacy", "Not computed.")))

st.subheader("Regression confidence-interval overlap")
if any(r.candidate.ci_overlap is not None for r in reports.values()):
    st.plotly_chart(session.view("utility_ci", lambda: fig.ci_forest(reports)),
                    key="utility_ci")  # fmt: skip
    st.caption(
        "Overlap J = ½[(U − L)/(u_r − l_r) + (U − L)/(u_s − l_s)], L and U the larger lower and "
        "smaller upper bound (Karr et al. 2006): 1 identical, 0 touching, negative a gap."
    )
    if detail.ci_overlap is not None:
        st.dataframe(fig.number_table(detail.ci_overlap.coefficients), hide_index=True)
else:
    st.info("No regression formula: enter one above to compare coefficients.")
