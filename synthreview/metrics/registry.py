"""Every metric the product reports, by name: the four section catalogs in one mapping.

``REGISTRY[name]`` is a :class:`~synthreview.metrics.info.MetricInfo`, which binds the name to
its function, direction, format and policy rules (scikit-learn's scorer registry is the
model: ``get("ip_alpha").compute(real, synthetic, schema=schema)``). :func:`get` raises a
clear error for an unknown name, :func:`for_section` lists one section's metrics in catalog
order, :func:`bound_metrics` those that bind a function (what the property tests drive) and
:func:`unbound_metrics` those that say why they cannot. A name registered twice (two
sections, or one helper adding what another already did) fails at import, so a duplicate
cannot silently shadow another metric's direction.

Adding a metric: write it in its module, add one ``MetricInfo(..., function=...)`` line to its
section's ``catalog.py`` and a reference-value test; the registry, the Glossary, the policy's
checks and ``tests/test_registry_properties.py`` pick it up from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from synthreview.metrics.fidelity.catalog import METRICS as FIDELITY
from synthreview.metrics.glucose.catalog import METRICS as GLUCOSE
from synthreview.metrics.info import SECTIONS, MetricInfo
from synthreview.metrics.privacy.catalog import METRICS as PRIVACY
from synthreview.metrics.utility.catalog import METRICS as UTILITY


def build_registry(*catalogs: Iterable[MetricInfo]) -> dict[str, MetricInfo]:
    """One ``{name: MetricInfo}`` from catalogs; a repeated name raises ``ValueError``."""
    registry: dict[str, MetricInfo] = {}
    for catalog in catalogs:
        for info in catalog:
            if info.name in registry:
                raise ValueError(
                    f"metric names must be unique; got {info.name!r} in {info.section} and "
                    f"{registry[info.name].section} instead"
                )
            registry[info.name] = info
    return registry


REGISTRY: dict[str, MetricInfo] = build_registry(FIDELITY, PRIVACY, UTILITY, GLUCOSE)


def get(name: str) -> MetricInfo:
    """The metric called ``name``; ``KeyError`` naming the known metrics otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(
            f"metric must be one of the registered metrics {sorted(REGISTRY)}; got {name!r} instead"
        ) from None


def for_section(section: str) -> tuple[MetricInfo, ...]:
    """The metrics of ``section`` in catalog order."""
    if section not in SECTIONS:
        raise KeyError(f"section must be one of {SECTIONS}; got {section!r} instead")
    return tuple(info for info in REGISTRY.values() if info.section == section)


def bound_metrics(registry: Mapping[str, MetricInfo] | None = None) -> tuple[MetricInfo, ...]:
    """The metrics of ``registry`` (default :data:`REGISTRY`) that bind a function."""
    found = REGISTRY if registry is None else registry
    return tuple(info for info in found.values() if info.function is not None)


def unbound_metrics(registry: Mapping[str, MetricInfo] | None = None) -> tuple[MetricInfo, ...]:
    """The metrics of ``registry`` (default :data:`REGISTRY`) without a function."""
    found = REGISTRY if registry is None else registry
    return tuple(info for info in found.values() if info.function is None)
