"""Issue-14 acceptance on real tables: fresh sample, memoriser and 90/10 mixture (not a test).

For each dataset of ``../shared/data`` (Adult, German credit) the rows are permuted with a seed
and cut into three disjoint parts of ``n`` rows: the training table (members), the holdout
(non-members and the attacker's reference sample) and a *fresh* sample of unseen people. Three
candidates are reviewed:

* ``fresh``: the fresh sample (a perfect generator's output): every attack should sit at chance;
* ``memoriser``: the training table itself, copied verbatim: every attack should catch it;
* ``mixture``: the fresh sample with 10 % of its rows replaced by planted training rows: the
  default policy must fail it.

Printed per attack: ROC AUC with its stratified bootstrap 95 % CI, TPR at 1 % FPR, and the chance
band of both (2.5 % / 97.5 % quantiles over ``--n-permutations`` label permutations of the same
scores: what a blind attacker with this many rows and these ties reaches). Then the count of
attacks with AUC >= 0.9 on the memoriser and the default policy's privacy verdicts with their
margins (value minus the fail threshold; the threshold is "fail above").

``--bias-seeds N`` first repeats the fresh sample over N seeded splits and prints each attack's
mean AUC with its standard error: sampling noise averages out, a bias does not.

Run: ``python benchmarks/privacy_acceptance.py [--datasets adult german] [--n ROWS]
[--bias-seeds 12]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthreview.encoding import TabularEncoder  # noqa: E402
from synthreview.io.tables import infer_schema  # noqa: E402
from synthreview.judgement.policy import apply_policy, load_policy  # noqa: E402
from synthreview.metrics.privacy.membership import membership_inference  # noqa: E402
from synthreview.metrics.privacy.section import evaluate_privacy  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
#: dataset -> (file, sensitive column, rows per part at most)
DATASETS = {
    "adult": ("adult.csv", "income", 10_000),
    "german": ("german_credit.csv", "creditability", 300),
}
PRIVACY_RULES = ("mia_", "dcr_", "wp29_")


def chance_band(
    scores: np.ndarray, is_member: np.ndarray, n_permutations: int, seed: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """2.5 % and 97.5 % quantiles of AUC and of TPR at 1 % FPR under permuted labels."""
    rng = np.random.default_rng(seed)
    aucs, tprs = [], []
    ranks = pd.Series(scores).rank().to_numpy()  # ties share their mean rank
    n_m = int(is_member.sum())
    for _ in range(n_permutations):
        y = rng.permutation(is_member)
        # Mann-Whitney AUC from the rank sum of the (pseudo-)members, ties counted one half
        aucs.append((ranks[y].sum() - n_m * (n_m + 1) / 2) / (n_m * (len(y) - n_m)))
        fpr, tpr, _ = roc_curve(y, scores)
        tprs.append(np.interp(0.01, fpr, tpr))
    return tuple(np.quantile(aucs, [0.025, 0.975])), tuple(np.quantile(tprs, [0.025, 0.975]))


def splits(name: str, seed: int, n_max: int | None) -> tuple[pd.DataFrame, ...]:
    """(real, holdout, fresh, memoriser, mixture) for one dataset, ``n`` rows each."""
    file, _, default_n = DATASETS[name]
    df = pd.read_csv(DATA / file)
    n = min(n_max or default_n, len(df) // 3)
    order = np.random.default_rng(seed).permutation(len(df))
    real, holdout, fresh = (
        df.iloc[order[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(3)
    )
    k = n // 10
    planted = real.iloc[np.sort(np.random.default_rng(seed + 1).choice(n, k, replace=False))]
    mixture = pd.concat([fresh.iloc[k:], planted], ignore_index=True)
    return real, holdout, fresh, real.copy(), mixture


def review(name: str, args: argparse.Namespace) -> dict[str, object]:
    real, holdout, fresh, memoriser, mixture = splits(name, args.seed, args.n)
    sensitive = DATASETS[name][1]
    schema = infer_schema(real)
    encoder = TabularEncoder(schema).fit(real)
    policy = load_policy()
    print(f"\n=== {name}: {len(real):,} members / {len(holdout):,} non-members (holdout) / "
          f"{len(fresh):,} fresh rows; {len(schema.numeric)} numeric + "
          f"{len(schema.categorical)} categorical columns; seed {args.seed}")  # fmt: skip
    summary: dict[str, object] = {}
    for label, synthetic in (("fresh", fresh), ("memoriser", memoriser), ("mixture", mixture)):
        start = time.perf_counter()
        report = evaluate_privacy(
            real, synthetic, holdout, schema=schema, encoder=encoder, sensitive=sensitive,
            seed=args.seed,
        )  # fmt: skip
        wall = time.perf_counter() - start
        print(f"\n--- {name} / {label} (evaluate_privacy {wall:.1f} s; errors {report.errors})")
        print(f"  {'attack':<20s} {'AUC':>6s} {'95% CI':>15s} {'chance band':>15s} "
              f"{'TPR@1%':>7s} {'chance band':>15s} {'sanity AUC':>10s}")  # fmt: skip
        outside_auc, outside_tpr, caught = [], [], []
        for r in report.membership_inference:
            if r.error:
                print(f"  {r.attack:<20s} ERROR {r.error}")
                continue
            (a_lo, a_hi), (t_lo, t_hi) = chance_band(
                r.scores, r.is_member, args.n_permutations, args.seed
            )
            ref = "   -" if r.reference_auc is None else f"{r.reference_auc:.3f}"
            print(f"  {r.attack:<20s} {r.auc:6.3f} [{r.auc_ci[0]:.3f}, {r.auc_ci[1]:.3f}] "
                  f"[{a_lo:.3f}, {a_hi:.3f}] {r.tpr_at_fpr_1pct:7.3f} [{t_lo:.3f}, {t_hi:.3f}] "
                  f"{ref:>10s}")  # fmt: skip
            if abs(r.auc - 0.5) > 0.05:
                outside_auc.append(r.attack)
            if not t_lo <= r.tpr_at_fpr_1pct <= t_hi:
                outside_tpr.append(r.attack)
            if r.auc >= 0.9:
                caught.append(r.attack)
        n_attacks = sum(r.error is None for r in report.membership_inference)
        if label == "fresh":
            print(f"  fresh: AUC outside 0.5 +- 0.05: {outside_auc or 'none'}; TPR@1% outside "
                  f"the chance band: {outside_tpr or 'none'}")  # fmt: skip
        if label == "memoriser":
            print(f"  memoriser: {len(caught)} of {n_attacks} attacks at AUC >= 0.9: {caught}")
        eps = report.epsilon_lower_bound
        if eps is not None:
            print(f"  epsilon >= {eps.epsilon:.3f} ({eps.attack}; {eps.caveat})")
        wp = report.to_dict()["wp29"] or {}
        verdicts = apply_policy(policy, {"privacy": report.to_dict()}, kind="table")
        rules = [v for v in verdicts.rules if v.rule.startswith(PRIVACY_RULES)]
        required = [v for v in rules if v.required]
        worst = max(
            (v.verdict for v in required), key=["n/a", "pass", "warn", "fail"].index,
            default="n/a",
        )  # fmt: skip
        print(f"  default policy, privacy rules: {worst.upper()} (required rules' worst)")
        for v in rules:
            value = "nan" if v.value is None else f"{v.value:.4g}"
            margin = "" if v.value is None else f"margin to fail {v.value - v.fail_at:+.4g}"
            ci = ""
            part = v.rule.removeprefix("wp29_")
            if v.rule.startswith("wp29_") and isinstance(wp.get(part), dict):
                lo, hi = wp[part].get("risk_ci", (None, None)) or (None, None)
                ci = "" if lo is None else f" risk CI [{lo:.3f}, {hi:.3f}]"
            print(f"    {v.rule:<32s} {v.verdict:<10s} {value:>8s} (pass <= {v.pass_at:g}, "
                  f"fail > {v.fail_at:g}; {'required' if v.required else 'advisory'}) "
                  f"{margin}{ci} {v.note}")  # fmt: skip
        summary[label] = {"verdict": worst, "caught": len(caught), "outside_auc": outside_auc}
    return summary


def bias_check(name: str, args: argparse.Namespace) -> None:
    """Fresh-sample AUC of every attack over ``--bias-seeds`` seeded splits: noise or bias?

    One split's AUC has a standard error of about 0.024-0.033 at 300 + 300 rows; the mean over
    k independent splits has k ** -0.5 of that, so a bias (e.g. a row scored with its own
    reference row) shows as a mean several standard errors away from 0.5.
    """
    aucs: dict[str, list[float]] = {}
    for seed in range(args.bias_seeds):
        real, holdout, fresh, _, _ = splits(name, seed, args.n)
        encoder = TabularEncoder(infer_schema(real)).fit(real)
        for r in membership_inference(real, fresh, holdout, encoder=encoder, seed=seed,
                                      n_bootstrap=20):  # fmt: skip
            aucs.setdefault(r.attack, []).append(r.auc)
    print(f"\n--- {name} / fresh over {args.bias_seeds} seeded splits (bias check)")
    print(f"  {'attack':<20s} {'mean AUC':>8s} {'SE':>6s} {'(mean-0.5)/SE':>13s} {'SD':>6s} "
          f"{'min':>6s} {'max':>6s}")  # fmt: skip
    for attack, values in aucs.items():
        v = np.asarray(values)
        se = v.std(ddof=1) / np.sqrt(len(v))
        print(f"  {attack:<20s} {v.mean():8.4f} {se:6.4f} {(v.mean() - 0.5) / se:13.2f} "
              f"{v.std(ddof=1):6.4f} {v.min():6.3f} {v.max():6.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--n", type=int, default=None, help="rows per part (default per data)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-permutations", type=int, default=200)
    parser.add_argument(
        "--bias-seeds", type=int, default=0, help="also the fresh-sample AUC over N splits"
    )
    args = parser.parse_args()
    for name in args.datasets if args.bias_seeds else ():
        bias_check(name, args)
    results = {name: review(name, args) for name in args.datasets}
    print("\n=== summary")
    for name, s in results.items():
        print(f"  {name}: fresh {s['fresh']['verdict']} (AUC outside 0.5 +- 0.05: "
              f"{s['fresh']['outside_auc'] or 'none'}); memoriser caught by "
              f"{s['memoriser']['caught']} attacks at AUC >= 0.9, {s['memoriser']['verdict']}; "
              f"mixture {s['mixture']['verdict']}")  # fmt: skip


if __name__ == "__main__":
    main()
