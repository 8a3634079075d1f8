"""False-alarm and detection rates of the default policy's privacy and audit rules (issue 27).

A *fresh real sample* (real rows disjoint from training and holdout) is what a perfect generator
would release: every warning it gets is a false alarm. Known-bad candidates must be caught:

* ``verbatim``: the training rows themselves;
* ``noisy``: the training rows with 1 %-of-sd Gaussian noise on every numeric column;
* ``planted_1`` / ``planted_5`` / ``planted_10``: the fresh sample with 1 / 5 / 10 % of its
  rows replaced by verbatim training rows (placed at random);
* ``copula``: a Gaussian copula with empirical marginals fitted on the training rows
  (``synthreview.generators.tables.gaussian_copula``): no row is copied, but rare training
  values are reproduced (the rare-value attack must see it);
* ``shuffled``: the fresh sample with every column permuted on its own (joint distributions
  destroyed) and ``collapsed``: ``mode_collapse`` of the training rows (one k-means mode).
  These two are fidelity/utility failures: the utility section runs on them and on ``fresh``.

CGM traces (``cgm_bokeh_1_subject``: 168 days of one person; ``cgm_iglu_5_subjects``: 45
days of five people) are split by *day* into training, holdout and fresh days (too few people
to split by person); candidates: ``fresh`` days, ``verbatim`` training days, ``noisy``
training days (+- 3 mg/dL), ``shifted`` fresh days + 40 mg/dL. The glucose section (trace
fidelity, privacy and glucose rules) and the release audit run on them.

Person-year panels (``wage_panel``: NLSY, 545 people x 8 years; ``psid_wages_panel``: PSID,
595 x 7) are split *by person* into training, holdout and fresh people (181 / 198 each, seeds
1-5 by default) and reviewed with ``--person person_id`` (privacy with a claimed ε = 1, the
audit, utility with target ``union``); candidates: ``fresh`` people (ids renumbered),
``verbatim_P``: the fresh people with all rows of P % (1, 5, 10) of the training people in
place of as many (ids renumbered), ``noisy`` training people (1 %-of-sd noise, ids renumbered)
and a ``copula`` of the training rows (people of seven rows). Every rule of
:data:`PANEL_RULES` is judged; the row-level membership rules are "n/a" with ``--person``
(shown, not judged), so their rows read "-".

Each dataset of ``../shared/data`` is split at random (per seed) into disjoint training,
holdout and fresh samples of ``n`` rows; the privacy section runs on every candidate (``max_attack``
caps the membership attack set), the release audit on top of it, and the default policy judges
the privacy rules and the audit rules (``audit_copies``, ``real_records``). Fidelity and utility
are not run (their rules are left out of the table and of the overall verdict here).

Run (about 13 minutes on two shared cores for the tables and CGM sets, about 25 more for the
panels)::

    flock /tmp/heavy.lock python benchmarks/calibrate_policy.py --out docs/rule_rates.md

The panels alone (about 10 minutes, seeds 1-5 of both)::

    python benchmarks/calibrate_policy.py --datasets wage_panel psid_wages_panel --out FILE

Exit status 2 with a message on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthreview.generators.tables import gaussian_copula, mode_collapse  # noqa: E402
from synthreview.generators.traces import traces_add_noise  # noqa: E402
from synthreview.io.persons import with_person  # noqa: E402
from synthreview.io.tables import align, read_table  # noqa: E402
from synthreview.io.traces import Traces, align_traces, load_traces  # noqa: E402
from synthreview.judgement.policy import load_policy  # noqa: E402
from synthreview.judgement.verdicts import SEVERITY  # noqa: E402
from synthreview.options import ReviewOptions, default_options  # noqa: E402
from synthreview.release.pipeline import audit_candidate  # noqa: E402
from synthreview.release.verdicts import copy_excess, judge_audited  # noqa: E402
from synthreview.review import evaluate  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
#: rows per split (training, holdout and fresh sample each); German credit has 1,000 rows in all
SIZES = {"adult": 3000, "german_credit": 300, "flchain": 2000}
#: CGM files of ../shared/data and the day traces per split (training, holdout, fresh each)
TRACE_SIZES = {"cgm_bokeh_1_subject": 56, "cgm_iglu_5_subjects": 15}
KINDS = ("fresh", "verbatim", "noisy", "planted_1", "planted_5", "planted_10", "copula",
         "shuffled", "collapsed")  # fmt: skip
TRACE_KINDS = ("fresh", "verbatim", "noisy", "shifted")
#: person-year panels of ../shared/data (split by person) and the people per split
PANEL_SIZES = {"wage_panel": 181, "psid_wages_panel": 198}
#: the person column and the ML-efficacy target of each panel
PANEL_COLUMNS = {"wage_panel": ("person_id", "union"), "psid_wages_panel": ("person_id", "union")}
PANEL_KINDS = ("fresh", "verbatim_1", "verbatim_5", "verbatim_10", "noisy", "copula")
#: rules judged on panels: the privacy section with --person, the audit and ML efficacy
PANEL_RULES = (
    "mia_auc",
    "mia_tpr_at_fpr_1pct",
    "person_mia_auc",
    "person_mia_tpr_at_fpr_1pct",
    "dp_claim",
    "dcr_share",
    "wp29_singling_out_univariate",
    "wp29_singling_out_multivariate",
    "wp29_linkability",
    "wp29_inference",
    "audit_copies",
    "real_records",
    "tstr_trtr_ratio",
)
#: the ε claimed for every panel candidate (a perfect generator of people is consistent with it)
PANEL_CLAIMED_EPSILON = 1.0
#: candidates the utility section also runs on (the fidelity/utility failures and their control)
UTILITY_KINDS = ("fresh", "shuffled", "collapsed")
#: utility rules, judged on UTILITY_KINDS only
UTILITY_RULES = ("k_marginal", "tstr_trtr_ratio", "discriminator_auc")
#: rules judged here (privacy section + release audit + utility), in policy order
STAGE_RULES = (
    "mia_auc",
    "mia_tpr_at_fpr_1pct",
    "dcr_share",
    "wp29_singling_out_univariate",
    "wp29_singling_out_multivariate",
    "wp29_linkability",
    "wp29_inference",
    "audit_copies",
    "real_records",
    *UTILITY_RULES,
)
#: the rules of STAGE_RULES that read the privacy section or the audit (every candidate)
PRIVACY_RULES = tuple(r for r in STAGE_RULES if r not in UTILITY_RULES)
#: rules judged on trace reviews (glucose section + release audit)
TRACE_RULES = ("mia_auc", "mia_tpr_at_fpr_1pct", "dcr_share", "authenticity_gap", "ip_alpha",
               "ir_beta", "consensus_shift", "tstr_trtr_ratio", "audit_copies")  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    """One candidate's verdicts under the default policy.

    Attributes
    ----------
    dataset, kind : str
    seed, n_rows : int
    verdicts : tuple of (rule, verdict)
        For the rules in :data:`STAGE_RULES` (:data:`TRACE_RULES`) that were judged.
    overall : str
        Worst verdict over those rules ("pass", "warn", "fail" or "incomplete").
    rare_auc : float
        AUC of the rare-value membership attack (NaN on traces).
    """

    dataset: str
    kind: str
    seed: int
    n_rows: int
    verdicts: tuple[tuple[str, str], ...]
    overall: str
    rare_auc: float = float("nan")


def _noisy(frame: pd.DataFrame, numeric: Sequence[str], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for col in numeric:
        values = pd.to_numeric(out[col], errors="coerce").astype(float)
        out[col] = values + rng.normal(0.0, 0.01 * values.std(ddof=0), len(values))
    return out


def _planted(fresh: pd.DataFrame, real: pd.DataFrame, percent: int, seed: int) -> pd.DataFrame:
    k = max(1, round(len(fresh) * percent / 100))
    mixed = pd.concat([fresh.iloc[: len(fresh) - k], real.iloc[:k]], ignore_index=True)
    order = np.random.default_rng(seed).permutation(len(mixed))
    return mixed.iloc[order].reset_index(drop=True)


def _shuffled(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: frame[c].to_numpy()[rng.permutation(len(frame))] for c in frame})


#: the access model whose thresholds judge the run (``--access``; None: the strictest, public)
ACCESS: list[str | None] = [None]


@cache
def _policy():
    """The default policy, read once per run (every split is judged by the same file), with the
    thresholds of the ``--access`` model (``Policy.for_access``)."""
    return load_policy().for_access(ACCESS[0])


def _judged(verdicts, rules: Sequence[str]) -> tuple[tuple[tuple[str, str], ...], str]:
    judged = tuple((r.rule, r.verdict) for r in verdicts.rules
                   if r.rule in rules and r.verdict != "n/a")  # fmt: skip
    return judged, max((v for _, v in judged), key=SEVERITY.__getitem__, default="n/a")


def run_split(dataset: str, n: int, seed: int, *, max_attack: int) -> list[Outcome]:
    """Every candidate kind of one random split, judged by the default policy."""
    table = read_table(DATA / f"{dataset}.csv", role="real")
    if 3 * n > table.n_rows:
        raise ValueError(f"{dataset} has {table.n_rows} rows; 3 x n = {3 * n} are needed")
    order = np.random.default_rng(seed).permutation(table.n_rows)

    def rows(part: np.ndarray, name: str, role: str):
        return replace(table, name=name, role=role,
                       frame=table.frame.iloc[part].reset_index(drop=True),
                       raw=table.raw.iloc[part].reset_index(drop=True))  # fmt: skip

    real = rows(order[:n], "real", "real")
    holdout = rows(order[n : 2 * n], "holdout", "holdout")
    fresh = rows(order[2 * n : 3 * n], "fresh", "synthetic")
    schema = align(real, {"fresh": fresh}, holdout=holdout).schema
    candidates = {
        "fresh": fresh,
        "verbatim": real.frame.copy(),
        "noisy": _noisy(real.frame, schema.numeric, seed + 1),
        **{f"planted_{p}": _planted(fresh.frame, real.frame, p, seed + 2 + p) for p in (1, 5, 10)},
        "copula": gaussian_copula(real.frame, schema=schema, seed=seed + 20),
        "shuffled": _shuffled(fresh.frame, seed + 21),
        "collapsed": mode_collapse(real.frame, schema=schema, seed=seed + 22),
    }
    review = align(real, candidates, holdout=holdout, schema=schema)
    options = replace(default_options(review), max_attack=max_attack)
    report = evaluate(review, sections=["privacy"], options=options, seed=seed)
    useful = align(real, {k: candidates[k] for k in UTILITY_KINDS}, holdout=holdout,
                   schema=schema)  # fmt: skip
    utility = evaluate(useful, sections=["utility"], options=options, seed=seed)
    policy = _policy()
    out = []
    for kind in KINDS:
        audit = audit_candidate(report, kind)
        copies = None if audit is None else copy_excess(audit.audit, audit.reference)
        content = report.candidates[kind].to_dict()
        if kind in UTILITY_KINDS:
            content["utility"] = utility.candidates[kind].to_dict()["utility"]
        verdicts = judge_audited(policy, content, copies=copies, kind=report.kind)
        rules = STAGE_RULES if kind in UTILITY_KINDS else PRIVACY_RULES
        judged, overall = _judged(verdicts, rules)
        rare = next((a.auc for a in report.candidates[kind].privacy.membership_inference
                     if a.attack == "rare_values"), float("nan"))  # fmt: skip
        out.append(Outcome(dataset, kind, seed, n, judged, overall, rare))
    return out


def _renumbered(frame: pd.DataFrame, column: str, prefix: str) -> pd.DataFrame:
    """``frame`` with its person ids replaced by ``prefix0``, ``prefix1``, ... in first order."""
    out = frame.copy()
    codes = pd.factorize(out[column].astype("string"))[0]
    out[column] = [f"{prefix}{c}" for c in codes]
    return out


def _verbatim_people(
    fresh: pd.DataFrame, real: pd.DataFrame, column: str, percent: int, seed: int
) -> pd.DataFrame:
    """The fresh people with ``percent`` % of the training people's rows in place of as many."""
    rng = np.random.default_rng(seed)
    train_people = pd.unique(real[column])
    fresh_people = pd.unique(fresh[column])
    k = max(1, round(len(train_people) * percent / 100))
    copied = rng.choice(train_people, k, replace=False)
    kept = fresh_people[: max(0, len(fresh_people) - k)]
    mixed = pd.concat(
        [fresh[fresh[column].isin(kept)], real[real[column].isin(copied)]], ignore_index=True
    )
    return _renumbered(mixed, column, "s")


def run_panel_split(dataset: str, n: int, seed: int, *, max_attack: int) -> list[Outcome]:
    """Every panel candidate of one random split *by person*, reviewed with ``--person``."""
    column, target = PANEL_COLUMNS[dataset]
    table = read_table(DATA / f"{dataset}.csv", role="real")
    people = pd.unique(table.frame[column])
    if 3 * n > len(people):
        raise ValueError(f"{dataset} has {len(people)} people; 3 x n = {3 * n} are needed")
    order = people[np.random.default_rng(seed).permutation(len(people))]

    def rows(part: np.ndarray, name: str, role: str):
        keep = np.flatnonzero(table.frame[column].isin(part).to_numpy())
        return replace(table, name=name, role=role,
                       frame=table.frame.iloc[keep].reset_index(drop=True),
                       raw=table.raw.iloc[keep].reset_index(drop=True))  # fmt: skip

    real = rows(order[:n], "real", "real")
    holdout = rows(order[n : 2 * n], "holdout", "holdout")
    fresh = rows(order[2 * n : 3 * n], "fresh", "synthetic")
    schema = with_person(align(real, {"fresh": fresh}, holdout=holdout), column).schema
    copula = gaussian_copula(real.frame, schema=schema, seed=seed + 20)
    copula[column] = [f"c{i // 7}" for i in range(len(copula))]  # people of seven rows
    candidates = {
        "fresh": _renumbered(fresh.frame, column, "s"),
        **{
            f"verbatim_{p}": _verbatim_people(fresh.frame, real.frame, column, p, seed + 2 + p)
            for p in (1, 5, 10)
        },
        "noisy": _renumbered(_noisy(real.frame, schema.numeric, seed + 1), column, "s"),
        "copula": copula,
    }
    review = with_person(align(real, candidates, holdout=holdout, schema=schema), column)
    options = ReviewOptions(
        max_attack=max_attack, person=column, claimed_epsilon=PANEL_CLAIMED_EPSILON,
        target=target, n_bootstrap=50,
    )  # fmt: skip
    report = evaluate(review, sections=["privacy", "utility"], options=options, seed=seed)
    policy = _policy()
    out = []
    for kind in PANEL_KINDS:
        audit = audit_candidate(report, kind)
        copies = None if audit is None else copy_excess(audit.audit, audit.reference)
        content = report.candidates[kind].to_dict()
        verdicts = judge_audited(policy, content, copies=copies, kind=report.kind)
        judged, overall = _judged(verdicts, PANEL_RULES)
        out.append(Outcome(dataset, kind, seed, n, judged, overall))
    return out


def run_trace_split(dataset: str, n: int, seed: int, *, max_attack: int) -> list[Outcome]:
    """Fresh, verbatim, noisy and +40 mg/dL shifted day traces of one random split."""
    days = load_traces(DATA / f"{dataset}.csv").values
    if 3 * n > len(days):
        raise ValueError(f"{dataset} has {len(days)} day traces; 3 x n = {3 * n} are needed")
    order = np.random.default_rng(seed).permutation(len(days))
    train, hold, fresh = (days[order[i * n : (i + 1) * n]] for i in range(3))
    candidates = {
        "fresh": fresh,
        "verbatim": train.copy(),
        "noisy": traces_add_noise(train, sigma=3.0, seed=seed + 1),
        "shifted": np.clip(fresh + 40.0, 10.0, 1000.0),
    }
    review = align_traces(
        Traces.from_array(train, name="real"),
        {k: Traces.from_array(v, name=k) for k, v in candidates.items()},
        holdout=Traces.from_array(hold, name="holdout"),
    )
    options = ReviewOptions(max_attack=max_attack, n_bootstrap=50)
    report = evaluate(review, options=options, seed=seed)
    policy = _policy()
    out = []
    for kind in TRACE_KINDS:
        audit = audit_candidate(report, kind)
        copies = None if audit is None else copy_excess(audit.audit, audit.reference)
        content = report.candidates[kind].to_dict()
        verdicts = judge_audited(policy, content, copies=copies, kind="traces")
        judged, overall = _judged(verdicts, TRACE_RULES)
        out.append(Outcome(dataset, kind, seed, n, judged, overall))
    return out


def _rate(outcomes: Sequence[Outcome], rule: str, verdicts: tuple[str, ...]) -> str:
    found = [dict(o.verdicts).get(rule) if rule != "overall" else o.overall for o in outcomes]
    found = [v for v in found if v is not None]
    if not found:
        return "-"
    hits = sum(v in verdicts for v in found)
    return f"{hits}/{len(found)}"


def rates_table(outcomes: Sequence[Outcome]) -> str:
    """Markdown: per dataset and rule, fresh warn / fail and each bad kind's warn-or-fail / fail."""
    lines = []
    for dataset in dict.fromkeys(o.dataset for o in outcomes):
        mine = [o for o in outcomes if o.dataset == dataset]
        n, seeds = mine[0].n_rows, len({o.seed for o in mine})
        traces, panel = dataset in TRACE_SIZES, dataset in PANEL_SIZES
        kinds, rules = (TRACE_KINDS, TRACE_RULES) if traces else (KINDS, STAGE_RULES)
        unit = "day traces" if traces else "rows"
        if panel:
            kinds, rules, unit = PANEL_KINDS, PANEL_RULES, "people"
        lines += [
            f"### {dataset} ({n:,} {unit} per split, {seeds} seeds)",
            "",
            "| rule | fresh: warn | fresh: fail | "
            + " | ".join(f"{k}: caught (fail)" for k in kinds[1:])
            + " |",
            "|---|---|---|" + "---|" * (len(kinds) - 1),
        ]
        for rule in (*rules, "overall"):
            fresh = [o for o in mine if o.kind == "fresh"]
            cells = [_rate(fresh, rule, ("warn",)), _rate(fresh, rule, ("fail",))]
            for kind in kinds[1:]:
                bad = [o for o in mine if o.kind == kind]
                caught = _rate(bad, rule, ("warn", "fail"))
                cells.append(f"{caught} ({_rate(bad, rule, ('fail',))})")
            lines.append(f"| {rule} | " + " | ".join(cells) + " |")
        if not traces and not panel:
            aucs = {k: [o.rare_auc for o in mine if o.kind == k] for k in ("fresh", "copula")}
            lines += [
                "",
                "Rare-value attack AUC per seed: fresh "
                + ", ".join(f"{a:.3f}" for a in aucs["fresh"])
                + "; copula "
                + ", ".join(f"{a:.3f}" for a in aucs["copula"])
                + ".",
            ]
        lines.append("")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [*SIZES, *TRACE_SIZES, *PANEL_SIZES]
    parser.add_argument("--datasets", nargs="+", default=names, choices=names)
    parser.add_argument("--seeds", type=int, default=5, help="random splits per dataset")
    parser.add_argument("--trace-seeds", type=int, default=5, help="random splits per CGM set")
    parser.add_argument(
        "--first-seed", type=int, default=1, help="first seed of the panels (seeds first..seeds)"
    )
    parser.add_argument("--max-attack", type=int, default=500, help="membership attack set cap")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="multiply every dataset's split size"
    )
    parser.add_argument("--out", type=Path, help="write the markdown table here")
    parser.add_argument(
        "--access",
        choices=("public", "licensed", "internal", "secure"),
        help="judge with this access model's thresholds (default: public, the strictest)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the calibration; 0 on success, 2 on bad arguments."""
    parser = _parser()
    args = parser.parse_args(argv)
    for option, value in (("--seeds", args.seeds), ("--trace-seeds", args.trace_seeds)):
        if value < 1:
            parser.error(f"{option} must be a positive integer; got {value} instead")
    if args.first_seed < 0:
        parser.error(f"--first-seed must be an integer >= 0; got {args.first_seed} instead")
    if not 0 < args.scale <= 1:
        parser.error(f"--scale must be in (0, 1]; got {args.scale} instead")
    if args.max_attack < 10:
        parser.error(f"--max-attack must be at least 10; got {args.max_attack} instead")
    outcomes: list[Outcome] = []
    ACCESS[0] = args.access
    _policy()  # a policy file that does not load stops the run before any split
    started = time.perf_counter()
    for dataset in args.datasets:
        traces, panel = dataset in TRACE_SIZES, dataset in PANEL_SIZES
        if traces:
            n = max(8, round(TRACE_SIZES[dataset] * args.scale))
        elif panel:
            n = max(30, round(PANEL_SIZES[dataset] * args.scale))
        else:
            n = max(100, round(SIZES[dataset] * args.scale))
        if traces:
            seeds = range(args.trace_seeds)
        elif panel:  # seeds 1-5 by default, as issue 34 measured them
            seeds = range(args.first_seed, args.first_seed + args.seeds)
        else:
            seeds = range(args.seeds)
        for seed in seeds:
            tick = time.perf_counter()
            run = run_trace_split if traces else run_panel_split if panel else run_split
            found = run(dataset, n, seed, max_attack=args.max_attack)
            outcomes += found
            summary = ", ".join(f"{o.kind} {o.overall}" for o in found)
            print(f"{dataset} seed {seed}: {summary} ({time.perf_counter() - tick:.0f} s)")
    table = rates_table(outcomes)
    print(table)
    elapsed = time.perf_counter() - started
    if args.out is not None:
        args.out.write_text(
            HEADER.format(
                seconds=elapsed,
                seeds=args.seeds,
                trace_seeds=args.trace_seeds,
                max_attack=args.max_attack,
            )
            + table
            + FOOTER,
            encoding="utf-8",
        )
    return 0


HEADER = """# Measured false-alarm and detection rates of the default policy

Written by `benchmarks/calibrate_policy.py` ({seeds} seeds per table, {trace_seeds} per CGM set,
`max_attack={max_attack}`, {seconds:.0f} s on the shared two-core machine); re-run it after
changing a threshold:

    flock /tmp/heavy.lock python benchmarks/calibrate_policy.py --out docs/rule_rates.md

Per dataset, every seed splits the real table at random into disjoint training, holdout and
*fresh* samples of the same size. The fresh sample is a perfect generator's output: its
**warn** and **fail** columns are false-alarm rates. The other columns are known-bad candidates
(`verbatim`: the training rows; `noisy`: training rows with 1 %-of-sd noise on every numeric
column; `planted_P`: the fresh sample with P % of its rows replaced by verbatim training rows;
`copula`: a Gaussian copula with empirical marginals of the training rows, which reproduces rare
training values; `shuffled`: the fresh sample with each column permuted on its own;
`collapsed`: one k-means mode of the training rows through a copula), shown as *caught* = warn
or fail, with fail in parentheses. Tables: the privacy section and the release audit
(`audit_copies`, `real_records`) run on every candidate, the utility section (`k_marginal`,
`tstr_trtr_ratio`, `discriminator_auc`; target = the default option) on `fresh`, `shuffled` and
`collapsed` only ("-" elsewhere); the fidelity rules are not run on tables here. CGM sets are
split by day (fresh days, verbatim and noisy training days, fresh days shifted by +40 mg/dL)
and run the full trace review (glucose section: trace fidelity, privacy, forecast) and the
audit. `overall` is the worst verdict of the rules shown; `reattack` (a curated set only) is
left out. The membership rules judge the highest per-attack lower bound at 1 - 0.05/K over the
K attacks (Bonferroni). Person-year panels (issue 34) are split *by person* into training,
holdout and fresh people and reviewed with `--person person_id` and a claimed ε = 1 (privacy,
audit, utility with target `union`): `fresh` people, `verbatim_P` (the fresh people with every
row of P % of the training people in place of as many, ids renumbered), `noisy` training
people, a `copula` of the training rows; the row-level `mia_*` rules are shown but not judged
there ("n/a", left out), `person_mia_*` and `dp_claim` judge people.

"""

FOOTER = """
Reading the table: an advisory rule (`dcr_share`, `wp29_inference`, `discriminator_auc`,
`authenticity_gap`) never fails, it warns at worst, so its "fail" counts are 0 by construction
and its detection shows in "caught".
"""


if __name__ == "__main__":
    sys.exit(main())
