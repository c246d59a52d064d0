"""The stable diagnostic codes of playbook documents (``SEA001``–``SEA199``).

Codes never change meaning once published; a retired code stays reserved. Tests and tools
may match on them. ``sea validate`` prints them; ``CODES`` gives each a one-line meaning.
"""

from __future__ import annotations

from typing import Final

# Reading the file
FILE_UNREADABLE: Final = "SEA001"
INVALID_UTF8: Final = "SEA002"
INVALID_JSON: Final = "SEA003"
NOT_AN_OBJECT: Final = "SEA004"
TOO_DEEP: Final = "SEA005"
NOT_A_FILE: Final = "SEA006"
FILE_TOO_LARGE: Final = "SEA007"
DUPLICATE_KEY: Final = "SEA008"
# Schema (shape of the document)
MISSING_FIELD: Final = "SEA010"
UNKNOWN_FIELD: Final = "SEA011"
WRONG_TYPE: Final = "SEA012"
UNKNOWN_NODE_TYPE: Final = "SEA013"
UNSUPPORTED_NODE_TYPE: Final = "SEA014"
BAD_PATTERN: Final = "SEA015"
BAD_ENUM: Final = "SEA016"
CONDITIONAL_NEXT_LIST: Final = "SEA017"
ERROR_NEXT_NOT_FALLIBLE: Final = "SEA018"
BAD_RESPONSE_SCHEMA: Final = "SEA019"
INVALID_VALUE: Final = "SEA009"
# Graph
DUPLICATE_ID: Final = "SEA020"
MISSING_START: Final = "SEA021"
UNKNOWN_NEXT: Final = "SEA022"
UNKNOWN_ERROR_NEXT: Final = "SEA023"
UNKNOWN_CASE_TARGET: Final = "SEA024"
UNREACHABLE: Final = "SEA025"
UNBOUNDED_LOOP: Final = "SEA026"
NEXT_IGNORED: Final = "SEA027"
DUPLICATE_PARAM: Final = "SEA028"
RESERVED_ID: Final = "SEA029"
# Variables and expressions
UNDEFINED_VARIABLE: Final = "SEA030"
UNDEFINED_IN_PROMPT: Final = "SEA031"
EXPRESSION_SYNTAX: Final = "SEA032"
UNCERTAIN_VARIABLE: Final = "SEA033"
OUTPUT_NEVER_DEFINED: Final = "SEA034"
RESERVED_TAG: Final = "SEA035"
TOOLS_WITH_SCHEMA: Final = "SEA036"
EXPRESSION_TOO_LARGE: Final = "SEA037"
UNSUPPORTED_PATTERN: Final = "SEA038"
DYNAMIC_CALLEE_VARIABLE: Final = "SEA039"
# Branches
CASE_NEVER_MATCHES: Final = "SEA040"
ORDERING_ON_NON_NUMBER: Final = "SEA041"
MAPPING_SOURCE_UNKNOWN: Final = "SEA042"
PYTHON_BOOLEAN_KEY: Final = "SEA043"
CONTAINS_ON_SCALAR: Final = "SEA044"
# Calls between playbooks
UNKNOWN_PLAYBOOK: Final = "SEA050"
UNKNOWN_ARGUMENT: Final = "SEA051"
MISSING_ARGUMENT: Final = "SEA052"
CHILD_WITHOUT_REPORT: Final = "SEA053"
# Tools
UNKNOWN_TOOL: Final = "SEA060"
UNKNOWN_TOOL_ARGUMENT: Final = "SEA061"
MISSING_TOOL_ARGUMENT: Final = "SEA062"
BAD_TOOL_ARGUMENT: Final = "SEA063"
SCHEMA_SOURCE_IGNORED: Final = "SEA064"
# Sets of files
DUPLICATE_PLAYBOOK: Final = "SEA080"
# The report
TOO_MANY_DIAGNOSTICS: Final = "SEA090"

CODES: Final[dict[str, str]] = {
    FILE_UNREADABLE: "the file does not exist or cannot be read",
    INVALID_UTF8: "the file is not valid UTF-8 text",
    INVALID_JSON: "the file is not valid JSON",
    NOT_AN_OBJECT: "the document is not a JSON object",
    TOO_DEEP: "the document nests objects and arrays deeper than the limit",
    NOT_A_FILE: "the path is not a regular file (a FIFO, a device, a socket); it is not read",
    FILE_TOO_LARGE: "the file is larger than the playbook size limit; it is not read",
    DUPLICATE_KEY: "an object names the same member twice (JSON would keep the last silently)",
    INVALID_VALUE: "a value is not allowed here (schema violation)",
    MISSING_FIELD: "a required field is missing",
    UNKNOWN_FIELD: "a field that this object does not have (never silently dropped)",
    WRONG_TYPE: "a value has the wrong JSON type",
    UNKNOWN_NODE_TYPE: "a node `type` that does not exist",
    UNSUPPORTED_NODE_TYPE: "a SAIVerse node type this engine does not support (stelis)",
    BAD_PATTERN: "a name or id does not match its required pattern",
    BAD_ENUM: "a value is not one of the allowed values",
    CONDITIONAL_NEXT_LIST: "`conditional_next` given as a list instead of an object",
    ERROR_NEXT_NOT_FALLIBLE: "`error_next` on a node type that cannot fail",
    BAD_RESPONSE_SCHEMA: "`response_schema` is not a valid JSON Schema (2020-12)",
    DUPLICATE_ID: "two nodes have the same id",
    MISSING_START: "`start_node` names no node",
    UNKNOWN_NEXT: "`next` names no node",
    UNKNOWN_ERROR_NEXT: "`error_next` names no node",
    UNKNOWN_CASE_TARGET: "a `conditional_next` target names no node",
    UNREACHABLE: "a node cannot be reached from `start_node`",
    UNBOUNDED_LOOP: "a loop that no branch can leave",
    NEXT_IGNORED: "`next` is ignored because `conditional_next` is given",
    DUPLICATE_PARAM: "two input parameters have the same name",
    RESERVED_ID: "a node id the graph reserves (`__start__`, `__end__`)",
    UNDEFINED_VARIABLE: "a variable is read but nothing defines it",
    UNDEFINED_IN_PROMPT: "a prompt references a variable nothing defines (or a literal brace)",
    EXPRESSION_SYNTAX: "an `=` expression does not parse",
    UNCERTAIN_VARIABLE: "a variable may come only from a callee whose outputs are unknown",
    OUTPUT_NEVER_DEFINED: "an `output_schema` key that nothing in the playbook defines",
    TOOLS_WITH_SCHEMA: "an llm node with both `response_schema` and `available_tools`",
    EXPRESSION_TOO_LARGE: "an `=` expression longer or more deeply nested than the language allows",
    UNSUPPORTED_PATTERN: "a schema `pattern` the linear-time regex engine (RE2) cannot run "
    "(a backreference, a lookaround)",
    RESERVED_TAG: "a memory tag the store writes itself (`pulse:`, `playbook:`, `node:`)",
    DYNAMIC_CALLEE_VARIABLE: "a variable only a playbook chosen at run time (`exec`) returns",
    CASE_NEVER_MATCHES: "a case key can never match the type of the value it is compared with",
    ORDERING_ON_NON_NUMBER: "an ordering operator compares a value that is never a number",
    CONTAINS_ON_SCALAR: "`contains` looks inside a value that is never a string, list or object",
    MAPPING_SOURCE_UNKNOWN: "an `output_mapping` source is not a field of `response_schema`",
    PYTHON_BOOLEAN_KEY: 'a case key `"True"`/`"False"` on a boolean (SAIVerse\'s spelling; '
    'it matches, write `"true"`/`"false"`)',
    UNKNOWN_PLAYBOOK: "a called playbook does not exist",
    UNKNOWN_ARGUMENT: "an argument the callee's `input_schema` does not declare",
    MISSING_ARGUMENT: "a required argument of the callee is not passed",
    CHILD_WITHOUT_REPORT: "a playbook that can run as a child has no report for its caller",
    UNKNOWN_TOOL: "a tool that is not in the tool catalogue",
    UNKNOWN_TOOL_ARGUMENT: "an argument the tool's schema does not declare",
    MISSING_TOOL_ARGUMENT: "a required argument of the tool is not passed",
    BAD_TOOL_ARGUMENT: "a literal argument does not match the tool's argument schema",
    SCHEMA_SOURCE_IGNORED: "`response_schema_source` is ignored: the node gives `response_schema`",
    DUPLICATE_PLAYBOOK: "two files define a playbook with the same name",
    TOO_MANY_DIAGNOSTICS: "a file has more problems than are listed (the rest are counted)",
}
"""Code → one-line meaning."""
