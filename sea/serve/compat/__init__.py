"""The LangGraph-compatible API: assistants, threads and runs as ``langgraph_sdk`` and
agent-chat-ui call them, mapped onto SEA's playbooks, conversations and pulses."""
