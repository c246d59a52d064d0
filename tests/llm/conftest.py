"""Fixtures of the LLM call path tests."""

from __future__ import annotations

import pytest

from tests.llm.fakes import Recorder


@pytest.fixture
def recorder() -> Recorder:
    """Collects the call records the caller emits."""
    return Recorder()
