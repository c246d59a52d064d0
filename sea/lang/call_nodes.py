"""The node types that call a playbook: ``subplay`` (by name) and ``exec`` (chosen at run
time), with what both share (:class:`CallNode`: arguments, memory scope, subagents)."""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from sea.lang.node import (
    NAME_PATTERN,
    Defined,
    FallibleNode,
    PlaybookIndex,
    Read,
    Unknown,
    key_read,
    nested_reads,
    template_reads,
)
from sea.lang.uses import CalleeUse, ChosenCallee

_CALLEE = "the callee is `playbook`"


class CallNode(FallibleNode):
    """A node that calls a playbook (``subplay``, ``exec``): arguments and memory scope."""

    args: dict[str, Any] | None = Field(
        default=None,
        description="Arguments for the callee's `input_schema`; string values are templates.",
    )
    input_template: str | None = Field(
        default=None,
        description="Legacy (SAIVerse): a template for the callee's `input`, used when `args` "
        "gives none; `sea migrate` writes it as `args.input`.",
    )
    propagate_output: bool = Field(
        default=False,
        description="Append the callee's outputs (spoken and memorized texts) to this "
        "playbook's outputs.",
    )
    execution: Literal["inline", "subagent"] = Field(
        default="inline",
        description="`inline`: run in this pulse's memory scope. `subagent`: run in a "
        "sub-thread of the persona's memory of its own (what the callee writes goes there; "
        "its model calls see that thread and its arguments, not the main conversation), "
        "closed when it ends however it ends; what it came to returns as "
        "`_subagent_chronicle`. Subagent calls nest at most `Limits.max_subagent_depth` (2).",
    )
    subagent_chronicle: bool = Field(
        default=True,
        description="With `execution: subagent`: `_subagent_chronicle` is the light model's "
        "summary of the sub-thread (true) or a bounded transcript of it (false; also when "
        "the model fails).",
    )
    isolate_pulse_context: bool = Field(
        default=False,
        description="The callee's llm nodes see history but not this pulse's earlier messages.",
    )

    mermaid_shape: ClassVar[tuple[str, str]] = ("[[", "]]")

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables (and the legacy input template's)."""
        yield from nested_reads(self.args, f"{base}/args", self.id)
        if self.input_template is not None:  # rendered as SAIVerse did: unknown stays as written
            yield from template_reads(
                self.input_template, f"{base}/input_template", self.id, prompt=True
            )

    def _outputs_of(self, names: list[str]) -> Iterator[Defined]:
        for name in names:
            yield Defined(
                name.split(".", 1)[0],
                f"the output_schema of the playbook called by node `{self.id}`",
            )


class SubplayNode(CallNode):
    """Call a named playbook like a function."""

    type: Literal["subplay"] = Field(description="Node type: call a playbook by name.")
    playbook: str = Field(pattern=NAME_PATTERN, description="Name of the playbook to call.")
    line: Literal["main", "sub"] = Field(
        default="main",
        description="`main`: the callee runs on this line of thought (as `execution` says). "
        "`sub` (SAIVerse's sub line): it runs from a copy of this pulse's messages so far, in "
        "a memory scope of its own, on the lightweight model; what it writes is of the sub "
        "line (never read by a later pulse); its `report_to_parent` comes back as a "
        "`<system>` message of the engine, stored on the main line for later pulses.",
    )

    known_mistakes: ClassVar[Mapping[str, str]] = {"name": _CALLEE, "playbook_name": _CALLEE}

    @field_validator("line")
    @classmethod
    def _one_way_aside(cls, line: str, info: ValidationInfo) -> str:
        if line == "sub" and info.data.get("execution") == "subagent":
            raise ValueError(
                '`"line": "sub"` already runs the callee aside, in a scope of its own; it '
                'cannot also be `"execution": "subagent"` (choose one)')
        return line

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """The callee's ``output_schema`` (unknown without the library or the callee)."""
        signature = library.signature(self.playbook) if library is not None else None
        if signature is None:
            yield Unknown(f"node `{self.id}` (playbook {self.playbook})")
            return
        yield from self._outputs_of(list(signature.outputs))

    def detail(self) -> str | None:
        """The callee's name."""
        return self.playbook

    def callees_named(self) -> Iterator[CalleeUse]:
        """The callee, with ``args`` (all it gets, checked against its parameters)."""
        yield CalleeUse(self.playbook, ("playbook",), self.args, "args", checked=True)


class ExecNode(CallNode):
    """Call a playbook chosen at run time (by a router)."""

    type: Literal["exec"] = Field(description="Node type: call a playbook chosen at run time.")
    playbook_source: str = Field(
        default="selected_playbook",
        description="State key holding the name of the playbook to call.",
    )
    args_source: str = Field(
        default="selected_args",
        description="State key holding an object of arguments, laid over `args`.",
    )
    allowed_playbooks: list[str] | None = Field(
        default=None,
        description="Playbooks this node may call. Absent: any router-callable playbook.",
    )

    action: None = Field(
        default=None,
        description="Only null, as SAIVerse writes it (`sea migrate` removes it): `exec` takes "
        "the playbook name from the state key in `playbook_source`; to call a fixed playbook "
        "use a `subplay` node with `playbook`.",
    )

    def field_reads(self, base: str) -> Iterator[Read]:
        """The argument templates' variables and the key naming the callee."""
        yield from super().field_reads(base)
        yield from key_read(self.playbook_source, f"{base}/playbook_source", self.id)

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """The ``output_schema`` of every playbook it may call."""
        if library is None:
            yield Unknown(f"node `{self.id}` (playbook chosen at run time)")
            return
        names = self.allowed_playbooks
        outputs: list[str] = []
        for name in names if names is not None else library.names():
            signature = library.signature(name)
            if signature is not None and (names is not None or signature.router_callable):
                outputs.extend(signature.outputs)
        yield from self._outputs_of(outputs)

    def detail(self) -> str | None:
        """Where the callee's name comes from."""
        return f"from {self.playbook_source}"

    def chosen_callee(self) -> ChosenCallee | None:
        """The playbook named by ``playbook_source``, among ``allowed_playbooks``."""
        names = self.allowed_playbooks
        return ChosenCallee(None if names is None else tuple(names))

    def callees_named(self) -> Iterator[CalleeUse]:
        """``allowed_playbooks`` (checked to exist; arguments come at run time)."""
        for position, name in enumerate(self.allowed_playbooks or []):
            yield CalleeUse(name, ("allowed_playbooks", position))
