"""The ``/v1`` routers of playbooks, plans, memory, stats, schedules, traces, regression
and evals, added to the server's app in one call (:func:`include`)."""

from __future__ import annotations

from fastapi import FastAPI


def include(app: FastAPI) -> None:
    """Add the routers of :mod:`sea.serve.v1`'s playbooks, plans, memory, stats, schedules,
    traces, regression and evals to ``app``."""
    from sea.serve.v1 import (
        evals,
        memory,
        plans,
        playbooks,
        regression,
        schedules,
        stats,
        traces,
    )

    for module in (playbooks, plans, memory, stats, schedules, traces, regression, evals):
        app.include_router(module.router)
