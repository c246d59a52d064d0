"""A SAIVerse playbook's top-level ``version`` (SAIVerse writes one) is accepted as the
README promises: it is legacy, with no effect, and ``sea migrate`` removes it."""

from __future__ import annotations

import orjson

from tests.trace.conftest import Sea
from tests.trace.test_cli_resume import ASKING


def test_a_top_level_version_is_accepted_and_migrate_removes_it(sea: Sea) -> None:
    path = sea.root / "versioned.json"
    path.write_bytes(orjson.dumps({**ASKING, "version": "1.0"}, option=orjson.OPT_INDENT_2))
    done = sea("validate", "--strict", str(path))
    assert done.code == 0, done.out + done.err
    done = sea("migrate", "--write", str(path))
    assert done.code == 0, done.out + done.err
    assert "version" not in orjson.loads(path.read_bytes())
