"""How the document models are built: from real annotations, and only when used.

Building the pydantic models is most of what ``sea validate`` spends outside pydantic's own
import; these tests keep the two things that make it cheaper from regressing.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sea.lang.models import ContextRequirements, InputParam, Playbook
from sea.lang.node import ConditionalNext, FallibleNode, NodeModel, StrictModel
from sea.lang.node_models import BUILTIN_NODE_MODELS, MemorizeOption

ROOT = Path(__file__).resolve().parents[2]
MODELS = (StrictModel, ConditionalNext, NodeModel, FallibleNode, MemorizeOption,
          InputParam, ContextRequirements, Playbook, *BUILTIN_NODE_MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_model_s_annotations_are_types_not_text(model: type[StrictModel]) -> None:
    # text (`from __future__ import annotations`) would be evaluated field by field at build
    text = {name: a for name, a in vars(model).get("__annotations__", {}).items()
            if isinstance(a, str)}
    assert text == {}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_a_model_s_default_factories_are_python_functions(model: type[StrictModel]) -> None:
    # pydantic reads a factory's signature at the build; a builtin's (`list`) is parsed from
    # its text by tokenize
    builtin = {name: f.default_factory for name, f in model.model_fields.items()
               if f.default_factory is not None and not inspect.isfunction(f.default_factory)}
    assert builtin == {}


def test_checking_valid_playbooks_tokenizes_nothing() -> None:
    compiled = _run("""
        import json, tokenize
        from sea.cli import main
        main(["validate", "--no-cache", "playbooks"])
        print(json.dumps([tokenize._compile.cache_info().currsize]))
    """)
    assert compiled == [0]


def _run(script: str) -> list[str]:
    env = {"PYTHONPATH": str(ROOT), "PATH": "", "SEA_CACHE_DIR": os.environ["SEA_CACHE_DIR"]}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, cwd=ROOT, env=env, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_checking_valid_playbooks_builds_the_playbook_model_only() -> None:
    built = _run("""
        import json
        from sea.cli import main
        from sea.lang import models, node, node_models
        main(["validate", "--no-cache", "playbooks"])
        every = [node.StrictModel, node.ConditionalNext, node.NodeModel, node.FallibleNode,
                 node_models.MemorizeOption, models.InputParam, models.ContextRequirements,
                 models.Playbook, *node_models.BUILTIN_NODE_MODELS]
        print(json.dumps([m.__name__ for m in every if m.__pydantic_complete__]))
    """)
    assert built == ["Playbook"]


def test_a_node_type_first_used_by_threads_at_once_validates_as_when_built() -> None:
    # the node types are built on first use: threads that use one together must all get
    # its own validator (pydantic builds a deferred model under a lock from 2.14 on)
    verdicts = _run("""
        import json, threading
        from pydantic import ValidationError
        from sea.lang.node_models import SetNode

        gate = threading.Barrier(8)
        verdicts = []

        def check(node):
            gate.wait()
            try:
                SetNode.model_validate(node, strict=True)
                verdicts.append("accepted")
            except ValidationError as exc:
                verdicts.append(",".join(e["type"] for e in exc.errors()))

        good = {"id": "a", "type": "set", "assignments": {"x": 1}}
        bad = {"id": "a", "type": "set", "assignments": {}, "output_key": "x"}
        threads = [threading.Thread(target=check, args=(good if i % 2 else bad,))
                   for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(json.dumps(sorted(verdicts)))
    """)
    assert verdicts == ["accepted"] * 4 + ["extra_forbidden"] * 4
