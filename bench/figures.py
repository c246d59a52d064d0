"""The summary figures every benchmark here reports, computed one way."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

P90_SAMPLES = 20
"""The fewest samples a 90th percentile is read from: with fewer, it is little more than
the slowest sample (of ten, the nearest-rank p90 *is* the slowest)."""


def p90(samples: Sequence[float]) -> float:
    """The 90th percentile, interpolated between the samples either side of it."""
    if len(samples) < P90_SAMPLES:
        raise ValueError(f"a p90 needs at least {P90_SAMPLES} samples, got {len(samples)}")
    return statistics.quantiles(samples, n=10, method="inclusive")[-1]


def median_p90(samples: Sequence[float]) -> tuple[float, float]:
    """The median and the 90th percentile of ``samples``."""
    return statistics.median(samples), p90(samples)
