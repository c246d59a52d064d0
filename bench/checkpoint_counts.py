"""How many times each side of :mod:`bench_pulse` calls its checkpoint saver in one pulse:
``aput`` (a checkpoint written), ``aput_writes`` (a task's writes written) and
``aget_tuple`` (a checkpoint read), for the engine as a worker runs a pulse (recoverable,
its checkpoints removed after) and the hand-written program with the same durability.

A deterministic figure (it needs no quiet machine): the saver is an in-memory one that
counts the calls that reach it, i.e. after the engine's own views of it
(:class:`sea.host.durable_saver.DurablePulse` holds what a crash does not need).

Run: ``PYTHONPATH=. python bench/checkpoint_counts.py [--playbooks meta_user,sub_act]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from bench_pulse import (  # run as a script from bench/
    CHECKS,
    HAND_PROGRAMS,
    PERSONAS,
    PLAYBOOKS,
    Hand,
    _script,
    _seed,
    _store,
    _text,
    _workspace,
    timed_model,
)
from langgraph.checkpoint.memory import InMemorySaver

from sea.host.config import RuntimeConfig
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.models import ModelSet

CALLS = ("aput", "aput_writes", "aget_tuple")


class CountingSaver(InMemorySaver):
    """An in-memory saver that counts the calls of :data:`CALLS` (by namespace too)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.by_ns: Counter[tuple[str, str]] = Counter()

    def _count(self, name: str, config: Any) -> None:
        self.counts[name] += 1
        ns = str(((config or {}).get("configurable") or {}).get("checkpoint_ns", ""))
        self.by_ns[(name, ns.split(":")[0] if ns else "<top>")] += 1

    async def aput(self, config: Any, *args: Any, **kwargs: Any) -> Any:
        self._count("aput", config)
        return await super().aput(config, *args, **kwargs)

    async def aput_writes(self, config: Any, *args: Any, **kwargs: Any) -> Any:
        self._count("aput_writes", config)
        return await super().aput_writes(config, *args, **kwargs)

    async def aget_tuple(self, config: Any) -> Any:
        self._count("aget_tuple", config)
        return await super().aget_tuple(config)


async def counts(playbook: str, workdir: Path) -> tuple[CountingSaver, CountingSaver]:
    """One pulse of each side (after one not counted); their savers."""
    library = PlaybookLibrary.bundled([])
    top = "meta_user" if playbook == "sub_act" else playbook
    workspace = _workspace(workdir) if playbook == "sub_act" else None
    engine_store, hand_store = (_store("sqlite", workdir, playbook, side, None)
                                for side in ("worker", "handsync"))
    _seed(engine_store)
    _seed(hand_store)
    engine_saver, hand_saver = CountingSaver(), CountingSaver()
    model = timed_model(_script(playbook, 2))
    runtime = Runtime(RuntimeConfig(engine_store, ModelSet(normal=model, lightweight=model),
                                    library=library, workspace=workspace,
                                    keep_checkpoints=True), checkpointer=engine_saver)
    hand_model = timed_model(_script(playbook, 2))
    hand = HAND_PROGRAMS[playbook](Hand(hand_store, hand_model, library, hand_saver,
                                        durable=True), workspace)
    for i in range(2):
        engine_saver.counts.clear()
        engine_saver.by_ns.clear()
        hand_saver.counts.clear()
        hand_saver.by_ns.clear()
        pulse_id = uuid.uuid4().hex
        CHECKS[playbook](await runtime.arun_pulse(PERSONAS[i], top, _text(playbook, i),
                                                  pulse_id=pulse_id, recover=True))
        await runtime.aforget(pulse_id)
        await hand(PERSONAS[i], _text(playbook, i))
    await runtime.aclose()
    runtime.close()
    engine_store.close()
    hand_store.close()
    return engine_saver, hand_saver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playbooks", default=",".join(PLAYBOOKS))
    parser.add_argument("--by-namespace", action="store_true")
    args = parser.parse_args()
    print(f"{'pulse':<13} {'side':<13} " + " ".join(f"{c:>11}" for c in CALLS))
    for playbook in args.playbooks.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            engine, hand = asyncio.run(counts(playbook, Path(tmp)))
        for side, saver in (("engine worker", engine), ("hand durable", hand)):
            print(f"{playbook:<13} {side:<13} "
                  + " ".join(f"{saver.counts[c]:>11}" for c in CALLS))
            if args.by_namespace:
                for (call, ns), n in sorted(saver.by_ns.items()):
                    print(f"{'':<28}{call:<12} {ns:<20} {n}")


if __name__ == "__main__":
    main()
