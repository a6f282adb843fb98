"""The layer rule: core imports none of ours and neither Textual nor the store library; only tui imports
Textual. Checked two ways: import-linter contracts (pyproject.toml) and fresh interpreters."""

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    mod = __import__(package, fromlist=["_"])
    return [package] + [f"{package}.{m.name}" for m in pkgutil.walk_packages(mod.__path__) if not m.name.startswith("_")]


@pytest.mark.parametrize("module", _modules("benchwright.core"))
def test_core_module_loads_no_ui_and_no_store(module):
    code = (
        f"import sys, {module}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'sqlite_utils')"
        " or m.startswith(('benchwright.db', 'benchwright.tui', 'benchwright.exports')))\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


@pytest.mark.parametrize("module", _modules("benchwright.db") + _modules("benchwright.exports"))
def test_db_and_exports_load_no_textual(module):
    code = f"import sys, {module}\nprint(','.join(sorted(m for m in sys.modules if m.startswith(('textual', 'benchwright.tui')))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe, str(ROOT / "pyproject.toml")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout, out.stdout
