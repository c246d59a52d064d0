"""Tools: the tool box with argument checks, and the built-in tools."""

from sea.tools.box import ToolBox
from sea.tools.builtin import builtin_tools

__all__ = ["ToolBox", "builtin_tools"]
