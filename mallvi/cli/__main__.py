"""``python -m mallvi.cli``: the command line."""

from mallvi.cli import main

raise SystemExit(main())
