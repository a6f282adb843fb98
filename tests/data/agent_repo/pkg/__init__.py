"""minirepo: a tiny task runner."""

from .engine import Engine, run_all

__all__ = ["Engine", "run_all"]
