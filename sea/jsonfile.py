"""Reading a JSON file that a person gave (a model script, a trace, a persona file).

The one place that turns the two ways such a read fails (the file cannot be read, the text
is not JSON) into a clear error naming what the file was meant to be.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from sea.errors import SeaError, UsageError


def read_json(path: Path, what: str, *, error: type[SeaError] = UsageError) -> Any:
    """The parsed content of ``path``, which should hold ``what`` (e.g. ``"model script"``).

    Raises:
        SeaError: of type ``error``: the file cannot be read (the OS reason is given), or it
            is not valid JSON (the parser's position is given).
    """
    try:
        return orjson.loads(path.read_bytes())
    except OSError as exc:
        raise error(f"cannot read the {what} {path}: {exc.strerror}") from exc
    except orjson.JSONDecodeError as exc:
        raise error(f"the {what} {path} is not valid JSON: {exc}") from exc
