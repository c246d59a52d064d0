"""What a node type is, to the language: its document model and what it knows about itself.

Every node type is one :class:`NodeModel` subclass with a ``type`` literal. Besides its fields,
the class declares, once, everything the rest of SEA needs to know about the type:

* whether it can fail (:class:`FallibleNode` adds ``error_next``),
* its outgoing edges (:meth:`NodeModel.edges`, shared by the checks, the compiler and drawing),
* the state variables it reads and defines (:meth:`NodeModel.reads`, :meth:`NodeModel.defines`,
  for the variable checks),
* how it is drawn (:attr:`NodeModel.mermaid_shape`, :meth:`NodeModel.detail`),
* whether it streams its reply to the host (:meth:`NodeModel.streams`),
* the field names authors often get wrong on it (:attr:`NodeModel.known_mistakes`),
* the tools it offers a model and the ones it needs (:meth:`NodeModel.offered_tools`,
  :meth:`NodeModel.tools_needed`),
* what the static checks look at (:mod:`sea.lang.uses`): the schema of its structured answer
  (:meth:`NodeModel.answer`), the tools and playbooks it names with their arguments
  (:meth:`NodeModel.tools_named`, :meth:`NodeModel.callees_named`), a playbook it chooses
  at run time (:meth:`NodeModel.chosen_callee`), the memory tags it
  writes (:meth:`NodeModel.tags_written`) and the expressions it evaluates
  (:meth:`NodeModel.expressions`).

The checks, the compiler and the drawing ask a node these instead of testing its type, so a
host's own type gets each of them by declaring it. How a type *runs* (and whether it is
pure or may pause for a person) is its kind's part (:class:`sea.engine.registry.NodeKind`).

The engine finds a type's runner beside its model (``sea.nodes``); a vocabulary of models
(:class:`sea.lang.vocabulary.NodeTypes`) builds the document model and the JSON Schema.
"""

# No `from __future__ import annotations` here: pydantic would evaluate every field's
# annotation from its text when the models are built, a good part of that cost.
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sea.lang.locate import escape_pointer
from sea.lang.templates import references
from sea.lang.uses import Answer, CalleeUse, ChosenCallee, ExpressionUse, TagUse, ToolUse

NAME_PATTERN = r"^[a-z0-9_]+$"
NODE_ID_PATTERN = r"^[A-Za-z0-9_\-]+$"

Operator = Literal["eq", "ne", "gt", "gte", "lt", "lte", "contains"]


class StrictModel(BaseModel):
    """Base of every document model: unknown fields are errors; instances are frozen.

    Models are built when first used (``defer_build``): checking a document builds the
    playbook model's validator only, which holds every node type's; a node type's own
    validator is built when a rejected node is explained with it. Pydantic builds a
    deferred model under a lock from 2.14 on (threads checking playbooks at once).
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, defer_build=True
    )


class ConditionalNext(StrictModel):
    """Branching: compare a state value with case keys, JSON-typed."""

    field: str = Field(
        description="Dotted path of the state value to compare, e.g. `decision.playbook`. "
        "A list element is `items.0`; `items.length` is the list's length."
    )
    operator: Operator = Field(
        default="eq",
        description="How the value is compared with each case key: eq, ne, gt, gte, lt, lte, "
        "contains. Ordering operators compare numbers; `contains` matches a string holding the "
        "key's text, a list holding an element equal to the key (JSON-typed, as `eq`) or an "
        "object with the key as a member; the first matching case wins.",
    )
    cases: dict[str, str | None] = Field(
        description="Case key → target node id (null ends the playbook). Keys are JSON-typed: "
        '`"true"` matches boolean true, `"5"` matches the number 5, `"null"` matches a missing or '
        'null value, other keys match strings. A key `"default"` is the fallback (legacy form). '
        "Keys may contain `{var}` references, rendered against the state."
    )
    default: str | None = Field(
        default=None,
        description="Target node id when no case matches (null or absent ends the playbook, "
        'unless `cases` has a `"default"` key).',
    )


@dataclass(frozen=True, slots=True)
class Edge:
    """One outgoing edge of a node."""

    target: str | None
    """Id of the next node; ``None`` ends the playbook."""
    field: str
    """Where the edge is written, as a JSON pointer suffix inside the node (``next``,
    ``conditional_next/cases/KEY``, ``conditional_next/default``, ``error_next``)."""
    label: str | None = None
    """The case key (``default`` for the fallback), ``error`` for ``error_next``, else None."""

    @property
    def on_error(self) -> bool:
        """Taken when the node fails."""
        return self.field == "error_next"


@dataclass(frozen=True, slots=True)
class Read:
    """One read of a state variable."""

    root: str
    pointer: str
    node_id: str
    char_offset: int | None = None
    prompt: bool = False
    """Inside prompt text, where a brace may be literal (a warning, not an error)."""
    path: str = ""


@dataclass(frozen=True, slots=True)
class Defined:
    """A variable a node defines, and what defines it (for messages)."""

    name: str
    by: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """A node defines variables nobody can know statically (a callee not in the library)."""

    source: str


@dataclass(frozen=True)
class Signature:
    """What a caller needs to know about a playbook it calls."""

    name: str
    params: Mapping[str, bool] = field(default_factory=dict)
    """Declared parameter → required (without a default)."""
    outputs: tuple[str, ...] = ()
    """Keys of ``output_schema`` copied back into the caller."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """Parameter → its legacy SAIVerse ``source`` (``input``, ``parent.X``), if it has one."""
    router_callable: bool = False


class PlaybookIndex(Protocol):
    """The playbooks a playbook may call (a :class:`sea.lang.library.PlaybookLibrary`)."""

    def names(self) -> list[str]:
        """Every playbook name."""
        ...

    def signature(self, name: str) -> Signature | None:
        """The playbook's signature, ``None`` if there is no such playbook."""
        ...


def empty_list() -> list[Any]:
    """A new empty list: the ``default_factory`` of the models' list fields. Pydantic reads a
    factory's signature when it builds a model, and a builtin's (``list``'s) only from its
    text, tokenizing it: a millisecond and a half of the playbook model's first build."""
    return []


def root_of(path: str) -> str:
    """First segment of a dotted path."""
    return path.split(".", 1)[0]


def template_reads(text: str, pointer: str, node_id: str, prompt: bool = False) -> Iterator[Read]:
    """The variables a template reads.

    Args:
        text: The template.
        pointer: The JSON pointer of the field that holds it (``f"{base}/text"``).
        node_id: The node's id.
        prompt: The template is a model's prompt (its reads are checked as such).

    Yields:
        One read per variable, for :meth:`NodeModel.field_reads`.
    """
    for ref in references(text):
        yield Read(ref.root, pointer, node_id, ref.start, prompt, ref.path)


def nested_reads(value: Any, pointer: str, node_id: str) -> Iterator[Read]:
    """The variables read by the templates anywhere inside a JSON value."""
    if isinstance(value, str):
        yield from template_reads(value, pointer, node_id)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from nested_reads(item, f"{pointer}/{escape_pointer(key)}", node_id)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from nested_reads(item, f"{pointer}/{i}", node_id)


def key_read(path: str | None, pointer: str, node_id: str) -> Iterator[Read]:
    """The read of a state key named by a field (``call_source``, ``metadata_key``...)."""
    if path:
        yield Read(root_of(path), pointer, node_id, None, False, path)


def keys_defined(node_id: str, *keys: str | None) -> Iterator[Defined]:
    """The variables a node defines by writing the state keys ``keys`` (``None`` skipped).

    Args:
        node_id: The node's id.
        keys: The state keys it writes (``output_key``...).

    Yields:
        One definition per key, for :meth:`NodeModel.defines`.
    """
    for key in keys:
        if key:
            yield Defined(root_of(key), f"node `{node_id}`")


class NodeModel(StrictModel):
    """A step of a playbook. Subclasses add a ``type`` literal and their own fields."""

    fallible: ClassVar[bool] = False
    """The type can fail, so it accepts ``error_next``."""
    mermaid_shape: ClassVar[tuple[str, str]] = ("[", "]")
    """Brackets around the node in a Mermaid drawing."""
    known_mistakes: ClassVar[Mapping[str, str]] = {}
    """Unknown field → the hint for it (habits from other engines, likely confusions)."""

    id: str = Field(
        pattern=NODE_ID_PATTERN,
        description="Unique id of the node within the playbook (letters, digits, `_`, `-`).",
    )
    next: str | None = Field(
        default=None,
        description="Id of the node to run next; null or absent ends the playbook. "
        "Ignored when `conditional_next` is given.",
    )
    conditional_next: ConditionalNext | None = Field(
        default=None, description="Branch on a state value instead of a fixed `next`."
    )

    @classmethod
    def node_type(cls) -> str:
        """The ``type`` value of this model's nodes."""
        declared = cls.model_fields.get("type")
        values: tuple[Any, ...] = getattr(declared and declared.annotation, "__args__", ())
        if len(values) != 1 or not isinstance(values[0], str):
            raise TypeError(f"{cls.__name__}.type must be a Literal of one string")
        return str(values[0])

    @property
    def on_error(self) -> str | None:
        """Where a failure goes (``error_next``); None when failures end the pulse."""
        return None

    def edges(self) -> Iterator[Edge]:
        """Every outgoing edge. ``next`` counts only without ``conditional_next``; an absent
        default ends the playbook (unless ``cases`` has a ``"default"`` key)."""
        cond = self.conditional_next
        if cond is not None:
            for key, target in cond.cases.items():
                yield Edge(target, f"conditional_next/cases/{escape_pointer(key)}", key)
            if cond.default is not None or "default" not in cond.cases:
                yield Edge(cond.default, "conditional_next/default", "default")
        else:
            yield Edge(self.next, "next")
        if self.on_error is not None:
            yield Edge(self.on_error, "error_next", "error")

    def reads(self, base: str) -> Iterator[Read]:
        """The state variables this node reads (``base``: the node's JSON pointer): its own
        fields' (:meth:`field_reads`), then its branch's."""
        yield from self.field_reads(base)
        cond = self.conditional_next
        if cond is not None:
            yield from key_read(cond.field, f"{base}/conditional_next/field", self.id)
            for key in cond.cases:
                pointer = f"{base}/conditional_next/cases/{escape_pointer(key)}"
                for ref in references(key):
                    yield Read(ref.root, pointer, self.id, None, False, ref.path)

    def offered_tools(self) -> list[str]:
        """The tools this node offers a model (``available_tools``; none by default), for the
        tool catalogue checks."""
        return []

    def tools_needed(self) -> list[str]:
        """The tools this node cannot run without (by default the tools it offers)."""
        return self.offered_tools()

    def field_reads(self, base: str) -> Iterator[Read]:
        """The state variables this type's own fields read (none by default)."""
        return iter(())

    def defines(self, library: PlaybookIndex | None) -> Iterator[Defined | Unknown]:
        """The state variables this node defines (``library``: the playbooks it may call)."""
        return iter(())

    def detail(self) -> str | None:
        """What a drawing shows after the type (the tool or playbook it calls)."""
        return None

    def streams(self) -> bool:
        """Whether this node sends its reply to the host piece by piece as a model writes it
        (``TokenChunk`` events before its ``Spoken``; False by default)."""
        return False

    def answer(self) -> Answer | None:
        """The structured answer this node asks a model for, with where it is stored (its
        schema is checked; the types it declares check the case keys compared with it).

        Returns:
            None by default: the node declares no answer schema.
        """
        return None

    def tools_named(self) -> Iterator[ToolUse]:
        """The tools this node names, for the tool catalogue checks.

        Returns:
            By default each tool it offers (:meth:`offered_tools`), as written in its
            ``available_tools`` field, without arguments.
        """
        for position, name in enumerate(self.offered_tools()):
            yield ToolUse(name, ("available_tools", position))

    def callees_named(self) -> Iterator[CalleeUse]:
        """The playbooks this node names (checked to exist, with the arguments it passes;
        none by default)."""
        return iter(())

    def chosen_callee(self) -> ChosenCallee | None:
        """Whether this node calls a playbook chosen at run time, and among which (the
        variable checks then count what those playbooks return; None by default)."""
        return None

    def tags_written(self) -> Iterator[TagUse]:
        """The memory tags this node writes (a tag the store keeps for itself is refused;
        none by default)."""
        return iter(())

    def expressions(self) -> Iterator[ExpressionUse]:
        """The ``=`` expressions this node evaluates (each must parse; none by default)."""
        return iter(())


class FallibleNode(NodeModel):
    """A node type that can fail; ``error_next`` routes its failures."""

    fallible: ClassVar[bool] = True

    error_next: str | None = Field(
        default=None,
        description="Id of the node to run when this node fails; the error is recorded in "
        "state under `error` (code, message, node). Without it, a failure ends the pulse.",
    )

    @property
    def on_error(self) -> str | None:
        """Where a failure goes (``error_next``); None when failures end the pulse."""
        return self.error_next
