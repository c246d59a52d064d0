"""Measure the bundled persona's router on a model, with the routing eval set (issue 38).

A stand-in for ``sea eval`` while it is being built: for each case of ``evals/routing.yaml``
it makes a fresh store seeded with the case's messages and a workspace with its files, runs
the router playbook (``sub_router_user``, the routing step of ``meta_user``) on the case's input,
and reads the chosen playbook from the pulse's outputs. Repeats the set N times and prints the
pass rate of each repeat, their median, and the misses per playbook.

Run: ``PYTHONPATH=. python dev/route_eval.py [--model local] [--repeat 3] [--json OUT]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import HumanMessage

from saimemory import NewMessage, Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.providers import resolve_model
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

PERSONA = Persona("aoi", "Aoi", "You are Aoi, a warm and curious companion. Keep answers short.")


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The cases of a YAML set (``defaults`` merged into each) or a JSONL file."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doc = yaml.safe_load(path.read_text())
    defaults = doc.get("defaults") or {}
    return [{**defaults, **case} for case in doc["cases"]]


def route_once(model: Any, case: dict[str, Any], tmp: Path, router: str = "sub_router_user") -> str:
    """The playbook the router chooses for one case, in a fresh store and workspace."""
    persona = case.get("persona") or {}
    workspace = tmp / "ws"
    for rel, text in (persona.get("files") or {}).items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    workspace.mkdir(exist_ok=True)
    store = SQLiteStore(tmp / "memory.sqlite")
    store.append_many([NewMessage(PERSONA.id, m["role"], m["content"], tags=("conversation",))
                       for m in persona.get("messages") or []])
    runtime = Runtime(RuntimeConfig(store, ModelSet(normal=model, lightweight=model),
                                    library=PlaybookLibrary.bundled(), workspace=workspace,
                                    checkpoint_path=tmp / "checkpoints.sqlite"))
    try:
        result = runtime.run_pulse(PERSONA, router, case["input"])
        return str(result.outputs.get("selected_playbook"))
    finally:
        runtime.close()
        store.close()


def passed(case: dict[str, Any], route: str) -> bool:
    expect = case["expect"]
    return route in (expect.get("route_any") or [expect.get("route")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", nargs="?", default="evals/routing.yaml")
    parser.add_argument("--model", default="local")
    parser.add_argument("--router", default="sub_router_user", help="the router playbook")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write every route to this file")
    parser.add_argument("--only", help="run only these cases (ids, comma-separated)")
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    cases = [c for c in load_cases(Path(args.set)) if only is None or c["id"] in only]
    model = resolve_model(args.model)
    model.invoke([HumanMessage("Hi")])
    rates, runs = [], []
    misses: Counter[str] = Counter()
    for repeat in range(args.repeat):
        routes = {}
        started = time.perf_counter()
        for case in cases:
            with tempfile.TemporaryDirectory() as tmp:
                routes[case["id"]] = route = route_once(model, case, Path(tmp), args.router)
            ok = passed(case, route)
            if not ok:
                misses[f"{case['tags'][0]}->{route}"] += 1
            print(f"{'ok ' if ok else 'MISS'} {case['id']:<22} {route}", file=sys.stderr)
        rate = sum(passed(c, routes[c["id"]]) for c in cases) / len(cases)
        rates.append(rate)
        runs.append(routes)
        print(f"repeat {repeat + 1}: {rate:.1%} ({time.perf_counter() - started:.0f}s)")
    print(f"median of {args.repeat}: {statistics.median(rates):.1%}  repeats: "
          + ", ".join(f"{r:.1%}" for r in rates))
    for key, count in misses.most_common():
        print(f"  miss {key}: {count}")
    if args.json:
        args.json.write_text(json.dumps({"rates": rates, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
