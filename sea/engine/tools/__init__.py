"""Tools: the tool box with argument checks, and the built-in tools."""

from sea.engine.tools.box import ToolBox
from sea.engine.tools.builtin import builtin_tools

__all__ = ["ToolBox", "builtin_tools"]
