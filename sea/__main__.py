"""``python -m sea``: the command line."""

from sea.cli import main

raise SystemExit(main())
