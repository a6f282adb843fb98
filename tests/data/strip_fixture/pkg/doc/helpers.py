"""A doc/ folder below the top is code, and kept (stripped)."""

HELP = 1  # one
