"""Action pipelines: one model answer plans several tool calls, run in order.

* :mod:`~sea.engine.actions.catalogue`: the tools a node offers, as the model sees them;
* :mod:`~sea.engine.actions.plan`: the response schema built from that catalogue, and the
  checks that tell the model exactly what is wrong with a plan;
* :mod:`~sea.engine.actions.prompt`: the instruction generated from the catalogue;
* :mod:`~sea.engine.actions.dispatch`: running the planned actions, ``ref:`` arguments
  resolved and normalized by :mod:`sea.engine.tools.refs`.
"""
