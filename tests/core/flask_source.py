"""The flask 3.1.1 source tree the tests read (``../shared/data/get-flask-repo``, cached at /tmp/flask-src).

A module with a unique name (not conftest) so test modules of this folder can import it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FLASK_SRC = Path("/tmp/flask-src")


def flask_tree_or_skip() -> Path:
    """The flask 3.1.1 tree, fetched on first use; skips the calling test, saying why, when it cannot be had."""
    if not (FLASK_SRC / "src" / "flask" / "app.py").is_file():
        script = DATA / "get-flask-repo"
        if not script.is_file():
            pytest.skip(f"no flask tree at {FLASK_SRC} and no {script} to fetch it")
        try:
            subprocess.run(["bash", str(script), str(FLASK_SRC)], check=True, capture_output=True, timeout=180)
        except (OSError, subprocess.SubprocessError) as e:
            pytest.skip(f"could not fetch the flask 3.1.1 sources: {e}")
    if not (FLASK_SRC / "src" / "flask" / "app.py").is_file():
        pytest.skip(f"flask sources not available at {FLASK_SRC}")
    return FLASK_SRC
