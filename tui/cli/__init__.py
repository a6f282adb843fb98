"""The ``benchwright`` command line: ``main`` is the entry point (``benchwright.tui.cli:main`` in pyproject.toml).

``root`` builds the top-level group and adds every command group; one module per group; ``common`` holds what
they share. No module here imports ``root`` back.
"""

from .root import main

__all__ = ["main"]
