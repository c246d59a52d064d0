"""The README's "Serving" example runs as written against a real ``sea serve`` (its address
and token replaced by the test server's)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.serve.server import REPLY, ROOT, Server


@pytest.fixture
def server(shared_server: Server) -> Server:
    """The server this test process shares with the modules like this one (conftest)."""
    return shared_server


def test_the_readme_serving_example_runs(server: Server) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Serving"):readme.index("## Where the docs are")]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None, "the README's Serving section has no Python example"
    assert "    sea serve" in section
    program = found.group(1).replace("http://127.0.0.1:2024", server.url)
    program = program.replace("THE TOKEN sea serve PRINTED", server.token)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == REPLY + "\n"
