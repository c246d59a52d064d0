"""Benchmark of ``sea lsp``: diagnostics after an edit of a 300-node playbook in a library of
50 playbooks, as an editor sees them.

Run: ``PYTHONPATH=. python bench/bench_lsp.py [EDITS]``. The server runs as a process of its
own, spoken to over stdio by pytest-lsp's client (the one the tests use). The big playbook
(bench_validate's generator: every common node type, templates, expressions, branches, tool
calls) is opened, then edited ``EDITS`` times (default 200; every other edit breaks a
``next``, so half the answers carry a diagnostic); each sample is the wall time from sending
``textDocument/didChange`` to receiving the ``publishDiagnostics`` of that version.

Measured against, in the same run: ``sea validate`` of the same file and library (a fresh
process each time, ``--no-cache``: what an author waits for on the command line), and the
checks alone in this process (:func:`sea.cli.validate.collect`, the library's directory and
the bundled playbooks as context) — the floor the server's answer stands on. Targets: a
median of at most 50 ms, a p99 of at most 150 ms.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from bench_validate import playbook_bytes
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities, make_test_lsp_client

from sea.cli.validate import collect

BIG_NODES = 300
LIBRARY = 50


def library(directory: Path) -> Path:
    """Write the library: the big playbook and 49 small ones; the big one's path."""
    for i in range(LIBRARY - 1):
        small = orjson.loads(playbook_bytes(6))
        small["name"] = f"lib_{i}"
        (directory / f"lib_{i}.json").write_bytes(orjson.dumps(small, option=orjson.OPT_INDENT_2))
    big = directory / "big.json"
    big.write_bytes(playbook_bytes(BIG_NODES))
    return big


def edited(text: str, k: int) -> str:
    """The ``k``-th edit: a changed description; every other one breaks a ``next``."""
    text = text.replace('"description": "generated"', f'"description": "generated {k}"', 1)
    return text.replace('"next": "n151"', '"next": "n151x"', 1) if k % 2 else text


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def lsp_samples(big: Path, edits: int) -> list[float]:
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "sea", "lsp", "--no-project",
                          env={**os.environ})
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    uri, text = big.resolve().as_uri(), big.read_text()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri, "json", 0, text)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    samples = []
    for k in range(1, edits + 6):
        started = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=k, uri=uri),
            [lsp.TextDocumentContentChangeWholeDocument(edited(text, k))]))
        while True:
            params = await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and params.version == k:
                break
        assert bool(params.diagnostics) == bool(k % 2), params.diagnostics
        if k > 5:  # the first edits warm the server up
            samples.append(time.perf_counter() - started)
    await client.shutdown_session()
    return samples


def validate_samples(big: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds of ``sea validate --no-cache`` (a process) and of the checks in-process."""
    processes, checks = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sea", "validate", "--no-project", "--no-cache",
                        str(big)], capture_output=True, check=False)
        processes.append(time.perf_counter() - started)
        started = time.perf_counter()
        collect([big], None)
        checks.append(time.perf_counter() - started)
    return processes, checks


def main() -> None:
    edits = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    with tempfile.TemporaryDirectory() as tmp:
        big = library(Path(tmp))
        size = big.stat().st_size
        served = asyncio.run(lsp_samples(big, edits))
        processes, checks = validate_samples(big, 15)
    rows = [("sea lsp: edit -> diagnostics", served),
            ("sea validate (process, --no-cache)", processes),
            ("checks alone (in process)", checks)]
    print(f"{BIG_NODES}-node playbook ({size:,} bytes) in a library of "
          f"{LIBRARY} playbooks; {len(served)} edits")
    print(f"{'':38} {'median':>9} {'p99':>9}")
    for name, samples in rows:
        print(f"{name:38} {statistics.median(samples) * 1000:8.1f}ms "
              f"{percentile(samples, 99) * 1000:8.1f}ms")
    median, p99 = statistics.median(served) * 1000, percentile(served, 99) * 1000
    verdict = "met" if median <= 50 and p99 <= 150 else "NOT met"
    print(f"target (median <= 50 ms, p99 <= 150 ms): {verdict}")


if __name__ == "__main__":
    main()
