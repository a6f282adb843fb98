"""Commands registered on the benchwright command group (see tui/cli.py)."""

from __future__ import annotations
