"""The one place that knows where the bundled data lives (``schemas/``, ``playbooks/`` and
``guidelines/``).

In a source checkout (or an editable install) they sit beside the packages; in a wheel
they are shipped inside the package as ``sea/_data/``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    shipped = _PACKAGE / "_data" / name
    if shipped.is_dir():
        return shipped
    return _PACKAGE.parent / name


def schemas_dir() -> Path:
    """Directory of the published JSON Schemas."""
    return _data_dir("schemas")


def bundled_playbooks_dir() -> Path:
    """Directory of the bundled playbooks."""
    return _data_dir("playbooks")


def guidelines_dir() -> Path:
    """Directory of the bundled Specialized guidelines, one text file per stage."""
    return _data_dir("guidelines")
