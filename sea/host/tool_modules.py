"""Host tools from a Python module: ``MODULE[:ATTR]``, the ``--tools`` of ``sea run``.

``MODULE`` is a dotted module name, imported with the current directory searched first
(as ``python -m`` does), or the path of a ``.py`` file. ``ATTR`` names what the module
offers: a langchain-core tool, a list (or tuple) of tools, or a function without
arguments that returns one of these. Without ``ATTR`` the module's ``TOOLS`` attribute
is used when it has one, else every tool defined at its top level, in order.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from hashlib import sha256
from pathlib import Path
from types import ModuleType
from typing import Any

from langchain_core.tools import BaseTool

from sea.errors import UsageError

DEFAULT_ATTRIBUTE = "TOOLS"
"""The attribute a module without ``:ATTR`` names its tools with (else its top-level tools)."""

_HOW = (
    "a tool, a list of tools, or a function without arguments that returns them "
    "(a plain function becomes a tool with langchain_core.tools.tool)"
)


def module_tools(spec: str) -> list[BaseTool]:
    """The tools ``spec`` (``MODULE[:ATTR]``) names.

    Args:
        spec: A dotted module name or a ``.py`` file, and optionally ``:ATTR``.

    Returns:
        The langchain-core tools it offers, in order.

    Raises:
        UsageError: the module cannot be imported (or raised while importing), the
            attribute is missing, or it is not tools.
    """
    source, _, attribute = spec.partition(":") if not _is_path(spec) else _split_path(spec)
    if not source:
        raise UsageError(f"--tools {spec}: expected MODULE[:ATTR], e.g. my_tools:TOOLS")
    module = _import(spec, source)
    if attribute:
        if not hasattr(module, attribute):
            raise UsageError(
                f"--tools {spec}: module {module.__name__!r} has no attribute {attribute!r}"
                f"{_offered(module)}"
            )
        return _tools_of(spec, attribute, getattr(module, attribute))
    if hasattr(module, DEFAULT_ATTRIBUTE):
        return _tools_of(spec, DEFAULT_ATTRIBUTE, getattr(module, DEFAULT_ATTRIBUTE))
    found = list({id(v): v for v in vars(module).values() if isinstance(v, BaseTool)}.values())
    if not found:
        raise UsageError(
            f"--tools {spec}: module {module.__name__!r} has no {DEFAULT_ATTRIBUTE} and no "
            "tools at its top level; name what it offers with MODULE:ATTR"
        )
    return found


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or ".py:" in spec or "/" in spec


def _split_path(spec: str) -> tuple[str, str, str]:
    """``path/to/file.py[:ATTR]`` → (path, ":", ATTR)."""
    head, colon, tail = spec.rpartition(":")
    if colon and head.endswith(".py") and tail.isidentifier():
        return head, colon, tail
    return spec, "", ""


def _import(spec: str, source: str) -> ModuleType:
    """The module ``source`` names (a dotted name, or a ``.py`` file)."""
    try:
        if _is_path(source):
            return _import_file(spec, Path(source).expanduser())
        with _current_directory_first():
            return importlib.import_module(source)
    except UsageError:
        raise
    except ModuleNotFoundError as exc:
        missing = exc.name or source
        if missing == source or source.startswith(f"{missing}."):
            raise UsageError(
                f"--tools {spec}: no module named {source!r} (looked in the current directory "
                "and the Python path; a file is given as path/to/tools.py)"
            ) from None
        raise UsageError(
            f"--tools {spec}: importing {source!r} failed: it needs the module {missing!r}, "
            "which is not installed"
        ) from None
    except KeyboardInterrupt:
        raise  # the person at the terminal, most likely: not the module's to decide
    except BaseException as exc:  # the module's own code failed or exited while importing
        raise UsageError(
            f"--tools {spec}: importing {source!r} failed: {_raised(exc)}"
        ) from None


def _import_file(spec: str, path: Path) -> ModuleType:
    if not path.is_file() or path.suffix != ".py":
        raise UsageError(f"--tools {spec}: {path} is not a Python file")
    resolved = path.resolve()
    name = f"_sea_tools_{resolved.stem}_{sha256(str(resolved).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.spec_from_file_location(name, resolved)
    if found is None or found.loader is None:
        raise UsageError(f"--tools {spec}: {path} cannot be imported")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    try:
        found.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@contextmanager
def _current_directory_first() -> Iterator[None]:
    """The current directory first on ``sys.path`` while a module is imported."""
    here = str(Path.cwd())
    added = here not in sys.path
    if added:
        sys.path.insert(0, here)
    try:
        yield
    finally:
        if added and here in sys.path:
            sys.path.remove(here)


def _tools_of(spec: str, attribute: str, value: Any) -> list[BaseTool]:
    """``value`` as a list of tools (a factory is called once)."""
    if isinstance(value, BaseTool):
        return [value]
    if _is_factory(value):
        try:
            made = value()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # an exit too: the tools were never made
            raise UsageError(f"--tools {spec}: {attribute}() failed: {_raised(exc)}") from None
        return _listed(spec, f"{attribute}()", made)
    return _listed(spec, attribute, value)


def _raised(exc: BaseException) -> str:
    """What ``exc`` says (an exit: that the module exited, and with what)."""
    if isinstance(exc, SystemExit):
        return f"it exited (SystemExit: {exc.code!r}); tools must not end the process"
    return f"{type(exc).__name__}: {exc}"


def _is_factory(value: Any) -> bool:
    if not callable(value) or isinstance(value, type):
        return False
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in parameters)


def _listed(spec: str, what: str, value: Any) -> list[BaseTool]:
    if isinstance(value, BaseTool):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        strays = [item for item in value if not isinstance(item, BaseTool)]
        if not strays:
            return list(value)
        raise UsageError(
            f"--tools {spec}: {what} holds {_kind(strays[0])}, which is not a tool; expected "
            f"{_HOW}"
        )
    if inspect.iscoroutine(value):
        value.close()  # never awaited: said here instead of warned about later
        raise UsageError(f"--tools {spec}: {what} is asynchronous; expected {_HOW}")
    raise UsageError(f"--tools {spec}: {what} is {_kind(value)}; expected {_HOW}")


def _kind(value: Any) -> str:
    if callable(value) and not isinstance(value, type):
        return f"a function taking arguments ({getattr(value, '__name__', type(value).__name__)})"
    return f"a {type(value).__name__}"


def _offered(module: ModuleType) -> str:
    names = [name for name, v in vars(module).items()
             if not name.startswith("_") and (isinstance(v, BaseTool) or _looks_like_tools(v))]
    return f" (it has: {', '.join(names)})" if names else ""


def _looks_like_tools(value: Any) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(
        isinstance(item, BaseTool) for item in value)
