"""The version of SEA, read by ``sea --version`` and by the build (``pyproject.toml``'s
``[tool.hatch.version]``): one place, and no package metadata to read at start-up."""

__version__ = "0.1.0"
