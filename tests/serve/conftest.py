"""Fixtures of the server tests: one real ``sea serve`` process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve.server import Server, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``sea serve`` on a free loopback port (scripted model, the test playbooks)."""
    running = start_server(tmp_path_factory.mktemp("serve"))
    yield running
    running.stop()
