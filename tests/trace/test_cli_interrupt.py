"""Ctrl-C stops ``sea run`` at once: it is acknowledged when pressed, the pulse is cancelled
while the model streams (a slow scripted model here), and the command exits 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson


def test_ctrl_c_is_acknowledged_and_stops_a_streaming_reply(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_bytes(orjson.dumps({"responses": {
        "sub_router_user.decide": [{"playbook": "basic_chat", "reason": "hi"}],
        "sub_speak.compose": [" ".join(["word"] * 2000)],
    }, "chunk_delay_s": 0.05}))  # 100 s of reply, were it not stopped
    env = {**os.environ, "SEA_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sea", "run", "--input", "Hello", "--db",
         str(tmp_path / "memory.sqlite"), "--model", f"scripted:{script}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(4) == "word"  # the reply streams
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)  # a guard: it ends long before the reply would
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert code == 130, err
    assert "sea: stopping the pulse (Ctrl-C again to quit at once)" in err
    assert err.rstrip().endswith("sea: interrupted")
