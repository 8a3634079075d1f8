"""Black-box membership-inference attacks that need only the released synthetic data.

Every attack gives each record of an *attack set* (training rows = members, holdout rows =
non-members, balanced) a score, higher = "more likely a member"; :func:`summarize_attack` turns
scores into an :class:`AttackResult` with the ROC curve, the ROC AUC (Eiring 2022, thesis
section 2.4: ROC curves against the chance diagonal for a 50-50 query set), a bootstrap CI and
TPR at low FPR. The attacks:

* ``distance``: Gower distance to the nearest synthetic record (Urban Institute appendix,
  "Membership inference test"); see :mod:`synthreview.metrics.privacy.gower`.
* ``nn_seeker``: L2 distance to the nearest synthetic record in the encoded space (Hide-and-Seek
  challenge, section 3.1), with the challenge's own score: the N closest records are called
  members and the accuracy against truth is reported.
* ``classifier_seeker``: a classifier separating synthetic rows from attack-set rows
  (Hide-and-Seek section 3.2, "binary predictor"; fully grown Extra-Trees in place of the RNN
  for tables), cross-fitted so that no record is scored by a model that saw it.
* ``density``: DOMIAS-style log density ratio log p_synthetic(x) - log p_reference(x), both
  densities Gaussian mixtures in a PCA space fitted on synthetic rows; the reference density is
  fitted on holdout rows with the same cross-fitting, so a non-member is never scored by a
  density that was fitted on it.

* the no-box ensemble of :mod:`synthreview.metrics.privacy.attacks` (DCR difference, calibrated
  GAN-Leaks, NN distance ratio, DOMIAS and LOGAN KDEs, Monte-Carlo counting, local
  neighbourhood, LOGAN classifier): the attacker's reference sample is the whole holdout, with
  each scored holdout row left out of its own reference (leave-one-out or cross-fitting).
* ``rare_values``: how many of a record's rare values (at most twice in training and holdout
  together) the synthetic rows reproduce exactly; catches generators that sample empirical
  marginals, which no distance or density attack sees (:mod:`synthreview.metrics.privacy.
  rare_values`; Stadler et al. 2022, Giomi et al. 2022).

Members and non-members: :func:`attack_set` draws ``min(max_attack, n_real, n_holdout)``
training rows and as many holdout rows without replacement from ``numpy.random.default_rng(seed)``
(sorted positions); the sanity run draws two disjoint halves of a permutation of the non-members
(so both runs share one set of per-row searches).

A new attack (e.g. a recurrent seeker for glucose traces) only has to produce one score per
attack-set row and call :func:`summarize_attack`. The attack set, ROC summary and bootstrap
live in :mod:`synthreview.metrics.privacy.attack_stats` and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.decomposition import PCA
from sklearn.mixture import GaussianMixture

from synthreview.encoding import canonical_order
from synthreview.engine import single_threaded, thread_map
from synthreview.errors import DataError, error_message
from synthreview.memo import Memo
from synthreview.metrics.privacy.attack_stats import (
    AttackResult,
    attack_set,
    failed_attack,
    summarize_attack,
)
from synthreview.metrics.privacy.attacks import (
    NO_BOX_ATTACKS,
    NoBoxInputs,
    encoded_nearest,
    forest_classifier,
    native_categories,
    no_box_scores,
)
from synthreview.metrics.privacy.gower import gower_nearest
from synthreview.metrics.privacy.rare_values import rare_value_samples
from synthreview.splits import cv_folds, draw_rows

__all__ = [
    "ATTACKS",
    "ATTACK_LABELS",
    "COLUMN_ATTACKS",
    "classifier_seeker_scores",
    "density_scores",
    "membership_inference",
    "nn_seeker_scores",
]

ATTACKS = ("distance", "nn_seeker", "classifier_seeker", "density", *NO_BOX_ATTACKS, "rare_values")
#: attacks that read named columns: they do not run on already-encoded arrays (trace embeddings)
COLUMN_ATTACKS = frozenset({"distance", "rare_values"})
#: attack name -> label for legends and reports
ATTACK_LABELS: dict[str, str] = {
    "distance": "DCR, Gower (Urban)",
    "nn_seeker": "DCR, L2 = GAN-Leaks (Hide-and-Seek NN seeker)",
    "classifier_seeker": "Classifier seeker (cross-fitted Extra-Trees)",
    "density": "DOMIAS, GMM density ratio",
    "dcr_difference": "DCR difference (Synth-MIA DCR-Diff)",
    "gan_leaks_cal": "GAN-Leaks calibrated (DOMIAS baseline)",
    "nndr": "NN distance ratio",
    "domias_kde": "DOMIAS, KDE density ratio",
    "logan_kde": "LOGAN-style KDE of synthetic rows",
    "mc": "Monte-Carlo counting (Hilprecht)",
    "local_neighbourhood": "Local neighbourhood (Synth-MIA)",
    "logan_classifier": "LOGAN classifier, synthetic vs reference",
    "rare_values": "Rare values reproduced (Stadler 2022; Giomi 2022)",
}
#: cross-fitted model attacks that skip the holdout-only sanity run: no scored row is ever seen by
#: the model (classifier) or density that scores it, so on two halves of the holdout members and
#: non-members are exchangeable and the expected AUC is 0.5 by construction; the run would cost
#: a second full set of fits to show only that. The
#: sanity run stays for the search-based attacks, whose leave-one-out handling it checks.
NO_SANITY_RUN = frozenset({"classifier_seeker", "density", "logan_classifier"})


def nn_seeker_scores(
    attack_x: np.ndarray,
    synthetic_x: np.ndarray,
    *,
    categorical_blocks: Sequence[Sequence[int]] | None = None,
) -> np.ndarray:
    """Minus the L2 distance to the nearest synthetic row (Hide-and-Seek section 3.1)."""
    dist, _ = encoded_nearest(attack_x, synthetic_x, categorical_blocks=categorical_blocks)
    return -dist[:, 0]


def _folds(
    is_member: np.ndarray, n_folds: int, seed: int, groups: np.ndarray | None = None
) -> np.ndarray:
    """Fold number of every attack row, stratified on membership (a person's rows in one)."""
    fold = np.empty(len(is_member), dtype=np.int64)
    splits = cv_folds(is_member, n_splits=n_folds, seed=seed, groups=groups)
    for k, (_, test) in enumerate(splits):
        fold[test] = k
    return fold


def classifier_seeker_scores(
    attack_x: np.ndarray,
    synthetic_x: np.ndarray,
    is_member: np.ndarray,
    *,
    n_folds: int = 2,
    max_synthetic: int = 20_000,
    estimator: Any = None,
    categorical_blocks: Sequence[Sequence[int]] | None = None,
    groups: np.ndarray | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Cross-fitted P(synthetic | x) for every attack row (Hide-and-Seek section 3.2).

    For fold k the classifier learns synthetic rows (label 1) against the attack rows of the
    *other* folds (label 0) and scores only fold k. Regions the generator over-populates around
    its training records score high. Membership is used only to stratify the folds.

    Parameters
    ----------
    attack_x, synthetic_x : ndarray
    is_member : ndarray of bool
    n_folds : int, default=2
        Two (was five): each fold's model then learns from half the attack rows, the cost of
        the fully grown forest falls 2.5-fold, and a copy is caught in either fold.
    max_synthetic : int, default=20_000
        Synthetic rows used for training (seeded subsample) to bound the cost.
    estimator : classifier, optional
        Default :func:`~synthreview.metrics.privacy.attacks.forest_classifier` (fully grown
        Extra-Trees: the binary predictor must be free to over-fit, as the challenge's RNN
        was; an early-stopped boosting smoothed verbatim copies away); cloned per fold; needs
        ``predict_proba``.
    categorical_blocks : sequence of sequence of int, optional
        One-hot positions of each categorical column (``encoder.groups``): the default
        estimator then sees one level-code feature per column (Adult: 15 features instead
        of 109).
    groups : ndarray, optional
        Person of every attack row: the folds then divide people, so no model learns a
        person's rows and scores the same person's others.
    seed : int, default=0
    """
    rng = np.random.default_rng(seed)
    synthetic_x = synthetic_x[canonical_order(synthetic_x)]  # fits free of the input row order
    if len(synthetic_x) > max_synthetic:
        synthetic_x = synthetic_x[draw_rows(rng, len(synthetic_x), max_synthetic)]
    if estimator is None:
        if categorical_blocks:
            attack_x = native_categories(attack_x, categorical_blocks)[0]
            synthetic_x = native_categories(synthetic_x, categorical_blocks)[0]
        estimator = forest_classifier(seed=seed)
    fold = _folds(is_member, n_folds, seed, groups)
    scores = np.empty(len(attack_x))

    def fit_fold(k: int) -> np.ndarray:
        train = attack_x[fold != k]
        x = np.vstack([synthetic_x, train])
        y = np.r_[np.ones(len(synthetic_x)), np.zeros(len(train))]
        return clone(estimator).fit(x, y).predict_proba(attack_x[fold == k])[:, 1]

    # one OpenMP thread per fit: on fold-sized data thread barriers cost more than they save,
    # and on a shared CPU they oversubscribe (measured 18.9 s vs 3.2 s for one 5k-row fit);
    # the folds' fits instead run side by side on the engine's threads (same scores)
    for k, found in enumerate(thread_map(fit_fold, range(n_folds))):
        scores[fold == k] = found
    return scores


def density_scores(
    attack_x: np.ndarray,
    synthetic_x: np.ndarray,
    reference_x: np.ndarray,
    is_member: np.ndarray,
    reference_rows: np.ndarray,
    *,
    n_dims: int = 5,
    n_mixture: int = 10,
    n_folds: int = 3,
    groups: np.ndarray | None = None,
    reference_groups: np.ndarray | None = None,
    seed: int = 0,
) -> np.ndarray:
    """DOMIAS-style score log p_synthetic(x) - log p_reference(x) per attack row.

    Estimator: PCA (fitted on the synthetic rows, the attacker's own data; up to ``n_dims``
    components) then full-covariance
    Gaussian mixtures with ``n_mixture`` components, one on the synthetic rows and, per fold,
    one on the reference rows that are not attack rows of that fold. Three folds (was five):
    each reference mixture still sees at least two thirds of the held-out attack rows plus
    every other reference row, and a 10-component mixture in 5 PCA dimensions is already
    well determined by thousands of rows (Adult, 10k + 10k attack rows vs 50k: 4.5 s -> 3.7 s,
    AUC 0.498 -> 0.499).

    Parameters
    ----------
    attack_x, synthetic_x, reference_x : ndarray
    is_member : ndarray of bool
    reference_rows : ndarray of int, shape (len(attack_x),)
        Position of each attack row in ``reference_x`` (-1 if it is not a reference row).
    groups, reference_groups : ndarray, optional
        Person of every attack row and of every reference row (labelled alike): the folds
        then divide people, and fold ``k``'s reference density leaves out every reference
        row of the fold's people, not only the scored rows.
    """
    # the projection was once fitted on the training rows: an attacker never holds those, and
    # members then sit in components fitted to them (German credit, 300 + 300 fresh rows,
    # AUC spread over 12 seeded splits 0.036; 0.024 with the synthetic rows, as the others)
    n_dims = max(1, min(n_dims, synthetic_x.shape[1], len(synthetic_x) - 1))

    def mixture(x: np.ndarray) -> GaussianMixture:
        k = max(1, min(n_mixture, len(x) // 50))
        model = GaussianMixture(k, covariance_type="full", reg_covar=1e-4, random_state=seed)
        return model.fit(x)

    # one thread for the projection and the n_dims x n_dims mixture algebra: a BLAS/OpenMP pool
    # only adds overhead here, and its reduction order depends on the thread count, so the
    # scores (and the report's bytes) would differ between a 1- and a 2-thread run or a cluster
    # task and the in-process review
    with single_threaded():
        pca = PCA(n_components=n_dims, random_state=seed).fit(
            synthetic_x[canonical_order(synthetic_x)]
        )
        a, r = pca.transform(attack_x), pca.transform(reference_x)
        synthetic_p = pca.transform(synthetic_x[canonical_order(synthetic_x)])
    fold = _folds(is_member, n_folds, seed, groups)

    def fit(k: int) -> np.ndarray:  # -1: the synthetic mixture; k >= 0: fold k's reference
        if k < 0:
            return mixture(synthetic_p).score_samples(a)
        keep = np.ones(len(r), dtype=bool)
        keep[reference_rows[(fold == k) & (reference_rows >= 0)]] = False
        if groups is not None and reference_groups is not None:
            keep[np.isin(np.asarray(reference_groups), np.asarray(groups)[fold == k])] = False
        return mixture(r[keep]).score_samples(a[fold == k])

    # the n_folds + 1 mixtures are independent: side by side on the engine's threads, each
    # with one BLAS thread as before (thread_map bounds BLAS to one thread per fit)
    found = thread_map(fit, range(-1, n_folds))
    log_synthetic = found[0]
    log_reference = np.empty(len(attack_x))
    for k in range(n_folds):
        log_reference[fold == k] = found[k + 1]
    return log_synthetic - log_reference


def membership_inference(
    real: np.ndarray | pd.DataFrame,
    synthetic: np.ndarray | pd.DataFrame,
    holdout: np.ndarray | pd.DataFrame,
    *,
    encoder: Any = None,
    attacks: Sequence[str] | None = None,
    max_attack: int = 10_000,
    n_bootstrap: int = 200,
    real_groups: np.ndarray | None = None,
    holdout_groups: np.ndarray | None = None,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
    memo: Memo | None = None,
) -> tuple[AttackResult, ...]:
    """Run the membership-inference attacks; one :class:`AttackResult` per attack.

    Each attack except :data:`NO_SANITY_RUN` also runs on the sanity split of the holdout
    (``reference_auc``; ``None`` for the cross-fitted model attacks). An attack
    that raises is returned as a result with ``error`` set; the others still run.

    Parameters
    ----------
    real, synthetic, holdout : DataFrame or ndarray
        DataFrames need ``encoder`` (a fitted ``TabularEncoder``; Gower uses its schema's
        analysed columns, the other attacks its encoding). Arrays are already-encoded features
        (e.g. trace embeddings) and exclude the Gower ``distance`` attack.
    encoder : TabularEncoder, optional
    attacks : sequence of str, optional
        Subset of ``ATTACKS``; default all that apply.
    max_attack : int, default=10_000
        Members (and non-members) in the attack set at most.
    n_bootstrap : int, default=200
        Bootstrap resamples for the AUC interval.
    real_groups, holdout_groups : ndarray, optional
        Person of every real / holdout row (a person-level review's row-level attacks): the
        attack set, the sanity split and the cross-fitting folds then divide people
        (:func:`~synthreview.metrics.privacy.attack_stats.attack_set`), and every attack
        that reads the reference sample (the holdout) leaves out all rows of the scored
        row's person, not only the row (:class:`~synthreview.metrics.privacy.attacks.
        NoBoxInputs`, :func:`density_scores`). People are judged by
        :mod:`synthreview.metrics.privacy.person`; these row scores are shown.
    seed : int, default=0
    progress : callable(fraction, message), optional
    memo : Memo, optional
        The review's :class:`~synthreview.memo.Memo`: the no-box attacks' searches of the
        holdout alone are computed once per review (:class:`~synthreview.metrics.privacy.
        attacks.NoBoxInputs`).

    Returns
    -------
    tuple of AttackResult
        AUC: 0.5 is ideal (chance), 1 = every member identified.
    """
    frames = isinstance(real, pd.DataFrame)
    if frames:
        if encoder is None:
            raise ValueError("encoder is required when real, synthetic, holdout are DataFrames")
        cols, cats = encoder.schema.analysed, encoder.schema.categorical
        synthetic_table = synthetic[cols]
        blocks = [encoder.groups[c] for c in cats]
        real_x, synthetic_x, holdout_x = (
            encoder.transform(df, name=name)
            for df, name in zip(
                (real, synthetic, holdout), ("real", "synthetic", "holdout"), strict=True
            )
        )
    else:
        blocks = None
        real_x, synthetic_x, holdout_x = (
            np.asarray(x, np.float32) for x in (real, synthetic, holdout)
        )
    default = ATTACKS if frames else tuple(a for a in ATTACKS if a not in COLUMN_ATTACKS)
    attacks = tuple(default if attacks is None else attacks)
    unknown = sorted(set(attacks) - set(default))
    if unknown:
        raise ValueError(f"attacks must be among {list(default)}; got {unknown}")
    sets = attack_set(len(real_x), len(holdout_x), max_attack=max_attack, seed=seed,
                      sanity_within_nonmembers=True, real_groups=real_groups,
                      holdout_groups=holdout_groups)  # fmt: skip
    # the person of every row of either run (training and holdout people told apart)
    people = None
    if real_groups is not None and holdout_groups is not None:
        people = {"real": np.char.add("r:", np.asarray(real_groups).astype(str)),
                  "holdout": np.char.add("h:", np.asarray(holdout_groups).astype(str))}  # fmt: skip
    # (member rows, non-member rows) per run: the real attack and the holdout-only sanity split
    runs = {
        "main": ((real_x, sets.real_rows), (holdout_x, sets.holdout_rows)),
        "reference": (
            (holdout_x, sets.reference_member_rows),
            (holdout_x, sets.reference_nonmember_rows),
        ),
    }

    # every row either run scores, once: the training rows of the main run, then the holdout
    # rows of both runs (the sanity run re-scores holdout rows the main run scores too); a row's
    # nearest distances, densities and Gower distance do not depend on the run
    used = np.unique(np.r_[sets.holdout_rows, sets.reference_member_rows,
                           sets.reference_nonmember_rows])  # fmt: skip
    pool_of_holdout = np.full(len(holdout_x), -1)
    pool_of_holdout[used] = len(sets.real_rows) + np.arange(len(used))
    pool_own = np.r_[np.full(len(sets.real_rows), -1), used]
    shared: dict[str, Any] = {}

    def pool_rows(run: str) -> np.ndarray:
        """Positions in the pool of the run's rows (members first)."""
        (m_x, m_rows), (_, o_rows) = runs[run]
        members = pool_of_holdout[m_rows] if m_x is holdout_x else np.arange(len(m_rows))
        return np.r_[members, pool_of_holdout[o_rows]]

    def no_box(run: str) -> NoBoxInputs:
        if "pool" not in shared:  # one set of searches and densities, shared by attacks
            x = np.vstack([real_x[sets.real_rows], holdout_x[used]])
            pool_people = reference_people = None
            if people is not None:
                pool_people = np.r_[people["real"][sets.real_rows], people["holdout"][used]]
                reference_people = people["holdout"]
            shared["pool"] = NoBoxInputs(
                x, synthetic_x, holdout_x, pool_own, categorical_blocks=blocks,
                groups=pool_people, reference_groups=reference_people, seed=seed, memo=memo,
            )  # fmt: skip
        if run not in shared:
            shared[run] = shared["pool"].subset(pool_rows(run))
        return shared[run]

    def scores_of(attack: str, run: str) -> np.ndarray:
        (m_x, m_rows), (o_x, o_rows) = runs[run]
        is_member = np.r_[np.ones(len(m_rows), bool), np.zeros(len(o_rows), bool)]
        x = np.vstack([m_x[m_rows], o_x[o_rows]])
        groups = None
        if people is not None:
            groups = np.r_[people["holdout" if m_x is holdout_x else "real"][m_rows],
                           people["holdout"][o_rows]]  # fmt: skip
        # positions in the holdout (the attacker's reference sample) of the rows being scored
        in_holdout = np.r_[m_rows if m_x is holdout_x else np.full(len(m_rows), -1), o_rows]
        if attack == "distance":
            if "gower" not in shared:
                query = pd.concat([real[cols].iloc[sets.real_rows], holdout[cols].iloc[used]])
                shared["gower"] = gower_nearest(query, synthetic_table, categorical=cats)[0]
            return -shared["gower"][pool_rows(run)]
        if attack == "rare_values":
            if "rare" not in shared:
                shared["rare"] = rare_value_samples(real, synthetic, holdout, columns=cols,
                                                    numeric=encoder.schema.numeric)  # fmt: skip
            rare = shared["rare"]
            members = rare.holdout[m_rows] if m_x is holdout_x else rare.real[m_rows]
            return np.r_[members, rare.holdout[o_rows]].astype(np.float64)
        if attack == "nn_seeker":
            return -no_box(run).synthetic_knn[:, 0]
        if attack == "classifier_seeker":
            return classifier_seeker_scores(
                x, synthetic_x, is_member, categorical_blocks=blocks, groups=groups, seed=seed
            )
        if attack == "density":
            return density_scores(
                x, synthetic_x, holdout_x, is_member, in_holdout, groups=groups,
                reference_groups=None if people is None else people["holdout"], seed=seed,
            )  # fmt: skip
        return no_box_scores(attack, no_box(run))

    results = []
    for i, attack in enumerate(attacks):
        if progress is not None:
            progress(i / len(attacks), f"membership inference: {ATTACK_LABELS[attack]}")
        try:
            main = scores_of(attack, "main")
            reference = None if attack in NO_SANITY_RUN else scores_of(attack, "reference")
            finite = np.isfinite(main).all() and (reference is None or np.isfinite(reference).all())
            if not finite:
                raise DataError(f"{attack} produced non-finite scores (no comparable features)")
            results.append(
                summarize_attack(
                    attack,
                    main,
                    sets.is_member,
                    reference_scores=reference,
                    reference_is_member=sets.reference_is_member,
                    with_challenge=attack == "nn_seeker",
                    n_bootstrap=n_bootstrap,
                    seed=seed,
                )
            )
        except Exception as exc:  # one failing attack must not hide the others
            results.append(failed_attack(attack, error_message(exc)))
    return tuple(results)
