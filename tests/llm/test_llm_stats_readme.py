"""The ``sea stats`` example of the budgets guide (docs/guides/budgets.md) is what a real run
prints: three ``meta_intent`` pulses on scripted models, then ``sea stats`` (latencies aside,
which no two runs share)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.llm.stats_example import readme_block, stats_output

README = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "budgets.md").read_text(
    encoding="utf-8")
_LATENCY = re.compile(r"^\d+\.\d+s$")


def _shown(block: str) -> list[list[str]]:
    """Each line's words, latencies and rules made alike (their widths vary with them)."""
    rows = []
    for line in block.splitlines():
        words = ["LATENCY" if _LATENCY.match(w) else w for w in line.split()]
        rows.append(["RULE"] if words and set(words[0]) == {"─"} else words)
    return rows


def test_the_readme_shows_what_sea_stats_prints(tmp_path: Path) -> None:
    printed = _shown(readme_block(stats_output(tmp_path)))
    start = README.index("    $ sea stats\n")
    end = README.index("\n\n(A record names", start)
    assert _shown(README[start:end]) == printed
    kinds = {tuple(row[:2]) for row in printed}
    assert {("scripted", "light"), ("scripted", "normal")} <= kinds
    assert "1 fallbacks," in " ".join(printed[1])
