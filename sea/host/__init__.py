"""The embedding API: :class:`~sea.host.config.RuntimeConfig` (what a runtime is),
:class:`~sea.host.runtime.Runtime` (where a pulse starts), its results, run control, the
blocking facade and checkpoint savers. A host imports them from :mod:`sea` itself."""
