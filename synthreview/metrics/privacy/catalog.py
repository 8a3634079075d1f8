"""Privacy metrics as the reviewer sees them, bound to their functions where two tables suffice.

See :mod:`synthreview.metrics.info`. The attacks (membership inference, WP29, the ε bound) run
inside the privacy section on a fitted encoder and value-ordered attack sets, and the audit
metrics read the release audit: those entries bind no function and say so (``unbound``).
"""

from __future__ import annotations

from collections.abc import Callable

from synthreview.encoding import TabularEncoder
from synthreview.metrics.info import MetricInfo
from synthreview.metrics.privacy.rare_values import rare_value_auc
from synthreview.metrics.privacy.section import distance_to_closest_record, row_hashes

_URBAN = "Urban Institute, appendix Metrics Descriptions, Disclosure risk"
_CARLINI = (
    "Carlini et al. (2022), Membership Inference Attacks From First Principles (TPR at low FPR)"
)
_DCR = "The DCR Delusion, arXiv 2505.01524 (distance-based scores do not measure privacy)"
_WP29 = (
    "Article 29 Working Party, Opinion 05/2014 on Anonymisation Techniques (singling out, "
    "linkability, inference); Giomi et al. (2023), Anonymeter"
)
_NO_ATTACK = "the same attack with holdout rows in both roles: what pure chance gives"
_PERSON = (
    "MT-MIA (arXiv 2602.07126) and FERMI (arXiv 2605.11527): row-level audits underestimate "
    "user-level leakage; a person's row scores aggregated (mean by default)"
)
_PERSON_UNBOUND = (
    "the privacy section's person-level attack: it needs the person column, the fitted encoder "
    "and rounds of one row per person (tests/test_person_level.py)"
)
_ATTACK = (
    "the privacy section's attack: it needs the review's fitted encoder and value-ordered attack "
    "sets (tests/test_privacy.py)"
)
_AUDIT = "read from the release audit of a whole review (tests/test_audit.py)"
_SHADOW = (
    "Houssiau et al. (2022), TAPAS: a Toolbox for Adversarial Privacy Auditing of Synthetic "
    "Data (random targeted queries, closest distance); Stadler et al. (2022), Synthetic Data - "
    "Anonymisation Groundhog Day, USENIX Security (shadow-model attack); Clopper & Pearson (1934)"
)
_SHADOW_REFERENCE = (
    "no holdout reference: chance is the false-positive rate achieved on the shadows trained "
    "without their target (at most 1 %)"
)
_SHADOW_UNBOUND = (
    "trains the reviewed generator on shadow datasets: needs an importable generator "
    "(tests/test_shadow.py)"
)


def _dcr(score: str) -> Callable[..., float]:
    """``score`` of :func:`distance_to_closest_record` on the tables encoded as for a review."""

    def compute(real, synthetic, *, holdout, schema, seed=0) -> float:
        if holdout is None:
            raise ValueError(f"{score} needs a holdout table; got holdout=None instead")
        encoder = TabularEncoder(schema).fit(real)
        result = distance_to_closest_record(
            encoder.transform(real, name="real"),
            encoder.transform(synthetic, name="synthetic"),
            encoder.transform(holdout, name="holdout"),
            real_hashes=row_hashes(real),
            synthetic_hashes=row_hashes(synthetic),
            holdout_hashes=row_hashes(holdout),
            seed=seed,
        )
        return getattr(result, score)

    compute.__name__ = compute.__qualname__ = score
    return compute


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        name="mia_auc",
        section="privacy",
        label="MIA AUC (worst attack)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="membership_inference[*].auc",
        citation=f"{_URBAN}, membership inference test; Eiring (2022), §2.4",
        meaning="how well the best attacker tells training rows from unseen rows using the "
        "synthetic data; 0.5 = a coin toss",
        holdout_meaning=_NO_ATTACK,
        unbound=_ATTACK,
        rules=("mia_auc",),
    ),
    MetricInfo(
        name="mia_tpr_at_fpr_1pct",
        section="privacy",
        label="attacker hits at 1 % false alarms",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.01,
        key="membership_inference[*].tpr_at_fpr_1pct",
        citation=_CARLINI,
        meaning="share of training rows the attacker identifies while wrongly accusing only 1 % "
        "of non-members; chance = 0.01",
        holdout_meaning=_NO_ATTACK,
        unbound=_ATTACK,
        rules=("mia_tpr_at_fpr_1pct",),
    ),
    MetricInfo(
        name="mia_tpr_at_fpr_01pct",
        section="privacy",
        label="attacker hits at 0.1 % false alarms",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.001,
        key="membership_inference[*].tpr_at_fpr_01pct",
        citation=_CARLINI,
        meaning="share of training rows identified at 0.1 % false alarms; chance = 0.001",
        holdout_meaning=_NO_ATTACK,
        unbound=_ATTACK,
    ),
    MetricInfo(
        name="dcr_share",
        section="privacy",
        label="DCR share closer to training",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="dcr.share_closer_to_train",
        citation=_DCR,
        meaning="share of synthetic rows nearer a training row than any holdout row; 0.5 = no "
        "sign of memorising (a warning sign, not proof of privacy either way)",
        holdout_meaning="0.5 by construction when training and holdout are equally large",
        function=_dcr("share_closer_to_train"),
        identical="worst",  # identical rows are copies
        rules=("dcr_share",),
    ),
    MetricInfo(
        name="exact_copy_share",
        section="privacy",
        label="exact copies",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="dcr.exact_copy_share",
        citation=_DCR,
        meaning="share of synthetic rows identical to a training row on every analysed column",
        holdout_meaning="how often real rows repeat a training row anyway "
        "(dcr.holdout_exact_copy_share)",
        fmt=".2%",
        function=_dcr("exact_copy_share"),
        identical="worst",
    ),
    MetricInfo(
        name="attribute_inference_risk",
        section="privacy",
        label="attribute inference risk ratio",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=1.0,
        key="attribute_inference.risk_ratio",
        citation=f"{_URBAN}, attribute inference test",
        meaning="how much better an attacker infers the sensitive column from the synthetic "
        "data than from a fresh real sample; 1 = no added risk",
        holdout_meaning="the ratio is already relative to an attacker holding holdout rows",
        fmt=".2f",
        unbound=_ATTACK,
    ),
    MetricInfo(
        name="wp29_singling_out_univariate",
        section="privacy",
        label="singling out, one column (WP29)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="wp29.singling_out_univariate.risk",
        citation=_WP29,
        meaning="excess share of one-column predicates from the synthetic data that pick out "
        "exactly one training person, over chance",
        holdout_meaning="the attack's success against people outside training (the baseline)",
        unbound=_ATTACK,
        rules=("wp29_singling_out_univariate",),
    ),
    MetricInfo(
        name="wp29_singling_out_multivariate",
        section="privacy",
        label="singling out, several columns (WP29)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="wp29.singling_out_multivariate.risk",
        citation=_WP29,
        meaning="excess share of multi-column predicates that pick out exactly one training person",
        holdout_meaning="the attack's success against people outside training (the baseline)",
        unbound=_ATTACK,
        rules=("wp29_singling_out_multivariate",),
    ),
    MetricInfo(
        name="wp29_linkability",
        section="privacy",
        label="linkability (WP29)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="wp29.linkability.risk",
        citation=_WP29,
        meaning="excess share of training people whose two halves of columns an attacker links "
        "through the synthetic data",
        holdout_meaning="the attack's success against people outside training (the baseline)",
        unbound=_ATTACK,
        rules=("wp29_linkability",),
    ),
    MetricInfo(
        name="wp29_inference",
        section="privacy",
        label="attribute inference (WP29)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="wp29.inference.risk",
        citation=_WP29,
        meaning="excess share of a secret column an attacker guesses right for training people "
        "using the synthetic data",
        holdout_meaning="the attack's success against people outside training (the baseline)",
        unbound=_ATTACK,
        rules=("wp29_inference",),
    ),
    MetricInfo(
        name="mia_advantage",
        section="privacy",
        label="membership advantage (worst attack)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="membership_inference[*].advantage",
        citation="Yeom et al. (2018), Privacy Risk in Machine Learning (membership advantage)",
        meaning="largest gap between the share of training rows and of unseen rows the attacker "
        "calls members; 0 = no better than chance",
        holdout_meaning=_NO_ATTACK,
        unbound=_ATTACK,
    ),
    MetricInfo(
        name="epsilon_lower_bound",
        section="privacy",
        label="ε lower bound (black-box, loose)",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="epsilon_lower_bound.epsilon",
        citation="Jagielski et al. (2020), Auditing Differentially Private Machine Learning; "
        "Houssiau et al. (2022), TAPAS (Clopper-Pearson at 95 %)",
        meaning="the best attack, with its threshold chosen on other rows, proves the generator "
        "cannot be ε-differentially private for any smaller ε; it bounds from below only",
        holdout_meaning="0 when the attack does no better than chance on held-out rows",
        unbound="derived from the membership attacks' scores (tests/test_privacy.py)",
    ),
    MetricInfo(
        name="audit_copy_share",
        section="privacy",
        label="rows flagged as copies",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="audit.copies.lower",
        citation="Alaa et al. (2022), §3.2 (authenticity); exact copies; one-sided 95 % "
        "Clopper-Pearson lower bound (Clopper & Pearson 1934)",
        meaning="share of synthetic rows the audit's copy rules flag (authenticity, distance, "
        "exact copy), as a 95 % lower bound so sampling noise alone does not count",
        holdout_meaning="the share of holdout rows the same rules flag (leave-one-out): what "
        "unseen real people lose",
        unbound=_AUDIT,
        rules=("audit_copies",),
    ),
    MetricInfo(
        name="real_record_share",
        section="privacy",
        label="rows that are real records",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="audit.real_records.lower",
        citation="exact row matching (row hashes) against the training and holdout records; "
        "one-sided 95 % Clopper-Pearson lower bound (Clopper & Pearson 1934)",
        meaning="share of synthetic rows equal, on every analysed column, to a record of the "
        "training or holdout data: real people released as synthetic, as a 95 % lower bound",
        holdout_meaning="the share of holdout rows equal to a training row or another holdout "
        "row (leave-one-out): how often a fresh real sample repeats real records by coincidence",
        unbound="read from the release audit of a whole review (tests/test_real_records.py)",
        rules=("real_records",),
    ),
    MetricInfo(
        name="reattack_worse",
        section="privacy",
        label="attacks worse after curation",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="audit.reattack.attacks[*].worse",
        citation="Ganev & De Cristofaro (2023), On the Inadequacy of Similarity-based Privacy "
        "Metrics, arXiv 2312.05114 (a similarity filter can itself leak)",
        meaning="membership attacks whose AUC after curation lies above their before-curation "
        "95 % interval: removing rows exposed others",
        holdout_meaning="no holdout reference: each attack is compared with itself before curation",
        fmt=".0f",
        unbound="compares a review before and after curation (tests/test_audit.py)",
        rules=("reattack",),
    ),
    MetricInfo(
        name="shadow_tpr_at_fpr_1pct",
        section="privacy",
        label="shadow attack: hits at 1 % false alarms",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.01,
        key="shadow.tpr_at_fpr_1pct",
        citation=_SHADOW,
        meaning="the generator is trained again and again with and without a target record; the "
        "share of 'with' outputs an attacker spots while calling only 1 % of 'without' outputs "
        "'with' (chance = 0.01); with a 95 % Clopper-Pearson interval",
        holdout_meaning=_SHADOW_REFERENCE,
        unbound=_SHADOW_UNBOUND,
        rules=("shadow_tpr_at_fpr_1pct",),
    ),
    MetricInfo(
        name="shadow_auc",
        section="privacy",
        label="shadow attack AUC",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="shadow.auc",
        citation=_SHADOW,
        meaning="how well the shadow-model attacker ranks outputs of a generator trained with a "
        "target above outputs trained without it, over every target; 0.5 = a coin toss",
        holdout_meaning=_SHADOW_REFERENCE,
        unbound=_SHADOW_UNBOUND,
    ),
    MetricInfo(
        name="shadow_candidate_hits",
        section="privacy",
        label="shadow attack: targets called members of the candidate",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="shadow.candidate_hits.value",
        citation=_SHADOW,
        meaning="of the targets that are training records, the share the shadow-trained attacker "
        "calls members when shown the candidate itself (each at a threshold no shadow without "
        "the target passes)",
        holdout_meaning="shadow.candidate_false_alarms: the same share for holdout targets, "
        "which were never in training",
        unbound=_SHADOW_UNBOUND,
    ),
    MetricInfo(
        name="person_mia_auc",
        section="privacy",
        label="person-level MIA AUC (worst attack)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="person_level.attacks[*].auc",
        citation=_PERSON,
        meaning="how well the best attacker tells training people from unseen people when a "
        "person's rows are judged together; 0.5 = a coin toss",
        holdout_meaning=_NO_ATTACK,
        unbound=_PERSON_UNBOUND,
        rules=("person_mia_auc",),
    ),
    MetricInfo(
        name="person_mia_tpr_at_fpr_1pct",
        section="privacy",
        label="attacker hits per person at 1 % false alarms",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.01,
        key="person_level.attacks[*].tpr_at_fpr_1pct",
        citation=f"{_PERSON}; {_CARLINI}",
        meaning="share of training people the attacker identifies while wrongly accusing only 1 % "
        "of unseen people; chance = 0.01",
        holdout_meaning=_NO_ATTACK,
        unbound=_PERSON_UNBOUND,
        rules=("person_mia_tpr_at_fpr_1pct",),
    ),
    MetricInfo(
        name="person_mia_tpr_at_fpr_01pct",
        section="privacy",
        label="attacker hits per person at 0.1 % false alarms",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.001,
        key="person_level.attacks[*].tpr_at_fpr_01pct",
        citation=f"{_PERSON}; {_CARLINI}",
        meaning="share of training people identified at 0.1 % false alarms; chance = 0.001",
        holdout_meaning=_NO_ATTACK,
        unbound=_PERSON_UNBOUND,
    ),
    MetricInfo(
        name="person_epsilon_lower_bound",
        section="privacy",
        label="ε lower bound per person (black-box, loose)",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="person_level.epsilon_lower_bound.epsilon",
        citation=f"{_PERSON}; Jagielski et al. (2020), Auditing Differentially Private Machine "
        "Learning",
        meaning="the ε lower bound of the person-level attack scores: a person, not a row, is "
        "the unit a user-level DP guarantee protects",
        holdout_meaning="0 when the attack does no better than chance on held-out people",
        unbound=_PERSON_UNBOUND,
    ),
    MetricInfo(
        name="rare_value_auc",
        section="privacy",
        label="rare values reproduced (MIA AUC)",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.5,
        key="membership_inference[rare_values].auc",
        citation="Stadler et al. (2022), Synthetic Data - Anonymisation Groundhog Day (outliers "
        "stay exposed); Giomi et al. (2022), Anonymeter (rare values single people out)",
        meaning="how well counting a person's rare values that reappear exactly in the synthetic "
        "data tells training rows from unseen rows; 0.5 = a coin toss",
        holdout_meaning=_NO_ATTACK,
        function=rare_value_auc,
        identical="worst",  # identical rows reproduce every rare training value
    ),
    MetricInfo(
        name="dp_claim_excess",
        section="privacy",
        label="ε certified beyond the claim",
        direction="lower",
        range=(0.0, float("inf")),
        ideal=0.0,
        key="dp_claim.excess",
        citation="Kairouz et al. (2015), The Composition Theorem for Differential Privacy "
        "(hypothesis-testing bound); Nasr et al. (2023), Tight Auditing of Differentially "
        "Private Machine Learning (Clopper-Pearson at 95 %)",
        meaning="how far the ε the attacks prove exceeds the claimed ε: above 0 the claimed "
        "(ε, δ)-DP guarantee is contradicted by the evidence",
        holdout_meaning="0 for a fresh real sample: its attacks certify no ε at all",
        fmt=".2f",
        unbound="tests a claimed ε against the privacy section's attacks (tests/test_dp_claim.py)",
        rules=("dp_claim",),
    ),
    MetricInfo(
        name="phantom_share",
        section="privacy",
        label="phantom disclosures",
        direction="higher",
        range=(0.0, 1.0),
        ideal=1.0,
        key="dp_claim.phantom_share",
        citation="Amin et al., arXiv 2606.16952 (phantom disclosures: train/holdout test)",
        meaning="share of the members the best attack flags that non-members match equally: "
        "disclosures a model of the population would make, not membership leaks",
        holdout_meaning="about 1 for a fresh real sample: everything flagged is a phantom",
        unbound="derived from the claim test's operating point (tests/test_dp_claim.py)",
    ),
    MetricInfo(
        name="qi_replay_excess",
        section="privacy",
        label="QI replay beyond a fresh sample",
        direction="lower",
        range=(-1.0, 1.0),
        ideal=0.0,
        key="quasi_identifiers.balance",
        citation="Sweeney (2002), k-anonymity; El Emam & Dankar (2008), prosecutor risk; "
        "Newcombe (1998), hybrid score interval of a difference of proportions",
        meaning="share of synthetic rows whose quasi-identifier combination belongs to exactly "
        "one training person and to no holdout person, minus the share for which the reverse "
        "holds (training and holdout of equal size)",
        holdout_meaning="0: a generator that never saw the training rows is as likely to hit a "
        "holdout-unique combination as a training-unique one",
        fmt=".3f",
        unbound="needs the quasi-identifiers the reviewer names (tests/test_disclosure.py)",
        rules=("qi_replay",),
    ),
    MetricInfo(
        name="qi_k_anonymity",
        section="privacy",
        label="k-anonymity on the quasi-identifiers",
        direction="higher",
        range=(0.0, float("inf")),
        ideal=float("inf"),
        key="quasi_identifiers.k_anonymity",
        citation="Sweeney (2002), k-anonymity: a model for protecting privacy",
        meaning="size of the smallest group of candidate rows sharing one quasi-identifier "
        "combination; 1 = some row is alone on its quasi-identifiers",
        holdout_meaning="the holdout's own k on the same columns (real data is often 1 too)",
        fmt=".0f",
        unbound="needs the quasi-identifiers the reviewer names (tests/test_disclosure.py)",
    ),
    MetricInfo(
        name="qi_prosecutor_risk",
        section="privacy",
        label="mean prosecutor re-identification risk",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.0,
        key="quasi_identifiers.risk_mean",
        citation="El Emam & Dankar (2008), Protecting privacy using k-anonymity, JAMIA 15(5) "
        "(prosecutor risk 1/f_k); ARX 3.9 prosecutor model",
        meaning="mean over synthetic rows of 1 / (training rows sharing the row's "
        "quasi-identifiers), 0 where none does",
        holdout_meaning="the same mean over the holdout rows: what coincidence gives",
        fmt=".3f",
        unbound="needs the quasi-identifiers the reviewer names (tests/test_disclosure.py)",
    ),
    MetricInfo(
        name="group_mia_tpr_at_fpr_1pct",
        section="privacy",
        label="attacker hits at 1 % false alarms, worst group",
        direction="lower",
        range=(0.0, 1.0),
        ideal=0.01,
        key="groups.results[*].tpr_at_fpr_1pct",
        citation=f"{_CARLINI}; Meeus et al. (2024), Lost in the Averages (risk per group)",
        meaning="the highest share of a group's training rows an attacker identifies at 1 % "
        "false alarms among the same group's non-members, over the groups of the grouping "
        "columns and every attack; chance = 0.01",
        holdout_meaning=_NO_ATTACK,
        unbound="the privacy section's attacks cut by the grouping columns "
        "(tests/test_disclosure.py)",
        rules=("group_mia_tpr_at_fpr_1pct",),
    ),
)
