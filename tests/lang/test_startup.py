"""`sea validate` stays light: it never imports the engine's heavy dependencies."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import argparse, sys
from sea.cli import validate
parser = argparse.ArgumentParser(prog="sea")
validate.register(parser.add_subparsers())
args = parser.parse_args(["validate", sys.argv[1]])
code = args.func(args)
heavy = sorted(m for m in ("langgraph", "langchain_core", "prompt_toolkit") if m in sys.modules)
print(code, heavy)
"""


def test_validate_imports_no_langgraph_or_langchain() -> None:
    data = str(ROOT / "tests" / "data" / "saiverse")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, data],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []"
