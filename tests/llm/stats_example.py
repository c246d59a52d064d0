"""The ``sea stats`` example of the budgets guide (docs/guides/budgets.md), made by a real run:
three ``meta_intent`` pulses on scripted models with a price table, then ``sea stats``.

``python -m tests.llm.stats_example`` prints the block the guide shows; the guide's test runs
it again and compares everything but the latencies.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import orjson

from sea.cli import main

PRICES = {"models": {"scripted": {"input_per_million": 0.15, "output_per_million": 0.6}}}


def _intent(confidence: float, action: str = "direct_response") -> dict[str, Any]:
    return {"action_type": action, "prompt_pattern": "base_main", "tool_operations": [],
            "file_target": None, "require_approval": False, "confidence": confidence,
            "reasoning": "the user's latest message", "specialized_domain": "execution",
            "complexity": "simple"}


PULSES: list[tuple[str, dict[str, list[Any]], dict[str, list[Any]]]] = [
    (  # unsure: the persona asks back
        "Fix it.",
        {"sub_intent.analyze": [_intent(0.3)]},
        {"sub_speak.compose": ["Which file do you mean?"]},
    ),
    (  # the light model's intent is invalid three times: the normal model takes over
        "Thanks, that was all.",
        {"sub_intent.analyze": [{"confidence": "high"}] * 3,
         "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "thanks"}]},
        {"sub_intent.analyze": [_intent(0.95)], "sub_speak.compose": ["Any time!"]},
    ),
    (  # sure: the router sends it to a memory search
        "Tell me everything I said about my cat",
        {"sub_intent.analyze": [_intent(0.92, "content_extraction")],
         "sub_router_user.decide": [{"playbook": "memory_research", "args": {"query": "cat"},
                                     "reason": "asks about the past"}],
         "memory_research.plan": [{"queries": ["cat"]}]},
        {"memory_research.summarize": ["Nothing about a cat yet."],
         "sub_speak.compose": ["You have not told me about a cat yet."]},
    ),
]


def _sea(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(list(argv))
    return code, out.getvalue()


def stats_output(root: Path) -> str:
    """Run the pulses in ``root`` and return what ``sea stats`` prints."""
    db = str(root / "memory.sqlite")
    prices = root / "prices.json"
    prices.write_bytes(orjson.dumps(PRICES))
    for index, (text, light, normal) in enumerate(PULSES):
        scripts = []
        for role, script in (("light", light), ("normal", normal)):
            path = root / f"{role}{index}.json"
            path.write_bytes(orjson.dumps({"responses": script}))
            scripts.append(f"scripted:{path}")
        code, _ = _sea("run", "meta_intent", "--input", text, "--db", db, "--json",
                       "--light-model", scripts[0], "--model", scripts[1],
                       "--prices", str(prices))
        if code != 0:
            raise RuntimeError(f"pulse {index} of the stats example failed ({code})")
    code, printed = _sea("stats", "--db", db)
    if code != 0:
        raise RuntimeError("sea stats failed")
    return printed


def readme_block(printed: str) -> str:
    """The output as the README shows it: indented four spaces, after the command."""
    lines = ["$ sea stats", *printed.rstrip("\n").splitlines()]
    return "\n".join(f"    {line}".rstrip() for line in lines)


if __name__ == "__main__":
    with TemporaryDirectory() as tmp:
        sys.stdout.write(readme_block(stats_output(Path(tmp))) + "\n")
