"""Fixtures of the server tests: real ``sea serve`` processes.

``server`` is one per test module. ``shared_server`` is one per test process, for the
modules whose tests each make their own threads, run them to their end (or stop them and
wait) and look only at those (``test_agent_chat_ui``, ``test_readme``, ``test_sdk_async``,
``test_sdk_sync``, ``test_v1_server``): such modules do not see each other. A module whose
tests read the server's whole state (the personas listed, the metrics) or leave a run going
keeps a server of its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve.server import QUICK_CHUNK_DELAY_S, Server, script_of, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``sea serve`` on a free loopback port (scripted model, the test playbooks; replies
    in chunks :data:`~tests.serve.server.QUICK_CHUNK_DELAY_S` apart)."""
    running = start_server(tmp_path_factory.mktemp("serve"),
                           script=script_of(QUICK_CHUNK_DELAY_S))
    yield running
    running.stop()


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same as ``server``, started once for every module that uses it."""
    running = start_server(tmp_path_factory.mktemp("serve-shared"),
                           script=script_of(QUICK_CHUNK_DELAY_S))
    yield running
    running.stop()
