"""How large the files a person names may be: each kind's default
(:data:`sea.jsonfile.CONFIG_FILES`, ``TRACE_FILES``, ``MEMORY_IMPORTS``), or the number of
bytes its environment variable gives (``SEA_MAX_CONFIG_BYTES``, ``SEA_MAX_TRACE_BYTES``,
``SEA_MAX_IMPORT_BYTES``). Light on purpose: ``sea validate`` reads tool catalogues with it.
"""

from __future__ import annotations

import os
from dataclasses import replace

from sea.errors import UsageError
from sea.jsonfile import ReadLimit


def file_limit(default: ReadLimit) -> ReadLimit:
    """The limit of a kind of file (:data:`sea.jsonfile.CONFIG_FILES`, ``TRACE_FILES``,
    ``MEMORY_IMPORTS``): its default, unless the environment variable it names
    (``default.setting``) gives another number of bytes.

    Raises:
        UsageError: the variable is set to something else than a positive whole number.
    """
    configured = os.environ.get(default.setting, "").strip()
    if not configured:
        return default
    try:
        value = int(configured)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(
            f"{default.setting}={configured!r} is not a number of bytes; set it to a whole "
            f"number above 0 (default {default.max_bytes:,}) or unset it",
            code="SEA333",
        )
    return replace(default, max_bytes=value)
