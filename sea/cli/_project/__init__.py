"""The project file: ``sea.toml`` (or ``[tool.sea]`` in ``pyproject.toml``) holds the
options a project's commands share, so that none of them has to be typed again.

:mod:`~sea.cli._project.settings` lists the settings, :mod:`~sea.cli._project.load` finds
and checks the file, :mod:`~sea.cli._project.locate` places a key in its text, and
:mod:`~sea.cli._project.resolve` fills each command's options: a flag, else a ``SEA_*``
environment variable, else the file, else the default.
"""
