"""Tools: the tool box with argument checks (``box``), the built-in tools (``builtin``) and
their signatures (``signatures``, importable without LangChain)."""
