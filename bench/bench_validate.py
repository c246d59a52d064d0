"""Benchmark of the language front end: validation, expressions, templates, CLI start-up.

Run: ``PYTHONPATH=. python bench/bench_validate.py``. Prints absolute figures and ratios
against a baseline doing the least comparable work in the same run:

* validation of a generated 50-node playbook vs. plain ``orjson.loads`` + pydantic
  ``Playbook.model_validate`` (no JSON Schema, no diagnostics, no static checks);
* a compiled CEL expression ``{loop_count} + 1`` vs. the Python lambda doing the same;
* template rendering vs. ``str.format`` of the same text;
* ``sea validate`` on a directory and on the bundled playbooks (checking everything, and with
  the verdict kept), and ``sea --version``, each a fresh process, vs. pydantic's own import
  (without and with the plugin discovery its first validator runs, which a ``sea`` process
  pays too) and ``python -c pass``: medians of 15 rounds that run every command in turn. The
  processes run with their bytecode compiled, as an installed SEA has it: a first round
  writes it under a temporary ``PYTHONPYCACHEPREFIX`` (whatever ``PYTHONDONTWRITEBYTECODE``
  says); compiling SEA's modules from source at every start would add about 30 ms.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from sea.cli import YOUNG_COLLECTION_PACE
from sea.lang.expressions import compile_expression
from sea.lang.loader import check_document
from sea.lang.models import Playbook
from sea.lang.templates import clear_template_cache, render

ROOT = Path(__file__).resolve().parents[1]


def _node(i: int, last: int) -> dict[str, Any]:
    nxt = f"n{i + 1}" if i < last else None
    kind = i % 5
    if kind == 0:
        return {
            "id": f"n{i}",
            "type": "llm",
            "context_profile": "worker",
            "action": f"Step {i}: think about {{input}} and {{{f'v{i - 2}' if i else 'input'}}}.",
            "response_schema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}, "text": {"type": "string"}},
            },
            "output_key": f"v{i}",
            "next": nxt,
        }
    if kind == 1:
        return {
            "id": f"n{i}",
            "type": "pass",
            "conditional_next": {
                "field": f"v{i - 1}.ok",
                "cases": {"true": nxt, "false": nxt},
                "default": nxt,
            },
        }
    if kind == 2:
        return {
            "id": f"n{i}",
            "type": "set",
            "assignments": {f"v{i}": "={count} + 1", "count": 1, "note": "n {input}"},
            "next": nxt,
        }
    if kind == 3:
        return {
            "id": f"n{i}",
            "type": "tool",
            "action": "memory_search",
            "args": {"query": "{input}", "limit": 3},
            "output_key": f"v{i}",
            "next": nxt,
            "error_next": nxt,
        }
    return {
        "id": f"n{i}",
        "type": "memorize",
        "action": f"<system>{{v{i - 1}}}</system>",
        "role": "user",
        "tags": ["bench"],
        "next": nxt,
    }


def playbook_bytes(size: int = 50) -> bytes:
    """A valid playbook of ``size`` nodes mixing every common node type."""
    nodes = [_node(i, size - 1) for i in range(size)]
    document = {
        "name": "bench",
        "description": "generated",
        "input_schema": [{"name": "input", "description": "text"}],
        "start_node": "n0",
        "nodes": nodes,
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2)


def _timeit(func: Callable[[], object], repeat: int) -> float:
    """Median seconds per call."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _per_call(func: Callable[[], object], loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        func()
    return (time.perf_counter() - start) / loops


def bench_validation() -> None:
    data = playbook_bytes(50)
    result = check_document(data)
    assert result.diagnostics == [], [d.format_human() for d in result.diagnostics]
    check_document(data)  # warm caches (schema validators)
    full = _timeit(lambda: check_document(data), 30)

    def first_time() -> object:  # as a new file's first check: no template or program cached
        clear_template_cache()
        compile_expression.cache_clear()
        return check_document(data)

    cold = _timeit(first_time, 30)
    base = _timeit(lambda: Playbook.model_validate(orjson.loads(data)), 30)
    broken = data.replace(b'"action": "memory_search"', b'"acton": "memory_search"', 1)
    bad = _timeit(lambda: check_document(broken), 30)
    print(f"validate 50-node playbook : {full * 1e3:8.2f} ms  (valid, again)")
    print(f"  the same, first time    : {cold * 1e3:8.2f} ms  (no template or program cached)")
    print(f"validate with one typo    : {bad * 1e3:8.2f} ms  (diagnostics + locations)")
    print(f"orjson + pydantic only    : {base * 1e3:8.2f} ms  ratio {full / base:6.1f}x")


def bench_expressions() -> None:
    expression = compile_expression("{loop_count} + 1")
    state = {"loop_count": 41}
    assert expression.evaluate(state) == 42

    def python() -> int:
        return int(state["loop_count"]) + 1

    cel = _per_call(lambda: expression.evaluate(state), 20000)
    py = _per_call(python, 20000)
    compile_cost = _per_call(lambda: compile_expression("{plan.total_phases} - {n} * 2"), 2000)
    print(f"CEL evaluate {{x}} + 1     : {cel * 1e6:8.2f} us  ratio {cel / py:6.1f}x vs Python")
    print(f"CEL compile               : {compile_cost * 1e6:8.2f} us")


def bench_templates() -> None:
    state = {"input": "hello", "plan": {"steps": [{"title": "one"}]}, "n": 3}
    template = "Input: {input}; step {plan.steps.0.title}; n={n}."
    flat = {"input": "hello", "title": "one", "n": 3}
    ours = _per_call(lambda: render(template, state), 20000)
    base = _per_call(lambda: "Input: {input}; step {title}; n={n}.".format(**flat), 20000)
    print(
        f"render template           : {ours * 1e6:8.2f} us  ratio {ours / base:6.1f}x vs str.format"
    )


PYDANTIC_FLOOR = (
    "import gc\n"
    f"gc.set_threshold({YOUNG_COLLECTION_PACE}, 10, 10)\n"  # as in a sea process
    "import pydantic.fields, pydantic.main\n"
    "gc.freeze()\n"
)
"""What any check with pydantic models costs before SEA's own code: pydantic's import (with
``Field``, whose constraints load ``annotated_types``), at a ``sea`` process's collector
pace."""
PYDANTIC_PLUGINS = PYDANTIC_FLOOR.replace(
    "gc.freeze()", "from pydantic.plugin._loader import get_plugins\nget_plugins()\ngc.freeze()"
)
"""The same, with the plugin discovery pydantic's first validator runs (``importlib.metadata``'s
scan of the installed distributions), as a ``sea`` process does."""


def _alternated(commands: dict[str, list[str]], rounds: int) -> dict[str, float]:
    """Median seconds of each command (a fresh process), the commands run in turn each round
    so that a machine busy with other work slows them alike."""
    samples: dict[str, list[float]] = {label: [] for label in commands}
    with tempfile.TemporaryDirectory() as pycache:
        env = {key: value for key, value in os.environ.items()
               if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pycache
        for command in commands.values():  # compile, warm the file cache, keep a verdict
            subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
        for _ in range(rounds):
            for label, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
                samples[label].append(time.perf_counter() - start)
    return {label: statistics.median(times) for label, times in samples.items()}


def bench_cli() -> None:
    sea = [sys.executable, "-m", "sea"]
    bundled = str(ROOT / "playbooks")
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(10):
            Path(tmp, f"p{i}.json").write_bytes(
                playbook_bytes(50).replace(b'"bench"', f'"bench{i}"'.encode(), 1)
            )
        medians = _alternated({
            "sea validate --no-cache (10 x 50 nodes)": [*sea, "validate", "--no-cache", tmp],
            "sea validate --no-cache playbooks": [*sea, "validate", "--no-cache", bundled],
            "sea validate playbooks (kept verdict)": [*sea, "validate", bundled],
            "sea --version": [*sea, "--version"],
            "pydantic's import": [sys.executable, "-c", PYDANTIC_FLOOR],
            "pydantic's import + plugin discovery": [sys.executable, "-c", PYDANTIC_PLUGINS],
            "python -c pass": [sys.executable, "-c", "pass"],
        }, rounds=15)
    for label, median in medians.items():
        print(f"{label:43s}: {median * 1e3:7.0f} ms")


def main() -> None:
    """Run every benchmark and print the figures."""
    bench_validation()
    bench_expressions()
    bench_templates()
    bench_cli()


if __name__ == "__main__":
    main()
