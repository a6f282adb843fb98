"""The README's two command lines are the ones that work, and CI runs the test line verbatim."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("benchwright demo")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_line_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _readme_commands()[1] in ci


def test_console_script_and_package_dirs_declared():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'benchwright = "benchwright.tui.cli:main"' in pyproject
    for layer in ("core", "db", "exports", "tui"):
        assert f'"benchwright.{layer}" = "{layer}"' in pyproject
