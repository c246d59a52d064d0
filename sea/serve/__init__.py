"""``sea serve``: SEA as an HTTP/SSE server (needs the ``serve`` extra).

The LangGraph-compatible API at the root, SEA's own API under ``/v1``; pulses run as tasks
of the server, their events kept in a numbered log that streams subscribe to.
"""
