"""The prompt's stable prefix and the response cache over real pulses (issue 43), for
``bench_pulse.py --cache``: the engine's pulses as a host gets them, on SQLite.

* ``prefix``: one pulse of each playbook; for each of its model calls, the node, the
  pattern, the size of the system message and of its stable prefix (Base, pins,
  guidelines; the record's ``stable_chars``), how much of it the pulse's first call's
  prefix shares, and the prefix's SHA-256. The calls of one pattern and stage must have one
  prefix, byte for byte, and every call's must begin with the persona's Base (else the run
  fails): what lets a provider's prompt cache keep it across the pulse's calls.
* ``cache``: the same pulse twice, each on a fresh store seeded alike, sharing one response
  cache file (``LLMOptions(response_cache=ResponseCache.sqlite(...))``): the first fills the
  cache, the second must make no model call (its model has no answer at all) and take the
  same route; the table shows each pulse's model calls, tokens in and out, the tokens the
  hits saved and the wall time.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from saimemory import MessageStore
from sea.chat.scripted import ScriptedChatModel
from sea.host.config import RuntimeConfig
from sea.host.result import PulseResult
from sea.host.runtime import Runtime
from sea.lang.library import PlaybookLibrary
from sea.llm.cache import ResponseCache
from sea.llm.models import ModelSet
from sea.llm.options import LLMOptions

Make = Callable[[Path, str, ScriptedChatModel, LLMOptions], Runtime]
"""Makes a runtime of a playbook's pulse: ``(workdir, side, model, options)``."""


def prefix_rows(result: PulseResult, base: str) -> list[tuple[str, str, int, int, int, str]]:
    """``(playbook.node, pattern, system chars, stable chars, chars shared with the first
    call's prefix, prefix sha)`` of each call; checks that the calls of one pattern and stage
    have one prefix, and that each begins with ``base``."""
    rows = []
    first: str | None = None
    by_kind: dict[tuple[str | None, str | None], set[str]] = {}
    for record in result.llm_calls:
        system = record.messages[0]["content"] if record.messages else ""
        prefix = system[:record.stable_chars]
        first = prefix if first is None else first
        assert prefix.startswith(base), f"{record.node}: the prefix does not begin with Base"
        digest = hashlib.sha256(prefix.encode()).hexdigest()[:12]
        by_kind.setdefault((record.pattern, record.stage), set()).add(digest)
        shared = len(os.path.commonprefix([first, prefix]))
        rows.append((f"{record.playbook}.{record.node}", record.pattern or "-", len(system),
                     record.stable_chars, shared, digest))
    for kind, digests in by_kind.items():
        assert len(digests) == 1, f"{kind}: {len(digests)} prefixes in one pulse"
    return rows


def report(playbooks: list[str], make: Make, pulse: Callable[[Runtime, str], Any],
           scripts: Callable[[str], dict[str, list[Any]]], workdir: Path, base: str) -> None:
    """Print the prefix table and the cache table of each playbook (``base``: the persona's
    Base, which every prefix begins with)."""
    print("\nthe stable prefix of each model call of one pulse (sqlite)")
    print(f"{'pulse':<13} {'call':<26} {'pattern':<22} {'system':>7} {'stable':>7} "
          f"{'shared':>7}  prefix")
    for playbook in playbooks:
        model = ScriptedChatModel(responses=scripts(playbook))
        runtime = make(workdir / f"prefix-{playbook}", playbook, model, LLMOptions())
        result = pulse(runtime, playbook)
        runtime.close()
        for node, pattern, system, stable, shared, digest in prefix_rows(result, base):
            print(f"{playbook:<13} {node:<26} {pattern:<22} {system:>7} {stable:>7} "
                  f"{shared:>7}  {digest}")
    print("\nthe same pulse twice, one response cache (sqlite)")
    print(f"{'pulse':<13} {'run':<7} {'model calls':>11} {'tokens in':>10} {'out':>6} "
          f"{'hits':>5} {'saved':>7} {'wall ms':>8}")
    for playbook in playbooks:
        cache = ResponseCache.sqlite(workdir / f"responses-{playbook}.sqlite")
        options = LLMOptions(response_cache=cache)
        for run, script in (("first", scripts(playbook)), ("second", {})):
            model = ScriptedChatModel(responses=script)
            runtime = make(workdir / f"cache-{playbook}-{run}", playbook, model, options)
            started = time.perf_counter()
            result = pulse(runtime, playbook)
            wall = (time.perf_counter() - started) * 1000
            runtime.close()
            calls = result.llm_calls
            hits = sum(1 for c in calls if c.cache == "hit")
            print(f"{playbook:<13} {run:<7} {len(model.calls):>11} "
                  f"{sum(c.tokens_in for c in calls):>10} {sum(c.tokens_out for c in calls):>6} "
                  f"{hits:>5} {sum(c.tokens_saved for c in calls):>7} {wall:>8.1f}")
            if run == "second":
                assert not model.calls and hits == len(calls), f"{playbook}: a model call"


def runtime_maker(store_of: Callable[[Path], MessageStore],
                  workspace_of: Callable[[Path, str], Path | None]) -> Make:
    """A :data:`Make` over ``bench_pulse``'s store and workspace."""
    library = PlaybookLibrary.bundled([])

    def make(workdir: Path, playbook: str, model: ScriptedChatModel,
             options: LLMOptions) -> Runtime:
        workdir.mkdir(parents=True)
        return Runtime(RuntimeConfig(
            store_of(workdir), ModelSet.single(model), library=library,
            workspace=workspace_of(workdir, playbook),
            checkpoint_path=workdir / "checkpoints.sqlite", llm=options))

    return make


__all__ = ["prefix_rows", "report", "runtime_maker"]
