"""Privacy: membership-inference ROC, distance to closest record, disclosure risk, closest pairs."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st

import app_state
from synthreview.errors import ConfigError
from synthreview.figures import fidelity as fidelity_fig
from synthreview.figures import privacy as fig
from synthreview.figures.explain import (
    format_metric,
    format_number,
    metric_help,
    metric_label,
    reading_table,
    rule_reading,
)
from synthreview.figures.text import markdown_text
from synthreview.judgement.policy import RuleVerdict, apply_policy
from synthreview.metrics.registry import get as get_info
from synthreview.record import server
from synthreview.record.session import RAW_ROWS_KEY

session = app_state.session()  # this browser session's review

NONE = "(none)"
LIGHTS = {"pass": "green", "warn": "orange", "fail": "red", "incomplete": "violet", "n/a": "gray"}

app_state.require_review_or_record()  # an opened record's numbers need no data
st.header("Privacy")
st.caption(
    "Could someone holding the synthetic data tell who was in the training data, or learn a "
    "sensitive value about them? Membership-inference attacks score a balanced set of training "
    "rows (members) and holdout rows (non-members): ROC AUC 0.5 means the attacker guesses. "
    "Sources: Urban Institute disclosure metrics (Gower-distance attack, attribute inference, "
    "ℓ-diversity), Hide-and-Seek challenge seekers, Eiring (2022) ROC reporting."
)

#: the DCR caveat, said once on the page (the tiles' tooltips leave it out)
DCR_CAVEAT = (
    "DCR share is a warning only, never a reason to refuse: distance-based shares are not "
    "evidence of membership risk (The DCR Delusion, arXiv 2505.01524)."
)


def _light(verdict: str) -> str:
    return f":{LIGHTS[verdict]}-background[{verdict.upper()}]"


options = session.get_options()
# an opened record's options are shown, not changed (its numbers are evidence)
locked = session.locked()
# the rows themselves: the loaded files (an opened record's only when their sha256 are its own)
review = session.record_rows()
kind = session.review_kind()
if kind == "table":
    columns = list(review.schema.analysed) if review is not None else []
    choices = [NONE, *columns]
    if options.sensitive is not None and options.sensitive not in choices:
        choices.append(options.sensitive)  # the record's choice, kept on screen
    current = options.sensitive if options.sensitive in choices else NONE
    chosen = st.selectbox(
        "Sensitive column for attribute inference", choices, index=choices.index(current),
        key="privacy_sensitive", disabled=locked,
        help="The attacker knows every other column of a training record and predicts this one.",
    )  # fmt: skip
    wanted = None if chosen == NONE else chosen
    if wanted != options.sensitive and not locked:
        options = replace(options, sensitive=wanted)
        session.set_options(options)
    with st.expander("Claimed differential-privacy guarantee",
                     expanded=options.claimed_epsilon is not None):  # fmt: skip
        st.markdown(
            "When the generator is said to be (ε, δ)-differentially private, the review tests "
            "the claim against the membership attacks (rule `dp_claim`). Run the review again "
            "to test it."
        )
        col_eps, col_delta = st.columns(2)
        claimed = col_eps.number_input(
            "Claimed ε (empty = no claim)", min_value=0.0, value=options.claimed_epsilon,
            step=0.5, format="%g", key="privacy_claimed_epsilon", disabled=locked,
        )  # fmt: skip
        delta = col_delta.number_input(
            "Claimed δ", min_value=0.0, max_value=0.5, value=float(options.claimed_delta),
            step=1e-6, format="%g", key="privacy_claimed_delta",
            disabled=claimed is None or locked,
        )  # fmt: skip
        wanted_claim = (claimed, float(delta) if claimed is not None else 0.0)
        if wanted_claim != (options.claimed_epsilon, options.claimed_delta) and not locked:
            options = replace(options, claimed_epsilon=wanted_claim[0],
                              claimed_delta=wanted_claim[1])  # fmt: skip
            session.set_options(options)

report = app_state.get_report(("fidelity", "privacy"), options=options)
policy = session.get_policy()
privacy = app_state.section_results(report, "privacy")
fidelity = {n: c.fidelity for n, c in report.candidates.items() if c.fidelity is not None}
if not privacy:
    st.stop()
tab_labels = [markdown_text(name) for name in privacy]  # tab labels render Markdown
if not session.holdout_given():
    st.warning("No holdout table: membership inference and the DCR share need non-members.")

st.subheader("Summary")
# each tile's verdict is the judgement's (the Overview's decision rests on the same verdicts):
# the stored summary's when the review ran, else the policy applied to these numbers
summary = session.review_summary(options)
if summary is not None:
    judged = summary.verdicts
else:
    content = report.to_dict()["candidates"]
    judged = {n: apply_policy(policy, content[n], kind=report.kind) for n in privacy}


def _rule(name: str, rule: str) -> RuleVerdict | None:
    verdicts = judged.get(name)
    return next((r for r in verdicts.rules if r.rule == rule), None) if verdicts else None


def _tile(column, name: str, rule: str) -> None:
    """The rule's verdict under a tile: the value it judged, its line and verdict
    (``figures.explain.rule_reading``), the sentence a point beyond the line needs, the reason
    (``n/a`` when the policy skips it)."""
    found = _rule(name, rule)
    column.markdown(_light(found.verdict if found is not None else "n/a"))
    if found is None:
        return
    reading = rule_reading(found)
    column.markdown(markdown_text(reading.text))
    if found.reason:
        column.caption(markdown_text(found.reason))


for name, result in privacy.items():
    st.markdown(f"**{markdown_text(name)}**")
    col_mia, col_share, col_copies = st.columns(3)
    aucs = [a.auc for a in result.membership_inference if a.error is None]
    worst = max(aucs) if aucs else math.nan
    col_mia.metric(
        metric_label("mia_auc"), format_metric("mia_auc", None if math.isnan(worst) else worst),
        help=metric_help("mia_auc"),
    )  # fmt: skip
    _tile(col_mia, name, "mia_auc")
    dcr = result.dcr
    share = dcr.share_closer_to_train if dcr is not None else None
    col_share.metric(
        metric_label("dcr_share"), format_metric("dcr_share", share),
        help=f"{get_info('dcr_share').meaning} (training and holdout subsampled to "
        f"{dcr.share_rows if dcr else 0} rows each); 0.5 is ideal. See the note under Summary.",
    )  # fmt: skip
    _tile(col_share, name, "dcr_share")
    # the count the audit_copies rule judges, beside that rule's verdict (counted once:
    # the Overview, the Audit page and the record state the same numbers)
    counts = session.copy_counts(name)
    col_copies.metric(
        f"{counts.unit if counts else 'rows'} flagged as copies",
        f"{counts.flagged_as_copies:,}" if counts else "n/a",
        help=f"The verdict is the audit's rule on {metric_label('audit_copy_share')}: "
        f"{get_info('audit_copy_share').meaning}.",
    )  # fmt: skip
    _tile(col_copies, name, "audit_copies")
    if counts is not None:
        with col_copies.expander("Copies, counted once"):
            st.table(pd.DataFrame(counts.rows(), columns=["rows", "count"]).set_index("rows"))
    for part, message in result.errors.items():
        app_state.show_error(message, what=f"{part} of {name}")
if any(r.dcr is not None for r in privacy.values()):
    st.caption(DCR_CAVEAT)

st.subheader("Authenticity per row (from the fidelity section)")
if fidelity:
    st.plotly_chart(fidelity_fig.authenticity_histogram(fidelity), key="privacy_authenticity")
else:
    st.info("The fidelity section did not run, so no authenticity statistic is available.")

st.subheader("Membership inference: ROC curves")
for tab, (name, result) in zip(st.tabs(tab_labels), privacy.items(), strict=True):
    with tab:
        if not result.membership_inference:
            st.info(markdown_text(result.skipped.get("membership_inference", "No attack ran.")))
            continue
        for attack in result.membership_inference:
            if attack.error is not None:
                what = f"The {fig.attack_label(attack.attack)} attack"
                app_state.show_error(attack.error, what=what)
        # one under the other, full width: every attack's legend line fits at 1280 px
        st.plotly_chart(fig.roc_overlay(result), key=f"privacy_roc_{name}")
        st.plotly_chart(fig.roc_overlay(result, log_scale=True), key=f"privacy_roc_log_{name}")
        # this candidate's attacks only (its errors are shown above), in a static table whose
        # cells wrap: it fits 1280 px
        st.table(fig.attack_reading_table(result, policy=policy))

st.subheader("Empirical ε lower bound")
for name, result in privacy.items():
    bound = result.epsilon_lower_bound
    if bound is None or bound.attack is None:
        st.markdown(f"**{markdown_text(name)}**: no bound (no attack ran).")
        continue
    st.markdown(
        f"**{markdown_text(name)}**: ε ≥ {bound.epsilon:.2f} (black-box, loose) from the "
        f"{fig.attack_label(bound.attack)} attack at "
        f"{bound.confidence:.0%} confidence (TPR {bound.tpr:.3f}, FPR {bound.fpr:.4f} on "
        f"{bound.n_members:,} + {bound.n_nonmembers:,} held-out rows). It bounds ε from below "
        "only: a small value does not show that the data is private."
    )

claims = {name: r.dp_claim for name, r in privacy.items() if r.dp_claim is not None}
if claims or any("dp_claim" in r.errors for r in privacy.values()):
    st.subheader("Claimed privacy guarantee")
    phantom = get_info("phantom_share")
    st.caption(
        "If the generator is (ε, δ)-DP, no membership test can flag training rows more than "
        "e^ε times as often as holdout rows, plus δ (Kairouz et al. 2015). The attacks' "
        "operating points certify an ε from below; a certified ε above the claimed one "
        "contradicts the claim. One training set can refute a claim, never prove it. "
        f"{phantom.label.capitalize()}: {phantom.meaning} ({phantom.citation})."
    )
    for name, result in privacy.items():
        claim = result.dp_claim
        st.markdown(f"**{markdown_text(name)}**")
        if claim is None:
            _tile(st, name, "dp_claim")  # the judgement says why (the test failed)
            continue
        shown = fig.dp_claim_text(claim)
        col_claim, col_bound, col_excess, col_phantom = st.columns(4)
        col_claim.metric(
            "claimed guarantee", shown.claimed,
            help="The (ε, δ) the generator is said to satisfy, as entered (--claimed-epsilon, "
            "--claimed-delta).",
        )  # fmt: skip
        col_bound.metric(
            "ε certified by the attacks", shown.certified,
            help="The largest ε the attacks' operating points prove (a lower bound on the "
            f"generator's true ε). {metric_help('dp_claim_excess')}",
        )  # fmt: skip
        col_excess.metric(
            metric_label("dp_claim_excess"), shown.excess, help=metric_help("dp_claim_excess")
        )
        _tile(col_excess, name, "dp_claim")
        col_phantom.metric(
            metric_label("phantom_share"), shown.phantom_share, help=metric_help("phantom_share")
        )
        st.caption(shown.evidence)

persons = {name: r.person_level for name, r in privacy.items() if r.person_level is not None}
if persons:
    st.subheader("Membership by person")
    st.caption(
        "Rows were grouped by person: every attack ran in rounds of one row per person and each "
        "person's row scores were combined, so a person is identified as a whole (MT-MIA, FERMI: "
        "row-level audits underestimate what is learnt about a person with many rows). "
        "Person-level numbers sit beside the row-level ones of the same attack."
    )
    for name, person in persons.items():
        rows = {a.attack: a for a in privacy[name].membership_inference}
        eps = person.epsilon_lower_bound
        st.markdown(
            f"**{markdown_text(name)}**: rows grouped by `{markdown_text(person.column)}` "
            f"({person.aggregate} of each person's row scores), "
            f"{person.n_member_persons:,} training and {person.n_nonmember_persons:,} holdout "
            f"people; person-level ε ≥ {0.0 if eps is None else eps.epsilon:.2f}. "
            + (
                "The candidate carries person ids: the audit curates a person's rows together."
                if person.synthetic_persons
                else "The candidate has no person ids: the audit curates rows one by one."
            )
        )
        st.table(fig.person_reading_table(person, rows))

st.subheader("Singling out, linkability, inference (WP29)")
st.caption(
    "Article 29 Working Party opinion 05/2014, measured as anonymeter does (Giomi et al. 2023): "
    "each attack runs on training rows, on holdout rows (control) and as a random guess; risk "
    "= (attack - control) / (1 - control), 0 = nothing learned about training people."
)
wp29 = fig.wp29_reading_table(privacy)
if len(wp29):
    st.table(wp29, hide_index=True)
else:
    # skip reasons may quote column names: shown as text
    reasons = sorted({r.skipped.get("wp29", "no result") for r in privacy.values()})
    st.info(markdown_text("Not measured: " + "; ".join(reasons)))

st.subheader("Most exposed training records")
st.caption(
    "Training rows the attacks single out most confidently (p-value = share of non-members "
    "scoring at least as high). Numbers are shown as decile intervals and rare levels masked. "
    "One column per record, most exposed first."
)
n_exposed = st.slider("Records shown", 1, 50, fig.RECORDS_PER_TABLE, key="privacy_vuln_n")
for tab, result in zip(st.tabs(tab_labels), privacy.values(), strict=True):
    with tab:
        exposed = fig.vulnerable_reading_tables(result, n=n_exposed)
        if not exposed:
            st.info("No list of exposed records: no attack scored the training rows.")
        for part in exposed:
            st.table(part)

st.subheader("Distance to closest record")
st.plotly_chart(fig.dcr_histogram(privacy), key="privacy_dcr")

st.subheader("Disclosure risk")
if len(fig.attribute_inference_table(privacy)):
    st.table(fig.attribute_inference_reading_table(privacy))
else:
    reasons = {r.skipped.get("attribute_inference") for r in privacy.values()} - {None}
    why = "; ".join(sorted(reasons)) or "not run"
    st.info(markdown_text(f"Attribute inference: {why}."))
if len(fig.l_diversity_table(privacy)):
    st.markdown(
        f"ℓ-diversity of regression-tree leaves (ℓ = {options.l_diversity}): share of synthetic "
        "values in leaves with fewer than ℓ distinct values; lower is better."
    )
    st.table(fig.l_diversity_reading_table(privacy), hide_index=True)

if report.kind == "table":
    st.subheader("Quasi-identifiers, answer keys, declared constraints")
    st.caption(
        "Chosen on the Data page. A synthetic row whose quasi-identifiers (age, sex, area...) "
        "belong to exactly one training person points at that person even when no other cell "
        "was copied; the holdout shows how often a fresh real sample does so by coincidence "
        "(rule `qi_replay`). An answer key is a target that is an exact rule of other columns "
        "in the candidate but not in real data (rule `label_leak`); declared constraints are "
        "rules every row should obey (rule `constraint_violations`)."
    )
    qi = fig.qi_table(privacy)
    if len(qi):
        st.table(reading_table(qi), hide_index=True)
        st.plotly_chart(fig.qi_risk_histogram(privacy), key="privacy_qi_risk")
    else:
        st.info("No quasi-identifiers chosen (Data page): `qi_replay` is not judged.")
    by_group = fig.group_table(privacy)
    if len(by_group):
        st.markdown(
            "Membership risk per group (grouping columns of the review): every attack's true-"
            "positive rate at 1 % false alarms within each group, against that group's own "
            "non-members (rule `group_mia_tpr_at_fpr_1pct`, worst group, corrected for the "
            "number of groups x attacks); groups below 30 rows a side are pooled into `other`."
        )
        st.plotly_chart(fig.group_tpr_bars(privacy), key="privacy_groups")
        st.table(reading_table(by_group), hide_index=True)
    else:
        st.info("No grouping columns: `group_mia_tpr_at_fpr_1pct` is not judged.")
    values = fig.sensitive_values_table(privacy)
    if len(values):
        st.markdown(
            "Sensitive-value replay: values that occur in exactly one training row (a rare "
            "amount, a code, free text) written again by the candidate, per column, beside how "
            "often a fresh real sample (the holdout) carries one by coincidence."
        )
        st.table(reading_table(values), hide_index=True)
    # the utility section's evidence, from the stored review (pages never compute)
    full = summary.report if summary is not None else report
    utility = {n: c.utility for n, c in full.candidates.items() if c.utility is not None}
    keys, declared = fig.answer_key_table(utility), fig.constraints_table(utility)
    if len(keys):
        st.table(reading_table(keys), hide_index=True)
    elif utility:
        st.info("No target or answer-key column chosen: `label_leak` is not judged.")
    if len(declared):
        st.table(reading_table(declared), hide_index=True)
    elif utility:
        st.info("No constraints declared (Data page): `constraint_violations` is not judged.")
    if not utility:
        st.info("Answer keys and constraints are measured with the utility section (Run review).")
    for name in privacy:
        for rule in ("qi_replay", "label_leak", "constraint_violations"):
            found = _rule(name, rule)
            if found is not None and found.verdict in ("warn", "fail"):
                st.markdown(f"{_light(found.verdict)} **{markdown_text(name)}**, `{rule}`: "
                            f"{markdown_text(found.reason)}")  # fmt: skip

if report.kind != "table":
    st.stop()
st.subheader("Shadow-model attack on the generator")
st.caption(
    "When the generator itself can be run, the review trains it again and again on reference "
    "data drawn from the training and holdout records, half of the time with a target record, "
    "and teaches an attacker to tell the outputs apart (Stadler et al. 2022; TAPAS, Houssiau et "
    "al. 2022). Chance is the false-positive rate achieved, at most 1 %. Advisory: it tests the "
    "generator, not the file."
)
with st.expander("Generator to attack", expanded=options.generator is not None):
    choices = server.generator_choices()
    free = server.settings().allow_generator_paths
    st.markdown(
        "Pick a generator **installed on the machine running this dashboard**: a Python "
        "callable `fit_sample(train, n, seed) -> DataFrame` that a package declares as an entry "
        "point in the `synthreview.generators` group, or a built-in (`copula` and `memorise` "
        "show the two ends). Nothing is uploaded or typed here: the server's operator installs "
        "generators, and only the operator can allow free `module:function` names "
        "(`allow_generator_paths`, docs/security.md). Run the review again to attack it."
    )
    none = "(no shadow attack)"
    listed = [none, *choices]
    current = options.generator
    if current is not None and current not in choices:
        listed.append(current)  # a free name the operator allowed, kept on screen
    picked = st.selectbox(
        "Generator", listed, index=listed.index(current) if current in listed else 0,
        key="privacy_generator", format_func=markdown_text, disabled=locked,
    )  # fmt: skip
    spec = None if picked == none else picked
    if free:
        typed = st.text_input(
            "Or another generator (module:function; allowed by this server's operator)",
            key="privacy_generator_path", disabled=locked,
        ).strip()  # fmt: skip
        spec = typed or spec
    col_k, col_t, col_s = st.columns(3)
    n_shadows = col_k.number_input(
        "Shadows per target (K)", min_value=4, max_value=1000, value=options.shadow_models,
        step=2, key="privacy_shadow_k", disabled=locked,
    )  # fmt: skip
    n_targets = col_t.number_input(
        "Targets (T)", min_value=1, max_value=1000, value=options.shadow_targets,
        key="privacy_shadow_t", disabled=locked,
    )  # fmt: skip
    limit = col_s.number_input(
        "Time limit (s)", min_value=1.0, max_value=86400.0,
        value=float(options.shadow_time_limit), key="privacy_shadow_s", disabled=locked,
    )  # fmt: skip
    wanted = replace(options, generator=spec, shadow_models=int(n_shadows),
                     shadow_targets=int(n_targets), shadow_time_limit=float(limit))  # fmt: skip
    if wanted != options and not locked:
        try:
            session.set_options(wanted)
        except ConfigError as exc:
            app_state.show_error(str(exc), what="The generator")
shadowed = {n: r.shadow for n, r in privacy.items() if r.shadow is not None}
if not shadowed:
    reasons = {r.errors.get("shadow") or r.skipped.get("shadow") for r in privacy.values()}
    st.info(markdown_text("Not run: " + "; ".join(sorted(r for r in reasons if r))))
for name, shadow in shadowed.items():
    tpr, fpr = shadow.tpr_at_fpr_1pct, shadow.fpr
    state = "" if shadow.complete else f" **Partial, not judged:** {shadow.note}."
    st.markdown(
        f"**{markdown_text(name)}** (generator {markdown_text(shadow.generator)}, "
        f"{len(shadow.targets)} targets × {shadow.settings.n_shadows} shadows, "
        f"{shadow.elapsed_s:.0f} s): TPR at {format_number(fpr.value)} FPR "
        f"**{format_number(tpr.value)}** (95 % CI {format_number(tpr.ci[0])} to "
        f"{format_number(tpr.ci[1])}; {tpr.hits} of {tpr.n} shadows with their target), AUC "
        f"{format_number(shadow.auc)}; on this candidate {shadow.candidate_hits.hits} of "
        f"{shadow.candidate_hits.n} training targets and {shadow.candidate_false_alarms.hits} of "
        f"{shadow.candidate_false_alarms.n} holdout targets are called members.{state}"
    )
    _tile(st, name, "shadow_tpr_at_fpr_1pct")
    st.table(fig.shadow_reading_table(shadow))

st.subheader("Closest pairs: the riskiest synthetic rows beside their nearest training row")
with_dcr = [name for name, r in privacy.items() if r.dcr is not None]
if not with_dcr:
    st.stop()
left, right = st.columns([2, 1])
name = left.selectbox("Candidate", with_dcr, key="privacy_pairs_candidate")
n_pairs = right.slider("Pairs", 1, 50, 10, key="privacy_pairs_n")
if review is None:
    app_state.inputs_needed("The closest pairs (synthetic rows beside training rows)")
    st.stop()
samples = getattr(fidelity.get(name), "samples", None)
authentic = getattr(samples, "authentic", None)
rows = fig.riskiest_rows(privacy[name], authentic=authentic, n=n_pairs)
columns = review.schema.analysed
# the rows the statistics were estimated on (samples of tables above options.sample_rows)
population, sampling = session.sampled_review()
synthetic, real = population.synthetic[name].frame, population.real.frame
file_rows = {"synthetic_rows": None, "real_rows": None}
if sampling is not None:
    file_rows = {"synthetic_rows": sampling.table(name).positions,
                 "real_rows": sampling.table("real").positions}  # fmt: skip
    st.caption("Among the rows of the random samples the statistics were estimated on (row "
               "numbers as in the files); the Audit page judges every row.")  # fmt: skip
st.caption("Order: exact copies first, then rows the fidelity section judged unauthentic, then "
           "the smallest distance.")  # fmt: skip
st.table(fig.closest_pairs_reading(synthetic, real, privacy[name], rows=rows, columns=columns,
                                   **file_rows))  # fmt: skip
st.checkbox(
    "Show raw training rows", value=False, key=RAW_ROWS_KEY,
    disabled=session.presentation_mode(),
    help="Off by default and always off in presentation mode: the pair is shown masked like "
    "the most exposed records (decile intervals, rare levels masked).",
)  # fmt: skip
shown_raw = session.show_raw_rows()  # never while presenting, whatever the box says
as_filed = file_rows["synthetic_rows"]
pick = st.selectbox(
    "Pair (synthetic row)", [int(r) for r in rows], key="privacy_pair_row",
    format_func=lambda r: str(r if as_filed is None else int(as_filed[r])),
)  # fmt: skip
st.caption(
    ("Raw values as loaded. " if shown_raw else
     "Numbers as the training column's decile interval, levels shared by fewer than 10 training "
     "rows as (rare). ") + "Highlighted cells are equal in both rows."
)  # fmt: skip
pair = fig.closest_pair(synthetic, real, privacy[name], row=pick, columns=columns,
                        numeric=review.schema.numeric, raw=shown_raw)  # fmt: skip
# fixed widths: long column names and levels (German credit) made the grid wider than 1280 px
widths = {c: st.column_config.TextColumn(width="medium") for c in pair.data.columns}
widths["_index"] = st.column_config.TextColumn(width="medium")
widths["equal"] = st.column_config.TextColumn(width="small")
st.dataframe(pair, key="privacy_pair", column_config=widths)
