"""A project for batch-mode tests against tests/batch_server.py: ``n`` pairs, each with a checklist and one
closed-book answer, and a benchwright.toml whose judge role (and generator) is an openai- or anthropic-kind
provider at the fake batch server."""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.core.checklist import Checklist, ChecklistItem, binary_rubric, clarity_item
from benchwright.core.importers import parse
from benchwright.core.importers.answers import AnswerRecord
from benchwright.core.models import Repository
from benchwright.db import Store

CHECKLIST = Checklist(items=[
    ChecklistItem(key_point="Names app.py", weight=6, rubric=binary_rubric(6)),
    ChecklistItem(key_point="Gives the line", weight=3, rubric=binary_rubric(3)),
    clarity_item(),
])


def batch_project(tmp_path: Path, n: int, base_url: str, *, kind: str = "openai", gather_s: float = 0.2,
                  poll_s: float = 0.05) -> tuple[Path, list[str]]:
    """The project file and its pair ids (in queue order)."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "app.py").write_text("def run():\n    return 1\n", encoding="utf-8")
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"question": f"How does step {i} of the pipeline work?",
                                        "answer": f"Step {i} is in app.py, line {i}."}) + "\n" for i in range(n)),
                    encoding="utf-8")
    db = tmp_path / "project.db"
    with Store.open(db, create=True) as store:
        store.add_repository(Repository(name="pkg", version_label="1.0", local_path=str(repo)), "setup")
        store.apply_import(parse("jsonl", data, repository="pkg"), annotator="setup", file_path=data)
        ids = [r[0] for r in store.db.conn.execute("SELECT id FROM qa_pairs ORDER BY rowid")]
        for pid in ids:
            store.save_checklist(pid, CHECKLIST, author="setup")
        store.import_answers([AnswerRecord(line=i + 1, text=f"It is in app.py, line {i}.", pair_ref=pid)
                              for i, pid in enumerate(ids)], model="m1", condition="closed-book", created_by="setup")
    url = base_url + "/v1" if kind == "openai" else base_url
    (tmp_path / "benchwright.toml").write_text(
        f'[providers.fakebatch]\nkind = "{kind}"\nbase_url = "{url}"\napi_key_env = "FAKE_BATCH_KEY"\n'
        "max_retries = 0\n"
        '[roles.judge]\nprovider = "fakebatch"\nmodel = "judge-1"\nmax_tokens = 1024\n'
        '[roles.generator]\nprovider = "fakebatch"\nmodel = "gen-1"\nmax_tokens = 1024\n'
        f"[batch]\ngather_s = {gather_s}\npoll_interval_s = {poll_s}\n"
        '[prices."judge-1"]\ninput = 2.0\noutput = 8.0\n', encoding="utf-8")
    return db, ids
