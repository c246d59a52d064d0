"""Stored eval runs: one JSON file per run, named by its id, in the runs directory; a
baseline is a run's id, ``latest``, or a JSON file (``sea eval --json``'s)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from sea.errors import UsageError

NOT_A_RUN = "SEA399"
"""The code of a file that is not a stored run."""


def new_id(now: datetime | None = None) -> str:
    """A run id: its UTC time and a random tail, ``20261129-081500-3fa2``; sorts by time."""
    moment = now or datetime.now(UTC)
    return f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def save_run(run: dict[str, Any], directory: Path) -> Path:
    """Store ``run`` as ``<directory>/<id>.json`` (the directory is made).

    Raises:
        UsageError: the directory cannot be made or written.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{run['id']}.json"
        path.write_bytes(orjson.dumps(run, option=orjson.OPT_INDENT_2))
    except OSError as exc:
        raise UsageError(f"cannot store the run in {directory}: {exc.strerror or exc}; give "
                         "another --runs DIR") from None
    return path


def stored_runs(directory: Path) -> list[str]:
    """The ids of the runs stored in ``directory``, oldest first (by the second their id
    names, then, for runs stored in the same second, by when each file was written: an
    id's random tail says nothing of order)."""
    if not directory.is_dir():
        return []
    return [p.stem for p in sorted(directory.glob("*.json"), key=_stored_order)]


def _stored_order(path: Path) -> tuple[str, int, str]:
    try:
        written = path.stat().st_mtime_ns
    except OSError:  # removed while listed: its place hardly matters
        written = 0
    return path.stem[:15], written, path.stem


def load_run(ref: str, directory: Path) -> dict[str, Any]:
    """The run ``ref`` names: a JSON file, a stored run's id, or ``latest``.

    Raises:
        UsageError: no such run, or the file is not a run.
    """
    path = Path(ref).expanduser()
    if not path.is_file():
        ids = stored_runs(directory)
        if ref == "latest" and ids:
            ref = ids[-1]
        path = directory / f"{ref}.json"
        if not path.is_file():
            shown = ", ".join(ids[-5:]) or "none yet"
            raise UsageError(f"--baseline {ref}: no such file nor stored run in {directory} "
                             f"(the latest: {shown}); give a run id, `latest` or a JSON file "
                             "written by `sea eval --json`")
    try:
        return read_run(path)
    except UsageError as exc:
        raise UsageError(f"--baseline {ref}: {exc.message}; give a run id, `latest` or a "
                         "file written by `sea eval --json`", code=exc.code) from None


def read_run(path: Path) -> dict[str, Any]:
    """The run stored in ``path``.

    Raises:
        UsageError: ``SEA399``: the file cannot be read, is not JSON, or is not a run (the
            message names the file, not its directory).
    """
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"{path.name} cannot be read: {exc.strerror or exc}",
                         code=NOT_A_RUN) from None
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{path.name} is not JSON: {exc}", code=NOT_A_RUN) from None
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise UsageError(f"{path.name} is not an eval run (it has no `models`)",
                         code=NOT_A_RUN)
    problem = _shape_problem(data["models"])
    if problem is not None:
        raise UsageError(f"{path.name} is not an eval run: {problem}", code=NOT_A_RUN)
    return data


def _shape_problem(models: dict[str, Any]) -> str | None:
    """What is wrong with a run's ``models`` (what reports and comparisons read), or None."""
    for label, model in models.items():
        if not isinstance(model, dict) or not isinstance(model.get("cases"), dict):
            return f"model {label!r} has no `cases`"
        if not isinstance(model.get("pass_rate"), int | float):
            return f"model {label!r} has no `pass_rate`"
        for key, case in model["cases"].items():
            if not isinstance(case, dict) or not all(
                    isinstance(case.get(name), int | float)
                    for name in ("runs", "passed", "pass_rate")):
                return f"case {key!r} of model {label!r} has no `runs`, `passed`, `pass_rate`"
    return None
