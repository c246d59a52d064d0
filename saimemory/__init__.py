"""SAIMemory: the persona message store and pulse-scoped context assembly."""

from saimemory.base import MessageStore
from saimemory.errors import MemoryStoreError
from saimemory.records import (
    CONVERSATION_TAG,
    ROOT_SCOPE,
    HistoryBudget,
    Message,
    NewMessage,
    Persona,
    SearchHit,
    Thread,
)

__all__ = [
    "CONVERSATION_TAG",
    "ROOT_SCOPE",
    "HistoryBudget",
    "MemoryStoreError",
    "Message",
    "MessageStore",
    "NewMessage",
    "Persona",
    "SearchHit",
    "Thread",
]
