"""The one LLM call path: the prompt patterns (Base, Main, Specialized) and their parts, model
choice with fallbacks and rate-limit backoff, structured output, budgets, prices, intent, and a
record of every call."""

from sea.llm.call import LLMCaller, LLMRequest, LLMResult
from sea.llm.models import ModelSet
from sea.llm.records import LLMCallRecord, ToolCallRequest

__all__ = ["LLMCallRecord", "LLMCaller", "LLMRequest", "LLMResult", "ModelSet", "ToolCallRequest"]
