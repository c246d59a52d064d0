"""The playbook language: document models, loading, the JSON Schema, diagnostics, templates,
expressions, conditions and the static checks. Imports nothing of the engine."""
