"""Reviewer options: what a review computes, and which section each choice affects.

:class:`ReviewOptions` is part of every cache key (the dashboard keeps each section per
``section_key``), so two reviews with the same data, seed and options give the same numbers.
Re-exported from :mod:`synthreview.review`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from synthreview.errors import ConfigError
from synthreview.generators.plugin import load_generator
from synthreview.io.persons import check_person_column
from synthreview.io.schema import Review
from synthreview.metrics.utility.constraints import parse_constraints
from synthreview.metrics.utility.regression import parse_formula
from synthreview.sampling import DEFAULT_SAMPLE_ROWS, check_sample_rows


@dataclass(frozen=True)
class ReviewOptions:
    """Reviewer choices that change results (part of every cache key).

    Attributes
    ----------
    embedding : {"oneclass", "none"}
        Evaluation embedding for the fidelity metrics (Alaa et al. 2022, appendix).
    target : str or None
        Column for ML efficacy (train on synthetic, test on real).
    sensitive : str or None
        Column for attribute inference.
    groups : tuple of str
        Grouping columns for proportion and mean errors.
    formula : str or None
        Regression for confidence-interval overlap, ``"y ~ a + b"``.
    max_attack : int
        Members and non-members per membership-inference attack set.
    n_bootstrap : int
        Bootstrap resamples for confidence intervals.
    l_diversity : int
        ℓ for the ℓ-diversity of tree leaves.
    motif_length : int
        Glucose motif length τ in steps (GlucoSynth §3.1). Default 6 (30 minutes): the paper's
        48 (4 hours) finds no motif shared by two samples of real CGM days (measured in
        :mod:`synthreview.metrics.glucose.motifs`).
    motif_tolerance : float
        Glucose motif matching tolerance σ in mg/dL per value (GlucoSynth §3.1; paper: 2).
    generator : str or None
        ``"module:function"`` of the generator's ``fit_sample(train, n, seed)`` callable,
        importable on this machine: the privacy section then runs the shadow-model attack
        (:mod:`synthreview.metrics.privacy.shadow`). None: no shadow attack.
    shadow_models : int
        Shadow generators trained per target (K), half with the target; >= 4.
    shadow_targets : int
        Target records of the shadow attack (T), >= 1.
    shadow_time_limit : float
        Seconds the shadow attack may take per candidate; past it the result is partial.
    person : str or None
        Column naming the person of each row (tables with several rows per person): membership
        is then also judged per person (:mod:`synthreview.metrics.privacy.person`). The review
        must hold it as an identifier column (:func:`synthreview.io.persons.with_person`).
    claimed_epsilon : float or None
        The ε of a differential-privacy guarantee claimed for the candidates: the privacy
        section tests it against the attacks (:mod:`synthreview.metrics.privacy.dp_claim`) and
        the ``dp_claim`` rule fails a candidate whose attacks contradict it. None: no claim.
    claimed_delta : float
        The claim's δ, in [0, 1).
    sample_rows : int or None
        Rows per table above which the population statistics are estimated on a random sample
        of this many rows (:mod:`synthreview.sampling`; the report says so, the audit still
        judges every row). None: every row (the CLI's ``--exact``).
    quasi_identifiers : tuple of str
        Columns an intruder may know (age, sex, area...): the privacy section measures QI
        replay, k-anonymity and prosecutor risk on them
        (:mod:`synthreview.metrics.privacy.quasi`, rule ``qi_replay``). Empty: not judged.
    label_leak_columns : tuple of str
        Columns tested for an answer key besides ``target``
        (:mod:`synthreview.metrics.utility.answer_key`, rule ``label_leak``).
    constraints : str or None
        The text of a constraints TOML file (:mod:`synthreview.metrics.utility.constraints`,
        rule ``constraint_violations``). None: no declared constraints, not judged.
    """

    embedding: str = "oneclass"
    target: str | None = None
    sensitive: str | None = None
    groups: tuple[str, ...] = ()
    formula: str | None = None
    max_attack: int = 10_000
    n_bootstrap: int = 200
    l_diversity: int = 10
    motif_length: int = 6
    motif_tolerance: float = 10.0
    generator: str | None = None
    shadow_models: int = 20
    shadow_targets: int = 10
    shadow_time_limit: float = 600.0
    person: str | None = None
    claimed_epsilon: float | None = None
    claimed_delta: float = 0.0
    sample_rows: int | None = DEFAULT_SAMPLE_ROWS
    quasi_identifiers: tuple[str, ...] = ()
    label_leak_columns: tuple[str, ...] = ()
    constraints: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(self.groups))
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        object.__setattr__(self, "label_leak_columns", tuple(self.label_leak_columns))
        if int(self.motif_length) < 2 or not float(self.motif_tolerance) > 0:
            raise ConfigError(
                "motif_length must be >= 2 steps and motif_tolerance > 0 mg/dL; got "
                f"{self.motif_length!r} and {self.motif_tolerance!r}"
            )
        check_sample_rows(self.sample_rows)
        if self.embedding not in ("oneclass", "none"):
            raise ConfigError(f"embedding must be 'oneclass' or 'none'; got {self.embedding!r}")


#: options each section's numbers depend on (the rest of ReviewOptions does not change them)
SECTION_OPTIONS = {
    "fidelity": ("embedding", "n_bootstrap", "sample_rows"),
    "privacy": (
        "embedding",
        "sample_rows",
        "sensitive",
        "l_diversity",
        "max_attack",
        "generator",
        "shadow_models",
        "shadow_targets",
        "shadow_time_limit",
        "person",
        "claimed_epsilon",
        "claimed_delta",
        "quasi_identifiers",
        "groups",
    ),
    "utility": (
        "target",
        "groups",
        "formula",
        "sample_rows",
        "label_leak_columns",
        "constraints",
        "person",
    ),
    "glucose": ("max_attack", "n_bootstrap", "motif_length", "motif_tolerance"),
}
#: sections that apply to each kind of review (``Review.kind``): traces have no utility
#: section, tables no glucose section
KIND_SECTIONS = {
    "table": ("fidelity", "privacy", "utility"),
    "traces": ("fidelity", "privacy", "glucose"),
}
_TARGET_NAMES = ("income", "target", "label", "class", "outcome", "y", "death", "creditability")


def default_options(review: Review) -> ReviewOptions:
    """Options a reviewer would start from: a conventional target column when one exists.

    The target (and the sensitive column for attribute inference) is the first analysed column
    whose name is a conventional outcome name (``income``, ``target``, ``label``, ...);
    grouping columns are ``race`` and ``sex`` when present (the appendix's example groups).
    """
    analysed = {c.lower(): c for c in review.schema.analysed}
    target = next((analysed[n] for n in _TARGET_NAMES if n in analysed), None)
    groups = tuple(c for c in review.schema.categorical if c.lower() in ("race", "sex"))
    return ReviewOptions(target=target, sensitive=target, groups=groups)


def section_key(section: str, options: ReviewOptions) -> tuple[Any, ...]:
    """The part of ``options`` that ``section``'s results depend on (for caching)."""
    return (section, *(getattr(options, name) for name in SECTION_OPTIONS[section]))


#: fewest members (and non-members) an attack set may be capped at: at 10 + 10 rows the AUC's
#: standard error is already 0.13 (Hanley & McNeil 1982 at AUC 0.5), below that an attack says
#: nothing; the cap only limits large tables (the set is min(max_attack, n_real, n_holdout))
MIN_ATTACK = 10
#: largest seed: scikit-learn's ``random_state`` (the attacks, the efficacy models, the
#: folds) takes 0 <= seed < 2**32, numpy's generators take any seed >= 0
MAX_SEED = 2**32 - 1


#: largest constraints file read (bytes)
MAX_CONSTRAINTS_BYTES = 1_000_000


def read_constraints_file(path: str | Path) -> str:
    """The text of a constraints TOML file, or :class:`ConfigError` naming the option.

    The text (not the path) is the option (:attr:`ReviewOptions.constraints`), so a review
    records what was declared and the dashboard's upload and the CLI's file give one value.
    """
    try:
        data = Path(path).read_bytes()[: MAX_CONSTRAINTS_BYTES + 1]
    except OSError as exc:
        raise ConfigError(
            f"option --constraints must be a readable TOML file; got {str(path)!r} ({exc})"
        ) from None
    if len(data) > MAX_CONSTRAINTS_BYTES:
        raise ConfigError(
            f"option --constraints must be a file of at most {MAX_CONSTRAINTS_BYTES} bytes; got "
            f"{str(path)!r}, larger"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"option --constraints must be UTF-8 text; got {str(path)!r}, not UTF-8"
        ) from None


def _fail(option: str, expected: str, got: object) -> ConfigError:
    return ConfigError(f"option {option} must be {expected}; got {got!r} instead")


def check_device(device: str) -> None:
    """Raise :class:`ConfigError` unless ``device`` names a torch device this machine has."""
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError):
        raise _fail("device", "'cpu', 'cuda', 'cuda:N' or 'mps'", device) from None
    if parsed.type == "cpu":
        return
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise _fail("device", "'cpu' on this machine (no CUDA GPU is available)", device)
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise _fail("device", f"'cuda:0' to 'cuda:{torch.cuda.device_count() - 1}'", device)
        return
    if parsed.type == "mps" and torch.backends.mps.is_available():
        return
    raise _fail("device", "'cpu' or an available 'cuda' / 'mps' device", device)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_seed(seed: object) -> None:
    """Raise :class:`ConfigError` unless ``seed`` is an integer in ``[0, MAX_SEED]``.

    A seed outside that range fails only deep inside a metric (scikit-learn refuses it), after
    the embedding has been trained; checking it first stops the review within seconds.
    """
    if not _integer(seed) or not 0 <= seed <= MAX_SEED:
        raise _fail("seed", f"an integer from 0 to {MAX_SEED} (2**32 - 1)", seed)


def check_shadow_options(review: Review, options: ReviewOptions) -> None:
    """Raise :class:`ConfigError` unless the shadow-attack options can run on ``review``.

    The generator name is imported here (:func:`~synthreview.generators.plugin.load_generator`),
    so a module that is not installed stops the review before anything is computed.
    """
    if not _integer(options.shadow_models) or options.shadow_models < 4:
        raise _fail(
            "shadow_models", "an integer >= 4 (shadows per target, half with it)",
            options.shadow_models,
        )  # fmt: skip
    if not _integer(options.shadow_targets) or options.shadow_targets < 1:
        raise _fail("shadow_targets", "an integer >= 1", options.shadow_targets)
    limit = options.shadow_time_limit
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit < 1e9:
        raise _fail("shadow_time_limit", "a number of seconds > 0", limit)
    if options.generator is None:
        return
    if review.kind != "table":
        raise _fail("generator", "empty for glucose traces (the shadow attack runs on tables)",
                    options.generator)  # fmt: skip
    load_generator(options.generator)


def validate_options(
    review: Review,
    options: ReviewOptions,
    sections: Sequence[str] | None = None,
    device: str = "cpu",
    *,
    seed: int | None = None,
) -> None:
    """Check every option against the review before anything is computed.

    ``evaluate()``, the CLI and the dashboard's controls call this, so a typo in a column name
    or an impossible number stops the review within seconds with a message naming the option,
    what was expected and what was received, instead of silently dropping a section.

    ``seed`` (when given) must be an integer from 0 to :data:`MAX_SEED`. ``sections`` must
    apply to the review's kind: ``glucose`` only to traces, ``utility`` only to tables (a trace
    review's fidelity and privacy are computed inside its glucose section).

    Raises
    ------
    ConfigError
        ``"option X must be ...; got ... instead"`` for the first bad option.
    """
    if seed is not None:
        check_seed(seed)
    if sections is not None:
        if isinstance(sections, str) or not all(isinstance(s, str) for s in sections):
            raise _fail("sections", f"a list drawn from {list(SECTION_OPTIONS)}", sections)
        unknown = [s for s in sections if s not in SECTION_OPTIONS]
        if unknown:
            raise _fail("sections", f"among {list(SECTION_OPTIONS)}", unknown)
        applies = KIND_SECTIONS[review.kind]
        wrong = [s for s in sections if s not in applies]
        if wrong:
            raise _fail("sections", f"among {list(applies)} for a {review.kind} review", wrong)
    if not _integer(options.max_attack) or options.max_attack < MIN_ATTACK:
        raise _fail(
            "max_attack",
            f"an integer >= {MIN_ATTACK} (the cap on members per attack set)",
            options.max_attack,
        )
    if not _integer(options.n_bootstrap) or options.n_bootstrap < 0:
        raise _fail("n_bootstrap", "an integer >= 0 (0 = no intervals)", options.n_bootstrap)
    if not _integer(options.l_diversity) or options.l_diversity < 2:
        raise _fail("l_diversity", "an integer >= 2", options.l_diversity)
    eps, delta = options.claimed_epsilon, options.claimed_delta
    if eps is not None and (
        isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 <= eps < math.inf
    ):
        raise _fail("claimed_epsilon", "a finite number >= 0 (the claimed DP ε)", eps)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
        raise _fail("claimed_delta", "a number in [0, 1) (the claimed DP δ)", delta)
    if delta and eps is None:
        raise _fail("claimed_epsilon", "given when claimed_delta is (a claim needs its ε)", eps)
    check_shadow_options(review, options)
    if review.kind == "traces":
        for name in ("target", "sensitive", "formula"):
            if getattr(options, name):
                raise _fail(name, "empty for glucose traces (it names a table column)", name)
        if options.groups:
            raise _fail("groups", "empty for glucose traces", list(options.groups))
        if options.person is not None:
            raise _fail("person", "empty for glucose traces (each subject is judged already)",
                        options.person)  # fmt: skip
        for name in ("quasi_identifiers", "label_leak_columns", "constraints"):
            if getattr(options, name):
                raise _fail(name, "empty for glucose traces (it names table columns)",
                            getattr(options, name))  # fmt: skip
    else:
        schema = review.schema
        for name in ("target", "sensitive"):
            value = getattr(options, name)
            if value is not None and value not in schema.analysed:
                raise _fail(name, f"one of the analysed columns {list(schema.analysed)}", value)
        if options.person is not None:
            check_person_column(review, options.person)
        for name in ("quasi_identifiers", "label_leak_columns"):
            chosen = getattr(options, name)
            unknown = [c for c in chosen if c not in schema.analysed]
            if unknown or len(set(chosen)) != len(chosen):
                raise _fail(name, f"distinct analysed columns {list(schema.analysed)}",
                            list(chosen))  # fmt: skip
        if options.constraints is not None:
            parse_constraints(options.constraints, columns=schema.analysed, numeric=schema.numeric)
        for group in options.groups:
            if group not in schema.categorical:
                kind = " (a numeric column)" if group in schema.numeric else ""
                raise ConfigError(
                    f"option groups must be categorical columns {list(schema.categorical)}; "
                    f"got {group!r}{kind} instead"
                )
        if options.formula:
            try:
                parse_formula(options.formula, schema=schema, real=review.real.frame)
            except ConfigError as exc:
                raise ConfigError(
                    "option formula must be 'target ~ x1 + x2' over existing columns; got "
                    f"{options.formula!r} instead ({exc})"
                ) from None
    check_device(device)
