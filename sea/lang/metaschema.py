"""The JSON Schema 2020-12 metaschema validator: checks that a schema is a valid schema."""

from __future__ import annotations

from functools import lru_cache

from jsonschema import Draft202012Validator


@lru_cache(maxsize=1)
def metaschema() -> Draft202012Validator:
    """A validator of schemas against the 2020-12 metaschema (built once)."""
    return Draft202012Validator(Draft202012Validator.META_SCHEMA)
