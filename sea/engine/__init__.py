"""The execution core: playbook → LangGraph compilation, the node-type registry, the pulse frame,
state, calls between playbooks, routing, bounds, approval, events and the tool box."""
