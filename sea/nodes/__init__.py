"""One module per node type; each defines ``KIND`` (see :mod:`sea.engine.registry`)."""
