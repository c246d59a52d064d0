"""The response cache: a deterministic call asked again with the same context, of the same
model, is answered from the cache without calling the model (opt-in,
``LLMOptions(response_cache=ResponseCache(...))``, ``sea run --response-cache``).

It goes through LangChain's own cache interface (:class:`langchain_core.caches.BaseCache`,
keyed as LangChain keys it: the prompt and the model's ``llm_string``), so a host may give
any LangChain cache (``InMemoryCache``, ``langchain_community``'s caches...);
:class:`SQLiteResponseCache` keeps it in a SQLite file, the default.

A call is cached when its model is deterministic (:func:`is_deterministic`: a sampling
temperature of 0 or a fixed seed, or no sampling settings at all, like the scripted model);
the key holds everything the answer depends on: the messages as sent, the answer's schema,
the tools offered and the model (its class, name and settings). The call's record says
``cache: hit`` (no model call was made, no token spent; ``tokens_saved`` is what the cached
call used) or ``cache: miss``; ``sea stats`` adds them up.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.outputs import Generation
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from sea.errors import UsageError
from sea.llm.models import model_name

CACHE_TABLE = "sea_response_cache"


class SQLiteResponseCache(BaseCache):
    """LangChain's cache interface over one SQLite file (created when missing).

    Args:
        path: The SQLite file (``:memory:`` keeps it in memory, for one process).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=10)
            with self._db:
                self._db.execute(
                    f"CREATE TABLE IF NOT EXISTS {CACHE_TABLE} (prompt TEXT NOT NULL,"
                    " llm TEXT NOT NULL, idx INTEGER NOT NULL, value TEXT NOT NULL,"
                    " PRIMARY KEY (prompt, llm, idx))")
        except sqlite3.Error as exc:
            raise UsageError(f"cannot open the response cache {self.path}: {exc}") from exc

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """The generations kept for ``prompt`` and ``llm_string``, or None."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT value FROM {CACHE_TABLE} WHERE prompt = ? AND llm = ? ORDER BY idx",
                (prompt, llm_string)).fetchall()
        if not rows:
            return None
        kept = [orjson.loads(row[0]) for row in rows]
        return [Generation(text=k["text"], generation_info=k.get("info")) for k in kept]

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Keep ``return_val`` for ``prompt`` and ``llm_string`` (replacing what was)."""
        values = [orjson.dumps({"text": g.text, "info": g.generation_info}).decode()
                  for g in return_val]
        with self._lock, self._db:
            self._db.execute(f"DELETE FROM {CACHE_TABLE} WHERE prompt = ? AND llm = ?",
                             (prompt, llm_string))
            self._db.executemany(
                f"INSERT INTO {CACHE_TABLE} (prompt, llm, idx, value) VALUES (?, ?, ?, ?)",
                [(prompt, llm_string, i, v) for i, v in enumerate(values)])

    def clear(self, **kwargs: Any) -> None:
        """Forget every answer."""
        with self._lock, self._db:
            self._db.execute(f"DELETE FROM {CACHE_TABLE}")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()


@dataclass(frozen=True, slots=True)
class ResponseCache:
    """The host's response cache (``LLMOptions.response_cache``).

    Attributes:
        store: Where answers are kept: any LangChain cache.
    """

    store: BaseCache

    @classmethod
    def sqlite(cls, path: str | Path) -> ResponseCache:
        """A cache kept in the SQLite file ``path``."""
        return cls(SQLiteResponseCache(path))

    def lookup(self, key: CacheKey) -> CachedAnswer | None:
        """The answer kept under ``key``, or None."""
        found = self.store.lookup(key.prompt, key.llm)
        if not found:
            return None
        info = found[0].generation_info or {}
        try:
            return CachedAnswer(found[0].text, info.get("parsed"), info.get("tool_call"),
                                info.get("response"), int(info.get("tokens_in", 0)),
                                int(info.get("tokens_out", 0)))
        except (TypeError, ValueError):
            return None  # not an answer this cache kept: asked again

    def keep(self, key: CacheKey, answer: CachedAnswer) -> None:
        """Keep ``answer`` under ``key``."""
        info = {"parsed": answer.parsed, "tool_call": answer.tool_call,
                "response": answer.response, "tokens_in": answer.tokens_in,
                "tokens_out": answer.tokens_out}
        self.store.update(key.prompt, key.llm, [Generation(text=answer.text,
                                                           generation_info=info)])


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What a cached answer is kept under: LangChain's ``(prompt, llm_string)``."""

    prompt: str
    llm: str


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A kept answer and what its call used.

    Attributes:
        text: The answer's text.
        parsed: The parsed object of a structured answer.
        tool_call: The tool call chosen, as ``{"name", "args", "id"}``.
        response: The answer in the call record's form.
        tokens_in: The input tokens the call used (what a hit saves).
        tokens_out: Its output tokens.
    """

    text: str
    parsed: Any
    tool_call: Mapping[str, Any] | None
    response: Any
    tokens_in: int
    tokens_out: int


def is_deterministic(model: Any) -> bool:
    """Whether ``model`` answers the same context the same way: a temperature of 0 or a
    fixed seed, or no sampling settings at all (the scripted model)."""
    has_temperature = hasattr(model, "temperature")
    if not has_temperature:
        return True
    if getattr(model, "temperature", None) == 0:
        return True
    return getattr(model, "seed", None) is not None


def cache_key(
    model: Any,
    messages: Sequence[BaseMessage],
    schema: Mapping[str, Any] | None,
    tools: Sequence[BaseTool],
) -> CacheKey:
    """The key of a call: its messages as sent, its schema and tools, the model's settings."""
    prompt = orjson.dumps({
        "messages": [{"type": m.type, "content": m.content} for m in messages],
        "schema": schema,
        "tools": [convert_to_openai_tool(tool) for tool in tools],
    }, option=orjson.OPT_SORT_KEYS, default=str).decode()
    named = f"{type(model).__qualname__}:{model_name(model)}"
    try:
        settings = str(model._get_llm_string())
    except Exception:  # settings that do not serialize: its class and name alone
        settings = ""
    return CacheKey(prompt, f"{named}\n{settings}")


ANTHROPIC_TYPES = frozenset({"anthropic-chat", "anthropic-bedrock-chat"})
"""The ``_llm_type`` of LangChain's Anthropic chat models, direct and on Bedrock (they take
``cache_control``)."""


def mark_stable_prefix(
    messages: Sequence[BaseMessage], stable: str, model: Any
) -> list[BaseMessage]:
    """``messages`` as sent to ``model``: for a provider that takes cache markers
    (Anthropic), the system message's stable prefix is its own text block marked
    ``cache_control: ephemeral`` (what follows it, its own block); for other providers,
    which cache a prompt's prefix by themselves, the messages as they are."""
    if (getattr(model, "_llm_type", None) not in ANTHROPIC_TYPES or not messages
            or not stable or messages[0].type != "system"):
        return list(messages)
    text = str(messages[0].content)
    if not text.startswith(stable):
        return list(messages)
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": stable, "cache_control": {"type": "ephemeral"}}]
    rest = text[len(stable):]
    if rest:
        blocks.append({"type": "text", "text": rest})
    return [SystemMessage(content=blocks), *messages[1:]]
