"""Plan tests: the lifecycle, validation, execution and export of sea.engine.plans."""
