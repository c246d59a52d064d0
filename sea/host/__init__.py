"""The embedding API: :class:`~sea.host.runtime.Runtime` (where a pulse starts), its results,
run control, the blocking facade and checkpoint savers."""
