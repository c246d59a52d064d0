"""The one LLM call path: context by profile, model choice, structured output, records."""

from sea.llm.call import LLMCaller, LLMRequest, LLMResult
from sea.llm.models import ModelSet
from sea.llm.records import LLMCallRecord, ToolCallRequest

__all__ = ["LLMCallRecord", "LLMCaller", "LLMRequest", "LLMResult", "ModelSet", "ToolCallRequest"]
