"""The release writer's last line of defence (issue 12 item 7): an API key of the environment that reached a row
anyway (a store filled before keys were scrubbed, a copy merged in) is never published."""

from __future__ import annotations

from pathlib import Path

from test_release import row, spec

from benchwright.exports import write_release

KEY = "sk-proj-RELEASEKEY-0123456789abcdef"


def test_no_key_of_the_environment_is_written_into_a_release(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SOME_VENDOR_API_KEY", "vendor-secret-0123456789")
    items = row(1).checklist
    leaked = [items[0].model_copy(update={"key_point": f"Echoes {KEY}"}), *items[1:]]
    rows = [row(0, question=f"Why is {KEY} here?"), row(1, checklist=leaked),
            row(2, reference_answer="vendor-secret-0123456789 in the answer"), row(3)]
    folder = write_release(rows, spec(), tmp_path)
    data = b"".join(f.read_bytes() for f in folder.rglob("*") if f.is_file())
    assert KEY.encode() not in data and b"vendor-secret-0123456789" not in data
    assert b"Why is *** here?" in data and b"Echoes ***" in data


def test_without_keys_in_the_environment_rows_are_written_as_they_are(tmp_path: Path, monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(var, raising=False)
    folder = write_release([row(0, question=f"Why is {KEY} here?")], spec(), tmp_path)
    assert KEY.encode() in (folder / "data" / "test.jsonl").read_bytes()
