"""Annotator and project-path resolution, and the bundled demo sample."""

from __future__ import annotations

import json

import pytest

from benchwright.core import config
from benchwright.core.demo import click_source_root, demo_repository, prepare_demo_sample
from benchwright.core.errors import BenchwrightError
from benchwright.core.evidence import gather_evidence
from benchwright.core.text import printable


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for var in (config.ENV_ANNOTATOR, config.ENV_DB, config.ENV_CONFIG):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(config.ENV_CONFIG, str(tmp_path / "config.toml"))
    return tmp_path / "config.toml"


def test_annotator_precedence(clean_env, monkeypatch):
    monkeypatch.setattr(config.getpass, "getuser", lambda: "osuser")
    assert config.resolve_annotator() == "osuser"
    clean_env.write_text('annotator = "from-config"\n')
    assert config.resolve_annotator() == "from-config"
    monkeypatch.setenv(config.ENV_ANNOTATOR, "from-env")
    assert config.resolve_annotator() == "from-env"
    assert config.resolve_annotator("explicit") == "explicit"


def test_bad_config_is_a_clear_error(clean_env):
    clean_env.write_text("annotator = \n")
    with pytest.raises(BenchwrightError, match=r"config\.toml"):
        config.resolve_annotator()
    clean_env.write_text("annotator = 3\n")
    with pytest.raises(BenchwrightError, match="non-empty text"):
        config.resolve_annotator()


def test_db_path_precedence(clean_env, monkeypatch):
    assert str(config.resolve_db_path()) == "benchwright.db"
    monkeypatch.setenv(config.ENV_DB, "/x/env.db")
    assert str(config.resolve_db_path()) == "/x/env.db"
    assert str(config.resolve_db_path("given.db")) == "given.db"


def test_printable_makes_controls_visible_and_keeps_markup():
    s = printable("a\x1b[31mb\x07\r\n\t[bold]\x9b\x7f")
    assert s == "a␛[31mb␇␍\n\t[bold]\\x9b␡"


def test_printable_shows_bidirectional_overrides_instead_of_reordering_the_text():
    # "Trojan Source": U+202E would show 'txt.exe' as 'exe.txt'; isolates U+2066-U+2069 likewise
    assert printable("a\u202etxt.exe\u2066b\u2069 é 😀 \u200d") == "a\\u202etxt.exe\\u2066b\\u2069 é 😀 \u200d"


def test_demo_sample_anchors_resolve_to_real_lines(tmp_path):
    sample = prepare_demo_sample(tmp_path / "demo.jsonl")
    text = sample.read_text()
    assert "{{line:" not in text
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) >= 10
    assert {r["qa_type"] for r in records} == {"What", "Why", "How", "Where"}
    root = click_source_root()
    statuses = [e.status for r in records for e in gather_evidence(root, r["answer"])]
    assert statuses.count("found") >= 15
    assert "missing" in statuses  # the sample shows a flagged citation on purpose
    # each resolved line really is the anchored definition
    first = gather_evidence(root, records[0]["answer"])[0]
    line = (root / first.path).read_text().splitlines()[first.citation.start - 1]
    assert "def consume_value(" in line
    assert demo_repository().local_path == str(root)
