"""Leakage checks (issue 17 item 8, core/leakage.py): the identifiers, paths and key-point phrases of the reference
answer or checklist that a rewritten question has and the original had not, with their offsets, kinds and sources;
on crafted texts and on real SWE-QA / SWE-QA-Pro questions with their answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.core.errors import BenchwrightError
from benchwright.core.leakage import (
    DEFAULT_STOP_WORDS,
    LeakageRules,
    LeakedSpan,
    find_leaks,
    leakage_status,
    leaked_terms,
)

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SWE_QA = DATA / "swe-qa"
SWE_QA_PRO = DATA / "swe-qa-pro"

ANSWER = ("The `ensure_ascii` attribute of `DefaultJSONProvider` is passed to `json.dumps()` in "
          "src/flask/json/provider.py (lines 166-179); `Blueprint` records deferred setup functions.")


def found(spans) -> list[tuple[str, str, str]]:
    return [(s.text, s.kind, s.source) for s in spans]


def test_each_kind_of_identifier_is_found_with_its_offsets():
    original = "How does the JSON provider escape non-ASCII characters?"
    new = ("How does DefaultJSONProvider use ensure_ascii when json.dumps() runs, and why does the Blueprint "
           "keep `ensure_ascii`?")
    spans = find_leaks(original, new, ANSWER)
    assert found(spans) == [
        ("DefaultJSONProvider", "identifier", "reference answer"),   # CamelCase
        ("ensure_ascii", "identifier", "reference answer"),          # snake_case
        ("json.dumps", "identifier", "reference answer"),            # dotted, called
        ("Blueprint", "identifier", "reference answer"),             # capitalised, backticked in the answer
        ("ensure_ascii", "identifier", "reference answer"),          # backticked in the question
    ]
    for s in spans:
        assert new[s.start:s.end] == s.text


def test_paths_with_and_without_directories_and_line_suffixes():
    original = "Where is the JSON provider defined?"
    for new, text in (("Where in src/flask/json/provider.py is it defined?", "src/flask/json/provider.py"),
                      ("Where in provider.py:166 is it defined?", "provider.py:166"),
                      ("Is it in `flask/json/provider.py`?", "flask/json/provider.py")):
        assert found(find_leaks(original, new, ANSWER)) == [(text, "path", "reference answer")], new
    # a path the original had already, with a line number added, is not a leak; nor one the answer lacks
    assert find_leaks("Is it in provider.py?", "Is it in src/flask/json/provider.py:170?", ANSWER) == ()
    assert find_leaks(original, "Is it in src/flask/app.py?", ANSWER) == ()


def test_what_the_original_had_is_never_a_leak_whatever_its_case():
    original = "Why does defaultjsonprovider pass ENSURE_ASCII on, and what does dumps do?"
    new = "Why does DefaultJSONProvider pass ensure_ascii on to json.dumps?"
    assert find_leaks(original, new, ANSWER) == ()


def test_a_bare_lower_case_word_is_not_an_identifier_but_a_call_or_backticks_make_it_one():
    answer = "It calls `dispatch_request` and then `finalize` on the `response`."
    original = "What happens after a view returns?"
    assert find_leaks(original, "What does finalize do to the response after a view returns?", answer) == ()
    assert found(find_leaks(original, "What does finalize() do after a view returns?", answer)) == [
        ("finalize", "identifier", "reference answer")]
    assert found(find_leaks(original, "What does `response` hold after a view returns?", answer)) == [
        ("response", "identifier", "reference answer")]


def test_a_capitalised_word_that_starts_a_sentence_is_not_a_code_name():
    answer = "`Register` is called by `Blueprint`."
    assert find_leaks("How are routes added?", "Register happens when? How are routes added?", answer) == ()
    assert found(find_leaks("How are routes added?", "How are routes added to a Blueprint?", answer)) == [
        ("Blueprint", "identifier", "reference answer")]


def test_key_point_phrases_of_the_checklist_and_the_answer():
    original = "How are setup steps of a blueprint kept until it is registered?"
    checklist = ["Records each call in the Deferred Setup Functions list", "Explains the clarity of the answer"]
    new = "How does the blueprint keep its deferred setup functions until it is registered?"
    assert found(find_leaks(original, new, "Unrelated answer text.", checklist)) == [
        ("deferred setup functions", "key-point", "checklist")]
    # the answer is named when the phrase is in both
    both = find_leaks(original, new, "It appends to deferred setup functions.", checklist)
    assert found(both) == [("deferred setup functions", "key-point", "reference answer")]
    # overlapping windows make one phrase; stop words between content words are skipped
    long = find_leaks("How is it kept?", "How is the list of deferred setup functions kept?",
                      "A list of the deferred setup functions is kept.")
    assert found(long) == [("list of deferred setup functions kept", "key-point", "reference answer")]
    # a phrase ends at punctuation and at code
    assert find_leaks("How is it kept?", "How is the list. Of deferred setup? Functions kept?",
                      "A list of the deferred setup functions is kept.") == ()


def test_reordered_or_one_new_word_phrases_of_the_original_are_not_leaks():
    answer = "The registration tracking flag stops the setup methods."
    original = "What flag stops setup methods after the registration?"
    assert find_leaks(original, "What registration flag stops the setup methods?", answer) == ()
    assert find_leaks(original, "What registration tracking flag stops setup methods?", answer) == ()  # 1 new word
    assert found(find_leaks(original, "What registration tracking flag stops setup methods?", answer,
                            rules=LeakageRules(min_new_words=1))) == [
        ("registration tracking flag stops", "key-point", "reference answer")]  # "flag stops setup": original


def test_rules_are_configurable_and_checked():
    answer = "It uses the session interface."
    original = "What does it use?"
    new = "What does it use: the session interface?"
    assert find_leaks(original, new, answer) == ()  # two content words: below the default of three
    assert found(find_leaks(original, new, answer, rules=LeakageRules(min_words=2))) == [
        ("session interface", "key-point", "reference answer")]
    assert find_leaks(original, new, answer,
                      rules=LeakageRules(min_words=2, stop_words=DEFAULT_STOP_WORDS | {"Session"})) == ()
    assert find_leaks(original, "Is DefaultJSONProvider used?", ANSWER,
                      rules=LeakageRules().ignoring(["defaultjsonprovider", None, ""])) == ()
    with pytest.raises(BenchwrightError, match="at least one word"):
        LeakageRules(min_words=0)
    with pytest.raises(BenchwrightError, match="new word"):
        LeakageRules(min_new_words=0)


def test_spans_are_sorted_deterministic_pieces_dropped_and_stored_whole():
    new = "Does flask.json.provider.DefaultJSONProvider call `json.dumps()` in provider.py?"
    answer = ANSWER + " See `json.provider.DefaultJSONProvider`."
    a = find_leaks("How is JSON written?", new, answer)
    assert a == find_leaks("How is JSON written?", new, answer)
    assert [s.start for s in a] == sorted(s.start for s in a)
    # the dotted name is one span (its DefaultJSONProvider piece is dropped); the backticked call holds json.dumps
    assert found(a) == [("flask.json.provider.DefaultJSONProvider", "identifier", "reference answer"),
                        ("json.dumps()", "identifier", "reference answer"),
                        ("provider.py", "path", "reference answer")]
    assert [LeakedSpan.from_json(s.to_json()) for s in a] == list(a)
    assert leakage_status(a) == "leaked" and leakage_status(()) == "clean"
    twice = find_leaks("q?", "Is ensure_ascii, ensure_ascii set?", ANSWER)
    assert len(twice) == 2 and found(leaked_terms(twice)) == [("ensure_ascii", "identifier", "reference answer")]


def test_hostile_text_is_kept_as_written_and_offsets_stay_exact():
    answer = "Set `[bold]X[/]` and `\x1b[31mred_flag` and `[@click=app.quit]q[/]`."
    new = "Why \x1b[0m set [bold]X[/] and \x1b[31mred_flag and `[@click=app.quit]q[/]`?"
    spans = find_leaks("Why set it?", new, answer)
    assert ("[@click=app.quit]q[/]", "identifier", "reference answer") in found(spans)
    assert ("31mred_flag", "identifier", "reference answer") in found(spans)  # the escape's tail is a word
    for s in spans:
        assert new[s.start:s.end] == s.text
    assert find_leaks("", "", None) == ()


def test_a_long_question_is_checked():
    new = "Why does snake_case_name matter? " + "filler word " * 25_000  # 300 KB
    spans = find_leaks("Why?", new, "It is `snake_case_name`.")
    assert found(spans) == [("snake_case_name", "identifier", "reference answer")]


# ------------------------------------------------------------------------------------------------ real rewrites
def swe_qa_rows() -> list[dict]:
    path = SWE_QA / "cursor_agent_unidentified_question__flask.jsonl"
    if not path.exists():
        pytest.skip(f"the SWE-QA data is not at {path}")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


FLASK = LeakageRules().ignoring(["flask"])


def test_real_swe_qa_rewrites_that_name_the_answers_identifiers_are_leaked():
    """SWE-QA's questions hide identifiers; the question they were rewritten from names them. Taken as a rewrite
    of the hidden question (whose answer this is), the naming question leaks what the answer names."""
    rows = swe_qa_rows()
    first = find_leaks(rows[0]["question"], rows[0]["origin_question"], rows[0]["answer"], rules=FLASK)
    assert found(first) == [("ensure_ascii", "identifier", "reference answer"),
                            ("dumps", "identifier", "reference answer")]
    second = find_leaks(rows[1]["question"], rows[1]["origin_question"], rows[1]["answer"], rules=FLASK)
    assert ("_got_registered_once", "identifier", "reference answer") in found(second)
    leaked = [r for r in rows if find_leaks(r["question"], r["origin_question"], r["answer"], rules=FLASK)]
    assert len(leaked) >= 40, f"{len(leaked)} of {len(rows)} naming rewrites leaked"


# Plain paraphrases, written for this test, of real questions: same content, other words, nothing of the answer.
PARAPHRASES = {
    0: "How does the setting that limits the framework's JSON provider to ASCII output relate to the way Unicode "
       "characters look once serialized?",
    1: "Why does the blueprint collection class keep a flag that notes registration and stops setup methods "
       "being called once the blueprint has been registered?",
    2: "How is the design of modular component registration split so that serving static assets lives apart from "
       "the main application framework and caching still behaves the same in both?",
}


def test_real_swe_qa_plain_paraphrases_are_clean():
    rows = swe_qa_rows()
    for i, paraphrase in PARAPHRASES.items():
        assert find_leaks(rows[i]["question"], paraphrase, rows[i]["answer"], rules=FLASK) == (), i


def test_real_swe_qa_pro_rewrites():
    pq = pytest.importorskip("pyarrow.parquet")
    path = SWE_QA_PRO / "test.rows-0-10.parquet"
    if not path.exists():
        pytest.skip(f"the SWE-QA-Pro data is not at {path}")
    row = pq.read_table(path).to_pylist()[0]["extra_info"]
    question, answer = row["question"], row["answer"]
    rules = LeakageRules().ignoring(["cekit"])
    paraphrase = ("In the build pipeline, how do the tag-parsing rules of CEKit's Docker builder cope with registry "
                  "addresses that carry a port number?")
    assert find_leaks(question, paraphrase, answer, rules=rules) == ()
    naming = ("How does the _tag method in cekit/builders/docker_builder.py split each tag with tag.split(':') "
              "when a registry URL has a port?")
    kinds = {(s.text, s.kind) for s in find_leaks(question, naming, answer, rules=rules)}
    assert {("_tag", "identifier"), ("cekit/builders/docker_builder.py", "path"), ("tag.split", "identifier")} <= kinds
