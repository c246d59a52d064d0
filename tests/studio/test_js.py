"""The studio's JavaScript that is not drawing (the SSE reader, the API client, the router,
the layout adapter, ...) under ``node --test``: ``tests/studio/js/*.test.mjs``. Skipped,
saying why, where Node.js is not installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
HERE = Path(__file__).parent / "js"


@pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")
@pytest.mark.parametrize("script", sorted(HERE.glob("*.test.mjs")), ids=lambda path: path.name)
def test_node_tests_pass(script: Path) -> None:
    assert NODE is not None
    done = subprocess.run([NODE, "--test", str(script)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
