"""Text from data is shown literally everywhere (issue 12, item 1).

Two guards: a walk through every screen of a project with hostile text in every field (markup that would
crash, style, link or run an action; ANSI and OSC 8 escapes), asserting that nothing crashes, the app keeps
running, the text is on screen as typed and no style, link or action of it is applied; and a check of the
source of the app that every markup sink (toasts, labels, option prompts, select prompts, table cells, titles)
is fed a constant or goes through a helper of ``benchwright.tui.widgets``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hostile_project import ACTORS, HOSTILE, LITERAL_MARKS, hostile, make_hostile_project
from rich.text import Text
from textual.widgets import DataTable, Input, Select, TextArea

from benchwright.core.llm import ScriptedProvider
from benchwright.db import QueueFilter, Store
from benchwright.tui.app import BenchwrightApp
from benchwright.tui.screens import EvidenceScreen, HelpScreen, NotesScreen, QueueScreen, ReviewScreen
from benchwright.tui.screens.adjudication import AdjudicationScreen
from benchwright.tui.screens.answer_run import AnswerRunScreen
from benchwright.tui.screens.checklist_diff import ChecklistDiffScreen
from benchwright.tui.screens.checklist_editor import ChecklistEditorScreen
from benchwright.tui.screens.criteria_notes import CriteriaNotesScreen
from benchwright.tui.screens.curation import CurationRunScreen, CurationScreen
from benchwright.tui.screens.history import HistoryScreen
from benchwright.tui.screens.inspector import InspectorScreen
from benchwright.tui.screens.probes import ProbesScreen
from benchwright.tui.screens.release import ReleaseScreen
from benchwright.tui.screens.rules_editor import RulesEditorScreen
from benchwright.tui.screens.statistics import StatisticsScreen
from benchwright.tui.screens.text_versions import TextVersionsScreen
from benchwright.tui.widgets import literal, literal_options, notify

SIZE = (200, 60)
TUI = Path(__file__).resolve().parents[2] / "tui"


# ------------------------------------------------------------------------------------------- what is on screen
def screen_segments(app):
    """Every segment of the current screen as composed for the terminal (toasts included)."""
    return [seg for strip in app.screen._compositor.render_strips() for seg in strip]


def screen_text(app) -> str:
    return "\n".join("".join(seg.text for seg in strip) for strip in app.screen._compositor.render_strips())


def toasts(app) -> list[str]:
    """The text of every notification shown now (title and message), each checked to be shown without markup."""
    out = []
    for n in app._notifications:
        assert n.markup is False, n
        out.append(f"{n.title}\n{n.message}")
    return out


def assert_literal(app, where: str, *, marks: tuple[str, ...] = LITERAL_MARKS, in_toasts: bool = False) -> None:
    """The app still runs; nothing on screen carries an escape, a link or an action from data; each of
    ``marks`` is on screen (or in a toast) as typed."""
    assert app.is_running and app.return_code is None, where
    for seg in screen_segments(app):
        assert "\x1b" not in seg.text and "\x9b" not in seg.text, (where, seg.text)
        style = seg.style
        if style is None:
            continue
        assert not (style.link and style.link.endswith("//x")), (where, seg)
        click = str((style.meta or {}).get("@click", ""))
        assert "quit" not in click, (where, seg)
        assert not (seg.text == "x" and style.bold), (where, seg)  # [bold]x[/bold] parsed (footer keys are " x ")
    text = "\n".join(toasts(app)) if in_toasts else screen_text(app)
    for mark in marks:
        assert mark in text, (where, mark, text[-3000:])


async def settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def curation_answers(text: str):
    def answer(request):
        name = request.schema_name
        if name == "classification":
            return {"rationale": hostile("why", text), "code_understanding_relevant": False,
                    "category": "Business Logic"}
        if name == "enrichment":
            return {"question": hostile("enriched q", text), "answer": hostile("enriched a", text),
                    "changes": hostile("changes", text)}
        if name == "refined_pair":
            return {"question": hostile("refined q", text), "answer": hostile("refined a", text),
                    "changes": hostile("changes", text)}
        if name == "checklist":
            return {"items": [
                {"kind": "knowledge", "key_point": hostile("generated point", text), "weight": 9,
                 "rubric": [{"score": 0, "criterion": hostile("no", text)},
                            {"score": 9, "criterion": hostile("yes", text)}]},
                {"kind": "clarity", "key_point": "Clarity & Organization", "weight": 1,
                 "rubric": [{"score": 0, "criterion": "bad"}, {"score": 1, "criterion": "good"}]},
            ]}
        if name == "verification":
            return {"self_contained": {"rationale": hostile("sc", text), "passed": True},
                    "answerable": {"rationale": hostile("ans", text), "passed": False}}
        raise AssertionError(name)

    return answer


# ------------------------------------------------------------------------------------------------- the walk
async def walk(tmp_path, monkeypatch, text: str, marks: tuple[str, ...]) -> None:
    monkeypatch.setenv("BENCHWRIGHT_CONFIG", str(tmp_path / "none.toml"))
    made = make_hostile_project(tmp_path / "p", text)
    db, ids, (ada, _bob) = made["db"], made["ids"], made["annotators"]
    (db.parent / "benchwright.toml").write_text(
        '[roles.generator]\nprovider = "openai"\nmodel = "gen"\n[roles.verifier]\nprovider = "openai"\nmodel = "ver"\n')
    provider = ScriptedProvider(curation_answers(text))
    with Store.open(db) as store:
        app = BenchwrightApp(store, ada, resume=False, provider_factory=lambda c, r: provider)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(app, pilot)
            assert isinstance(app.screen, QueueScreen)
            assert_literal(app, "queue", marks=marks)
            # the category filter: choosing a hostile category, and its drop-down open
            category = store.get_pair(ids[0]).category
            select = app.screen.query_one("#f-category", Select)
            select.value = category
            await settle(app, pilot)
            assert_literal(app, "queue filtered by category", marks=marks)
            select.focus()
            await pilot.press("enter")
            await settle(app, pilot)
            assert_literal(app, "category drop-down", marks=marks)
            await pilot.press("escape")
            select.clear()
            await settle(app, pilot)

            screens = [
                ("review", lambda: ReviewScreen(store, ada, ids[0], QueueFilter())),
                ("history", lambda: HistoryScreen(store, ids[0], ada)),
                ("diff", lambda: ChecklistDiffScreen(store, ids[0], viewer=ada)),
                ("notes", lambda: NotesScreen(store.current_note(ids[0], ada) or "")),
                ("criterion notes", lambda: CriteriaNotesScreen(store.current_criteria(ids[0], ada).notes)),
                ("inspector", lambda: InspectorScreen(store, ids[0], ada)),
                ("adjudication", lambda: AdjudicationScreen(store, made["adjudicator"])),
                ("statistics", lambda: StatisticsScreen(store)),
                ("probes", lambda: ProbesScreen(store, ada)),
                ("rules editor", lambda: RulesEditorScreen(store, made["probe_id"], ada)),
                ("curation", lambda: CurationScreen(store, ids[0], ada)),
                ("release", lambda: ReleaseScreen(store, ada, out=tmp_path / "releases")),
                ("agent answers", lambda: AnswerRunScreen(store, ada, QueueFilter())),
                ("text versions", lambda: TextVersionsScreen(store, ids[0], ada)),
            ]
            for where, make in screens:
                await app.push_screen(make())
                await settle(app, pilot)
                # Inputs and text areas hold the text as typed (they never parse markup); they are checked
                # for escapes like everything else, but the marks may sit in a field scrolled sideways.
                assert_literal(app, where, marks=() if where in ("notes", "criterion notes", "rules editor") else marks)
                if where == "notes":  # shown with control pictures, kept as typed
                    assert app.screen.query_one(TextArea).text == store.current_note(ids[0], ada)
                if where == "criterion notes":
                    assert all(text in i.value for i in app.screen.query(Input))
                if where == "review":
                    await app.push_screen(HelpScreen(app.screen))
                    await settle(app, pilot)
                    assert_literal(app, "help", marks=())
                    app.pop_screen()
                    ev = next(e for e in app.screen.evidence if e.openable)
                    await app.push_screen(EvidenceScreen(store.get_repository(store.get_pair(ids[0]).repository), ev))
                    await settle(app, pilot)
                    assert_literal(app, "evidence", marks=marks)
                    app.pop_screen()
                if where == "inspector":
                    await pilot.press("o")  # override the highlighted score: refused, message shown
                    await settle(app, pilot)
                    app.screen.query_one("#override-score", Input).value = "3"
                    app.screen.query_one("#override-reason", Input).value = hostile("why", text)
                    app.screen.query_one("#override-reason", Input).focus()
                    await pilot.press("enter")
                    await settle(app, pilot)
                    assert_literal(app, "override dialog", marks=())
                    await pilot.press("escape")
                    await settle(app, pilot)
                    await pilot.press("t")  # the agent's trajectory: turn text, tool, arguments, output, citations
                    await settle(app, pilot)
                    assert_literal(app, "trajectory", marks=marks)
                if where == "agent answers":  # no code-only copy: every pair refused, naming the repository
                    app.screen.query_one("#answer-run-condition", Select).value = "code-only"
                    await pilot.press("ctrl+r")
                    await settle(app, pilot)
                    assert_literal(app, "agent answers refused", marks=marks)
                if where == "probes":
                    table = app.screen.query_one("#probe-matrix", DataTable)
                    table.focus()
                    await pilot.press("right", "right", "right")
                    await settle(app, pilot)
                    assert_literal(app, "probe cell", marks=marks)
                if where == "curation":
                    for key in "12345":
                        await pilot.press(key)
                        await settle(app, pilot)
                    assert_literal(app, "curation results", marks=marks)
                if where == "release":
                    app.screen.query_one("#release-name", Input).value = text
                    app.screen.query_one("#release-version", Input).value = "1.0.0"
                    await pilot.press("ctrl+s")
                    await settle(app, pilot)
                    assert_literal(app, "release refused", marks=marks)
                app.pop_screen()
                await settle(app, pilot)

            # the checklist editor, and the save-conflict toast that quotes the other version's key points
            await app.push_screen(ChecklistEditorScreen(store, ada, ids[1]))
            await settle(app, pilot)
            assert_literal(app, "checklist editor", marks=())
            current = store.checklist_version(ids[1])
            store.save_checklist(ids[1], current.checklist.model_copy(update={"items": [
                current.checklist.items[0].model_copy(update={"key_point": hostile("changed meanwhile", text)}),
                *current.checklist.items[1:]]}), author=ada, visible_to=ada)
            editor = app.screen
            editor.query_one("#kp-0", Input).value = "my edit"
            await settle(app, pilot)
            assert app.screen is editor, app.screen_stack
            await pilot.press("ctrl+s")
            await settle(app, pilot)
            assert any("changed meanwhile" in t for t in toasts(app)), toasts(app)
            assert_literal(app, "save-conflict toast", marks=marks, in_toasts=True)
            assert app.is_running
            editor.saved_form = editor.form  # leave without the unsaved-edits question
            app.pop_screen()
            await settle(app, pilot)

            # a curation run over the queue, and an app-level toast
            await app.push_screen(CurationRunScreen(store, ada, QueueFilter()))
            await settle(app, pilot)
            assert_literal(app, "curation run", marks=())
            app.pop_screen()
            notify(app, text, title=text)
            await settle(app, pilot)
            assert_literal(app, "toast", in_toasts=True, marks=marks)
            assert app.is_running


# slow, to keep the default run short; main path: test_review_app.py::test_text_from_data_is_literal
@pytest.mark.slow
async def test_every_screen_shows_hostile_text_literally(tmp_path, monkeypatch):
    await walk(tmp_path, monkeypatch, HOSTILE, LITERAL_MARKS)


@pytest.mark.slow
@pytest.mark.parametrize("text", ACTORS)
async def test_well_formed_markup_neither_styles_nor_acts(tmp_path, monkeypatch, text):
    """Markup that parses without an error (so would style, link or act silently) stays text too."""
    await walk(tmp_path, monkeypatch, text, (text,))


async def test_clicking_a_toast_with_an_action_in_it_does_not_run_the_action(tmp_path, monkeypatch):
    made = make_hostile_project(tmp_path / "p")
    with Store.open(made["db"]) as store:
        app = BenchwrightApp(store, "ann", resume=False)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(app, pilot)
            notify(app, "[@click=app.quit]click me[/]", timeout=30)
            await settle(app, pilot)
            from textual.widgets._toast import Toast

            for _ in range(20):  # the toast is mounted a moment after the notification
                if app.screen.query(Toast):
                    break
                await pilot.pause(0.05)
            toast = app.screen.query_one(Toast)
            assert "[@click=app.quit]click me[/]" in str(toast.render())
            await pilot.click(toast, offset=(4, 1))
            await settle(app, pilot)
            assert app.is_running and app.return_code is None


def test_helpers_never_parse_markup():
    assert literal("[bold]x[/bold] \x1b[31m").plain == "[bold]x[/bold] ␛[31m"
    assert literal(None).plain == "" and literal(3).plain == "3"
    assert literal("[/]").spans == []
    ((prompt, value),) = literal_options(["[/]"])
    assert isinstance(prompt, Text) and prompt.plain == "[/]" and value == "[/]"
    ((prompt, value),) = literal_options([("[b]x", 7)])
    assert prompt.plain == "[b]x" and value == 7


async def test_an_editor_shows_every_control_character_where_it_is():
    """Rich drops BEL and BS (and VT, FF, CR, which a ``TextArea`` takes as line ends) from a ``Text``: an
    editor of text from data must show them as control pictures like ESC, one cell each, so the cursor stays
    on the character it is at."""
    from textual.app import App

    from benchwright.tui.widgets import LiteralTextArea

    class Host(App):
        def compose(self):
            yield LiteralTextArea("a\x1bb\x07c\x08d\x01e", id="t")

    app = Host()
    async with app.run_test(size=(40, 5)) as pilot:
        area = app.query_one("#t", LiteralTextArea)
        assert area.text == "a\x1bb\x07c\x08d\x01e"  # the value is kept exactly
        assert area.get_line(0).plain == "a␛b␇c␈d␁e"
        area.focus()
        area.move_cursor((0, 4))  # on the "c"
        await pilot.pause()
        assert area.get_line(0).plain[area.cursor_location[1]] == "c"


# ------------------------------------------------------------------------------------------ the source guard
SINK_CALLS = {"Static", "Label", "Option", "Button", "Checkbox", "Table"}
"""Constructors whose ``str`` arguments (first positional, ``title=``, ``caption=``, ``prompt=``...) are parsed
as markup."""

SINK_METHODS = {"update", "add_row", "add_column", "add_columns", "add_option", "add_options", "set_options",
                "replace_option_prompt"}
"""Methods whose ``str`` arguments are parsed as markup (``Static.update``, tables, option lists)."""

SAFE_CALLS = {"literal", "literal_options", "plain", "Text", "Table", "Group", "Syntax", "Columns", "Panel",
              "Padding", "LiteralMarkdownRenderable", "Option", "capped_literal"}
"""Calls whose result never carries markup to be parsed (the helpers, ``rich.text.Text``, renderables)."""

_RENDERABLE = re.compile(r"\b(Text|Table|Group|RenderableType|Syntax)\b")


def renderable_functions(sources: list[str]) -> set[str]:
    """Names of the functions in ``sources`` annotated to return a renderable (``-> Text`` ...): their
    results are safe to pass to a sink (what they put in is checked where they build it)."""
    out = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None
                    and _RENDERABLE.search(ast.unparse(node.returns))):
                out.add(node.name)
    return out


def _safe(node: ast.AST, names: dict[str, list[ast.AST]], safe_calls: set[str], seen: frozenset = frozenset()) -> bool:
    """True when ``node`` is a constant, a renderable (``Text``, a helper's result, a function annotated to
    return one), or a name whose every assignment in the function is safe."""
    def ok(n: ast.AST) -> bool:
        return _safe(n, names, safe_calls, seen)

    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Starred):
        return ok(node.value)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(ok(e) for e in node.elts)
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return ok(node.elt)
    if isinstance(node, ast.IfExp):
        return ok(node.body) and ok(node.orelse)
    if isinstance(node, ast.BoolOp):
        return all(ok(v) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # Text + Text
        return ok(node.left) and ok(node.right)
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in safe_calls
    if isinstance(node, ast.Name):
        if node.id in seen or node.id not in names:
            return False
        return all(_safe(v, names, safe_calls, seen | {node.id}) for v in names[node.id])
    return False


def _options_safe(node: ast.AST, names: dict[str, list[ast.AST]]) -> bool:
    """Select options built by ``literal_options`` (directly or through a name), or none."""
    if isinstance(node, ast.List) and not node.elts:
        return True
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", "") == "literal_options"
    if isinstance(node, ast.Name) and node.id in names:  # (an empty list bound to a name may be appended to)
        return all(isinstance(v, ast.Call) and getattr(v.func, "id", "") == "literal_options" for v in names[node.id])
    return False


_UNKNOWN = ast.Name(id="<unknown>")


def _assignments(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """What each name of ``fn`` is bound to: assigned values; a loop over a literal tuple binds its items;
    any other loop target or parameter is unknown (unsafe)."""
    out: dict[str, list[ast.AST]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value)
                elif isinstance(target, ast.Tuple):
                    for e in target.elts:
                        if isinstance(e, ast.Name):
                            out.setdefault(e.id, []).append(_UNKNOWN)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.comprehension)):
            literal_items = isinstance(node.iter, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Constant) for e in node.iter.elts)
            for t in ast.walk(node.target):
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).extend(node.iter.elts if literal_items else [_UNKNOWN])
        elif isinstance(node, (ast.NamedExpr,)) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.arg):
            out.setdefault(node.arg, []).append(_UNKNOWN)
    return out


def markup_sink_problems(source: str, filename: str, safe_functions: set[str] = frozenset()) -> list[str]:
    """Places in ``source`` where a markup sink may be fed text that is neither a constant nor a renderable
    (``str`` data reaching ``Static``, ``Label``, ``Option``, ``Select``, tables, toasts, titles)."""
    tree = ast.parse(source)
    safe_calls = SAFE_CALLS | set(safe_functions) | renderable_functions([source])
    problems = []
    owner = {}
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(fn):
            owner[id(node)] = fn  # the innermost function wins (walked later)
    cache: dict[int, dict] = {}
    for node in ast.walk(tree):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        scope = owner.get(id(node), tree)
        names = cache.get(id(scope))
        if names is None:
            names = cache[id(scope)] = _assignments(scope)
        if isinstance(node, ast.Attribute) and node.attr == "notify":
            problems.append(f"{where}: .notify used directly; use widgets.notify (markup off)")
        if isinstance(node, ast.keyword) and node.arg == "markup" and not (
                isinstance(node.value, ast.Constant) and node.value.value is False):
            problems.append(f"{where}: markup= other than False")
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (isinstance(t, ast.Attribute) and t.attr in ("title", "sub_title", "border_title",
                                                                "border_subtitle", "tooltip", "caption")
                        and not _safe(node.value, names, safe_calls)):
                    problems.append(f"{where}: .{t.attr} set from data without plain()/literal()")
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("Select", "set_options") and node.args:
            if not _options_safe(node.args[0], names):
                problems.append(f"{where}: {name} options without literal_options()")
            continue
        if not ((name in SINK_CALLS and isinstance(f, ast.Name)) or (name in SINK_METHODS and isinstance(f, ast.Attribute))):
            continue
        if name == "update" and (not node.args or (isinstance(f.value, ast.Attribute) and f.value.attr.startswith("_"))):
            continue  # ProgressBar.update(total=...), or a dict of our own (self._diffs.update)
        args = list(node.args) + [k.value for k in node.keywords
                                  if k.arg in ("title", "caption", "prompt", "label", "tooltip")]
        for arg in args:
            if not _safe(arg, names, safe_calls):
                problems.append(f"{where}: {name}() fed {ast.unparse(arg)[:60]!r}; use literal()")
    return problems


def test_the_guard_catches_the_patterns_that_crashed():
    bad = '''
def f(self, e, c, data):
    self.notify(str(e))
    self.app.call_from_thread(self.notify, str(e))
    yield Select([(c, c) for c in data], prompt="category")
    yield Static(f"{data}")
    label = f"{data}"
    yield Label(label)
    table.add_row(data, "x")
    self.sub_title = f"{data}"
    yield Static(data, markup=True)
'''
    problems = markup_sink_problems(bad, "bad.py")
    assert len(problems) == 9, "\n".join(problems)
    good = '''
def f(self, e, data):
    notify(self, e, title="Not saved")
    yield Select(literal_options(data), prompt="category")
    yield Static(literal(data))
    label = literal(data)
    label.append("x")
    yield Label(label)
    table.add_row(literal(data), "x")
    self.sub_title = plain(data)
    yield Static(Text("constant", style="bold"))
'''
    assert markup_sink_problems(good, "good.py") == []


def test_no_screen_feeds_a_markup_sink_with_data():
    files = [TUI / "app.py", *sorted((TUI / "screens").glob("*.py"))]
    renderables = renderable_functions([f.read_text() for f in files])
    problems = [p for f in files
                for p in markup_sink_problems(f.read_text(), str(f.relative_to(TUI.parent)), renderables)]
    assert not problems, "\n".join(problems)


def test_long_select_prompts_are_cut_and_values_kept_whole():
    """A 5,000-character category must not fill the drop-down (it wrapped to ~70 rows an option)."""
    from benchwright.tui.widgets import OPTION_PROMPT_CHARS

    long = "[b]" + "x" * 5000
    ((prompt, value),) = literal_options([long])
    assert value == long and len(prompt.plain) == OPTION_PROMPT_CHARS and prompt.plain.endswith("…")
    assert prompt.plain.startswith("[b]x") and not prompt.spans  # still literal
