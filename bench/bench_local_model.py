"""Benchmark of the bundled local model (SmolLM2-135M-Instruct via llama-cpp).

Measures: model load, one short chat answer (latency, tokens/s), time to the first streamed
token, one structured (router) call, and how often loop-prone schemas end in valid JSON with
and without the schema tightening the local model applies for its grammar.

Run: ``PYTHONPATH=. python bench/bench_local_model.py [--threads N] [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from sea.chat.constrain import parse_structured
from sea.chat.errors import StructuredOutputParseError
from sea.chat.local import LocalChatModel

PERSONA = SystemMessage("You are Aoi, a friendly assistant. Answer briefly.")
QUESTION: list[BaseMessage] = [PERSONA, HumanMessage("What is the capital of France?")]
STREAMED: list[BaseMessage] = [PERSONA, HumanMessage("Name three colours of the sea.")]
ROUTER_SCHEMA = {
    "type": "object",
    "properties": {
        "playbook": {"type": "string", "enum": ["basic_chat", "memory_recall"]},
        "reason": {"type": "string"},
    },
    "required": ["playbook", "reason"],
}
ROUTE_REQUEST: list[BaseMessage] = [
    PERSONA,
    HumanMessage("Do you remember what I told you about my cat?"),
    HumanMessage(
        "<system>Choose the playbook for the user's message: basic_chat (answer directly) "
        "or memory_recall (search memory). Give a short reason.</system>"
    ),
]
LOOP_PRONE_SCHEMAS: dict[str, dict[str, Any]] = {
    "summary+keywords": {
        "type": "object",
        "properties": {
            "summary": {"type": "string"},
            "keywords": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["summary", "keywords"],
    },
    "answer+done": {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "done": {"type": "boolean"}},
        "required": ["answer", "done"],
    },
    "free-form args": {
        "type": "object",
        "properties": {
            "playbook": {"type": "string"},
            "args": {"type": "object"},
            "reason": {"type": "string"},
        },
        "required": ["playbook", "args", "reason"],
    },
}
LOOP_PROMPTS = (
    "Summarize our conversation about cats and dogs and give keywords. Be thorough.",
    "Write a long story about a dragon.",
    "List every prime number.",
)


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by ``action()`` and its result."""
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def bench_load(threads: int | None) -> float:
    """Seconds to load the GGUF file into a fresh model object."""
    seconds, _ = timed(LocalChatModel(n_threads=threads)._load)
    return seconds


def bench_chat(model: LocalChatModel) -> dict[str, Any]:
    """One short plain answer, and the time to the first streamed token of another one.

    The streamed question differs so that llama's prompt cache does not hide prompt time.
    """
    seconds, answer = timed(lambda: model.invoke(QUESTION))
    usage = answer.usage_metadata or {}
    start = time.perf_counter()
    first_token = None
    for chunk in model.stream(STREAMED):
        if chunk.content and first_token is None:
            first_token = time.perf_counter() - start
    return {
        "seconds": round(seconds, 3),
        "input_tokens": usage.get("input_tokens"),
        "output_tokens": usage.get("output_tokens"),
        "output_tokens_per_s": round(usage.get("output_tokens", 0) / seconds, 1),
        "first_token_s": round(first_token or 0.0, 3),
        "text": answer.content,
    }


def bench_structured(model: LocalChatModel) -> dict[str, Any]:
    """One grammar-constrained router call."""
    runnable = model.with_structured_output(ROUTER_SCHEMA, include_raw=True)
    seconds, result = timed(lambda: runnable.invoke(ROUTE_REQUEST))
    usage = result["raw"].usage_metadata or {}
    return {
        "seconds": round(seconds, 3),
        "output_tokens": usage.get("output_tokens"),
        "output_tokens_per_s": round(usage.get("output_tokens", 0) / seconds, 1),
        "parsed": result["parsed"],
        "valid": result["parsing_error"] is None,
    }


def _loop_run(model: LocalChatModel, schema: dict[str, Any], tighten: bool) -> tuple[float, int]:
    """Mean seconds, and how many prompts gave schema-valid JSON."""
    if tighten:
        runnable: Any = model.with_structured_output(schema, include_raw=True)
    else:
        response_format = {"type": "json_object", "schema": schema}
        runnable = model.bind(response_format=response_format, max_tokens=256)
    times, valid = [], 0
    for prompt in LOOP_PROMPTS:
        request: list[BaseMessage] = [HumanMessage(prompt)]
        seconds, result = timed(lambda: runnable.invoke(request))  # noqa: B023
        times.append(seconds)
        if tighten:
            valid += result["parsing_error"] is None
            continue
        try:
            parse_structured(str(result.content), schema, finish_reason=None)
        except StructuredOutputParseError:
            continue
        valid += 1
    return statistics.mean(times), valid


def bench_loops(model: LocalChatModel) -> dict[str, Any]:
    """Loop-prone schemas, as given and as tightened, with the same 256-token budget."""
    rows = {}
    for name, schema in LOOP_PRONE_SCHEMAS.items():
        raw_s, raw_ok = _loop_run(model, schema, tighten=False)
        tight_s, tight_ok = _loop_run(model, schema, tighten=True)
        rows[name] = {
            "as_given_mean_s": round(raw_s, 2),
            "as_given_valid": f"{raw_ok}/{len(LOOP_PROMPTS)}",
            "tightened_mean_s": round(tight_s, 2),
            "tightened_valid": f"{tight_ok}/{len(LOOP_PROMPTS)}",
            "time_ratio_tightened_vs_given": round(tight_s / raw_s, 2),
        }
    return rows


def main() -> None:
    """Run every measurement and print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None, help="llama threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--skip-loops", action="store_true", help="skip the loop-prone schemas")
    args = parser.parse_args()
    model = LocalChatModel(n_threads=args.threads, structured_max_tokens=256)
    report: dict[str, Any] = {"load_s": round(bench_load(args.threads), 3)}
    model._load()
    report["chat"] = bench_chat(model)
    report["structured"] = bench_structured(model)
    if not args.skip_loops:
        report["loop_prone"] = bench_loops(model)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return
    for key, value in report.items():
        print(f"{key}: {json.dumps(value, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
