"""Benchmark of the bundled persona (``meta_user``) on the bundled local model.

Runs a fixed ten-turn conversation of one persona against a fresh store: greetings, facts the
user states, and questions about earlier turns. For each turn it reports the playbook the
router chose, whether that is the expected kind of choice (greetings and statements: a direct
answer; questions about earlier turns: a memory playbook), whether the reply recites a
``<system>`` memo or repeats the user's message, whether it names the remembered fact, and the
pulse time split into model time (the sum of the model calls' latencies) and engine time (the
rest). The model is loaded and warmed before the first pulse.

Run: ``PYTHONPATH=. python bench/bench_persona.py [--model SPEC] [--json]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from saimemory import Persona
from saimemory.sqlite import SQLiteStore
from sea.chat.providers import resolve_model
from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

PERSONA = Persona(
    "aoi",
    "Aoi",
    "You are Aoi, a warm and curious companion. You talk with the user in a friendly, "
    "natural way and keep your answers short.",
)
DIRECT = "direct"
MEMORY = "memory"

TURNS: list[tuple[str, str, str | None]] = [
    # (what the user says, the expected kind of routing, a word the reply should name)
    ("Hello!", DIRECT, None),
    ("Hi Aoi, how are you today?", DIRECT, None),
    ("My name is Ken.", DIRECT, None),
    ("I love hiking in the mountains.", DIRECT, None),
    ("My cat is called Tama.", DIRECT, None),
    ("Good morning!", DIRECT, None),
    ("What is my name?", MEMORY, "Ken"),
    ("What is my cat called?", MEMORY, "Tama"),
    ("Do you remember what I love doing?", MEMORY, "hik"),
    ("Thanks, see you later!", DIRECT, None),
]


@dataclass
class Turn:
    """What one pulse did."""

    text: str
    route: str
    route_ok: bool
    reply: str
    recites_memo: bool
    repeats_user: bool
    names_fact: bool | None
    pulse_s: float
    model_s: float
    engine_s: float
    calls: int


def _route(result: Any) -> str:
    decided = [c for c in result.llm_calls if (c.playbook, c.node) == ("sub_router_user", "decide")]
    if not decided or not isinstance(decided[0].response, dict):
        return "(router failed)"
    return str(decided[0].response.get("playbook"))


def _turn(runtime: Runtime, text: str, kind: str, fact: str | None) -> Turn:
    started = time.perf_counter()
    result = runtime.run_pulse(PERSONA, "meta_user", text)
    pulse_s = time.perf_counter() - started
    model_s = sum(c.latency_s for c in result.llm_calls)
    reply = " ".join(result.spoken).strip()
    route = _route(result)
    memos = [w.content for w in result.memory_writes if w.content.startswith("<system>")]
    return Turn(
        text=text,
        route=route,
        route_ok=(route == "basic_chat") == (kind == DIRECT),
        reply=reply,
        recites_memo="system>" in reply or any(_shares_line(reply, memo) for memo in memos),
        repeats_user=reply.casefold().strip(" .!?") == text.casefold().strip(" .!?"),
        names_fact=None if fact is None else fact.casefold() in reply.casefold(),
        pulse_s=pulse_s,
        model_s=model_s,
        engine_s=pulse_s - model_s,
        calls=len(result.llm_calls),
    )


def _shares_line(reply: str, memo: str) -> bool:
    """Whether the reply copies a line of the memo, or 30 characters of one."""
    body = memo.removeprefix("<system>").removesuffix("</system>")
    lines = [line.strip() for line in body.splitlines() if len(line.strip()) >= 30]
    return any(line[:30] in reply for line in lines)


def run(model_spec: str) -> list[Turn]:
    """The conversation's turns, in order."""
    model = resolve_model(model_spec)
    model.invoke([HumanMessage("Hi")])  # load and warm the model outside the measurements
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "memory.sqlite")
        runtime = Runtime(RuntimeConfig(
            store,
            ModelSet(normal=model, lightweight=model),
            library=PlaybookLibrary.bundled(),
            checkpoint_path=Path(tmp) / "checkpoints.sqlite",
        ))
        try:
            return [_turn(runtime, text, kind, fact) for text, kind, fact in TURNS]
        finally:
            runtime.close()
            store.close()


def _summary(turns: list[Turn]) -> dict[str, Any]:
    facts = [t.names_fact for t in turns if t.names_fact is not None]
    pulse = sum(t.pulse_s for t in turns)
    model = sum(t.model_s for t in turns)
    return {
        "routing_as_expected": f"{sum(t.route_ok for t in turns)}/{len(turns)}",
        "replies_reciting_a_memo": sum(t.recites_memo for t in turns),
        "replies_repeating_the_user": sum(t.repeats_user for t in turns),
        "recall_questions_answered_with_the_fact": f"{sum(facts)}/{len(facts)}",
        "mean_pulse_s": round(pulse / len(turns), 3),
        "mean_model_s": round(model / len(turns), 3),
        "mean_engine_s": round((pulse - model) / len(turns), 3),
        "engine_share_of_pulse": round((pulse - model) / pulse, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="model spec (default: local)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    turns = run(args.model)
    summary = _summary(turns)
    if args.json:
        print(json.dumps({"turns": [asdict(t) for t in turns], "summary": summary}, indent=2))
        return
    for t in turns:
        flags = "".join([
            "" if t.route_ok else " [route?]",
            " [recites memo]" if t.recites_memo else "",
            " [repeats user]" if t.repeats_user else "",
            "" if t.names_fact is None else (" [names fact]" if t.names_fact else " [no fact]"),
        ])
        print(f"> {t.text}\n  route={t.route}{flags}  pulse {t.pulse_s:.2f}s = model "
              f"{t.model_s:.2f}s + engine {t.engine_s:.3f}s ({t.calls} calls)\n  < {t.reply}")
    for key, value in summary.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
