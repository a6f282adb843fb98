"""The text screen of a pair (``w`` on the review screen; issue 16 item 1, RepoProbe §3.2: the rewritten text is
the item): the word diff of the current text against the original, the version list (origin, model, who, when,
who accepted it), and keys to accept the current text, edit it (question and reference answer, saved with
compare-and-set), or revert to the original or to the highlighted version. All text is shown literally."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from benchwright.core.errors import BenchwrightError
from benchwright.core.leakage import leaked_terms
from benchwright.core.text_diff import LONG_DIFF_CHARS, DiffCancelled, TextDiff
from benchwright.db import Store
from benchwright.db.texts import TextConflictError

from ..services.texts import TextView, edit_text, revert_text, text_diffs, text_label, text_view
from ..widgets import LiteralTextArea, error_text, literal, notify
from .curation import render_text_diff

DIFF_SHOWN_CHARS = 20_000
"""Characters of each diff the screen renders (wrapping a 1 MB diff froze the screen); the rest is counted."""


LEAK_STYLE = "reverse underline"
"""How the text screen marks a leaked span of the question."""
LEAKED_TERM_CHARS = 300
"""A leaked term longer than this (a long key-point phrase) is cut in the list (the question marks it whole)."""


def marked_spans(text: str, spans, limit: int = DIFF_SHOWN_CHARS) -> Text:
    """``text`` (its first ``limit`` characters) shown literally, the ``spans`` (objects with ``start`` / ``end``
    offsets into it, as :class:`~benchwright.core.leakage.LeakedSpan`) in :data:`LEAK_STYLE`; overlapping
    spans are marked as one. Built piece by piece, so a control character before a span does not shift it."""
    shown = text[:limit]
    out, at = Text(), 0
    for s in sorted(spans, key=lambda s: (s.start, s.end)):
        start, end = max(s.start, at), min(s.end, len(shown))
        if start >= end:
            continue
        out.append_text(literal(shown[at:start]))
        out.append_text(literal(shown[start:end], style=LEAK_STYLE))
        at = end
    out.append_text(literal(shown[at:]))
    if len(text) > limit:
        out.append(f"… {len(text) - limit:,} more characters", style="dim")
    return out


def _diff_text(title: str, diff: TextDiff) -> Text:
    t = Text(f"{title}\n", style="bold")
    if not diff.changed and not diff.normalization_only:
        t.append("unchanged\n", style="dim")
        return t
    shown = TextDiff(segments=[], approximate=diff.approximate, normalization_only=diff.normalization_only)
    budget = DIFF_SHOWN_CHARS
    for s in diff.segments:
        if budget <= 0:
            break
        shown.segments.append(s._replace(text=s.text[:budget]))
        budget -= len(s.text)
    t.append_text(render_text_diff(shown))
    total = sum(len(s.text) for s in diff.segments)
    if total > DIFF_SHOWN_CHARS:
        t.append(f"\n… {total - DIFF_SHOWN_CHARS:,} more characters of the diff not shown (benchwright pairs text "
                 "PAIR --diff prints it whole)", style="dim")
    return t.append("\n")


class TextEditScreen(ModalScreen[tuple[str, str] | None]):
    """Edit the question and the reference answer; ctrl+s returns ``(question, answer)``, esc None."""

    DEFAULT_CSS = """
    TextEditScreen { align: center middle; }
    #text-edit-dialog { width: 90%; height: 90%; border: thick $primary; background: $surface; padding: 1; }
    #text-edit-question { height: 1fr; }
    #text-edit-answer { height: 2fr; }
    #text-edit-conflict { height: auto; max-height: 8; }
    """

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="text_edit.save"),
        Binding("escape", "cancel", "Cancel", priority=True, id="text_edit.cancel"),
    ]

    def __init__(self, question: str, answer: str, *, version: int, conflict: str | None = None) -> None:
        """``version``: the text version the edit starts from (shown); ``conflict``: why the last save was
        refused (shown above the editors)."""
        super().__init__()
        self.question, self.answer, self.version, self.conflict = question, answer, version, conflict

    def compose(self) -> ComposeResult:
        with Vertical(id="text-edit-dialog"):
            yield Label(literal(f"Edit the text (from version {self.version})   ctrl+s save · esc cancel"))
            if self.conflict:
                yield Static(literal(self.conflict, style="bold yellow"), id="text-edit-conflict")
            yield Label("Question", classes="section-title")
            yield LiteralTextArea(self.question, id="text-edit-question", soft_wrap=True, show_line_numbers=False)
            yield Label("Reference answer", classes="section-title")
            yield LiteralTextArea(self.answer, id="text-edit-answer", soft_wrap=True, show_line_numbers=False)

    def on_mount(self) -> None:
        self.query_one("#text-edit-question", TextArea).focus()

    def action_save(self) -> None:
        """Close the editor, handing back the question and the answer."""
        self.dismiss((self.query_one("#text-edit-question", TextArea).text,
                      self.query_one("#text-edit-answer", TextArea).text))

    def action_cancel(self) -> None:
        """Close the editor without saving."""
        self.dismiss(None)


class TextVersionsScreen(Screen):
    """A pair's text versions: diff against the original, the list, accept / edit / revert."""

    DEFAULT_CSS = """
    #text-summary { height: auto; padding: 0 1; }
    #text-diff { height: 2fr; padding: 0 1; }
    #text-versions { height: 1fr; }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", id="text.back"),
        Binding("a", "accept", "Accept text", id="text.accept"),
        Binding("e", "edit", "Edit text", id="text.edit"),
        Binding("o", "revert(True)", "Revert to original", id="text.revert_original"),
        Binding("v", "revert(False)", "Revert to highlighted", id="text.revert_version"),
        Binding("question_mark", "app.help", "Help", key_display="?", id="text.help"),
    ]

    class Diffed(Message):
        """A thread worker finished the diffs of ``version`` against the original."""

        def __init__(self, version: int, diffs: tuple[TextDiff, TextDiff]) -> None:
            super().__init__()
            self.version, self.diffs = version, diffs

    def __init__(self, store: Store, pair_id: str, annotator: str) -> None:
        super().__init__()
        self.store, self.pair_id, self.annotator = store, pair_id, annotator
        self.view: TextView | None = None
        self.changed = False
        """True once this screen wrote a version or an acceptance (the review screen reloads the pair)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="text-summary")
        with VerticalScroll(id="text-diff"):
            yield Static(id="text-leakage")
            yield Static(id="text-diff-body")
        yield Label("Versions (v reverts to the highlighted one)", classes="section-title")
        yield OptionList(id="text-versions")
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one("#text-versions", OptionList).focus()

    def reload(self) -> None:
        """Read the versions again and show them (after a change here, or to start)."""
        view = self.view = text_view(self.store, self.pair_id)
        current = view.current
        t = Text()
        t.append(f"#{view.ordinal}  ", style="bold")
        t.append_text(literal(text_label(current), style="bold"))
        accepted = view.accepted_by.get(current.version, [])
        t.append("   accepted by ")
        t.append_text(literal(", ".join(accepted) if accepted else "nobody yet", style="" if accepted else "dim"))
        if view.stale_checklist:
            t.append("\n")
            t.append_text(literal(f"checklist stale: {view.stale_note()}", style="bold yellow"))
        self.query_one("#text-summary", Static).update(t)
        options = self.query_one("#text-versions", OptionList)
        options.clear_options()
        for v in reversed(view.versions):
            line = Text(f"v{v.version}{'*' if v is current else ' '} ", style="bold" if v is current else "")
            line.append_text(literal(f"{v.origin:<8} "))
            if v.model:
                line.append_text(literal(f"model {v.model} ", style="cyan"))
            line.append_text(literal(f"by {v.created_by or '?'} · {v.created_at[:19]}", style="dim"))
            if v.restored_from is not None:
                line.append(f" · restores v{v.restored_from}", style="italic")
            who = view.accepted_by.get(v.version)
            if who:
                line.append_text(literal(f" · accepted by {', '.join(who)}", style="green"))
            options.add_option(Option(line, id=f"v{v.version}"))
        options.highlighted = 0
        self._show_leakage()
        self._show_diff()

    def _show_leakage(self) -> None:
        """The leaked terms of the current question (:mod:`benchwright.core.leakage`): listed with kind and source,
        and marked (reverse, underlined) in the question itself; hidden when its latest check is clean or none."""
        panel = self.query_one("#text-leakage", Static)
        check = self.store.leakage_check(self.pair_id, self.view.current.version)
        if check is None or check.status != "leaked":
            panel.display = False
            return
        panel.display = True
        terms = leaked_terms(check.spans)
        t = Text()
        t.append(f"Leaked terms: {len(terms)} of the reference answer or checklist the original question did not "
                 "have\n", style="bold yellow")
        for span in terms:
            t.append("  • ")
            cut = span.text if len(span.text) <= LEAKED_TERM_CHARS else span.text[:LEAKED_TERM_CHARS] + "…"
            t.append_text(literal(cut, style=LEAK_STYLE))
            t.append_text(literal(f"  {span.kind}, from the {span.source}\n", style="italic"))
        t.append("Question with the leaked terms marked:\n", style="bold")
        t.append_text(marked_spans(self.view.current.question, check.spans))
        t.append("\n")
        panel.update(t)

    def _show_diff(self) -> None:
        view = self.view
        body = self.query_one("#text-diff-body", Static)
        if view.current.version == 1:
            body.update(Text("This is the original text: no rewrite or edit yet.", style="dim"))
            return
        size = sum(len(x.question) + len(x.reference_answer or "") for x in (view.original, view.current))
        if size <= LONG_DIFF_CHARS:
            self._show_diffs(text_diffs(view.original, view.current))
            return
        body.update(Text("computing diff…", style="italic"))
        self._compute(view.current.version)

    @work(thread=True, exclusive=True, group="text-diff", exit_on_error=False)
    def _compute(self, version: int) -> None:
        worker = get_current_worker()
        view = self.view
        try:
            diffs = text_diffs(view.original, view.version(version), cancelled=lambda: worker.is_cancelled)
        except DiffCancelled:
            return
        if not worker.is_cancelled:
            self.post_message(self.Diffed(version, diffs))

    @on(Diffed)
    def _diffed(self, event: Diffed) -> None:
        if self.view is not None and event.version == self.view.current.version:
            self._show_diffs(event.diffs)

    def _show_diffs(self, diffs: tuple[TextDiff, TextDiff]) -> None:
        t = literal(f"Against the original (v1): {text_label(self.view.current)}\n\n", style="italic")
        t.append_text(_diff_text("Question", diffs[0]))
        t.append("\n")
        t.append_text(_diff_text("Reference answer", diffs[1]))
        self.query_one("#text-diff-body", Static).update(t)

    def on_unmount(self) -> None:
        """Closing the screen cancels a diff still computing."""
        self.workers.cancel_group(self, "text-diff")

    # ------------------------------------------------------------------ actions
    def action_back(self) -> None:
        """Back to the review screen (it reloads the pair when something changed here)."""
        self.dismiss(self.changed)

    def action_accept(self) -> None:
        """Record that I accept the current text as the item."""
        try:
            v = self.store.accept_text(self.pair_id, self.annotator, self.view.current.version)
        except BenchwrightError as e:
            notify(self, error_text(e), title="Not saved", severity="error")
            return
        self.changed = True
        self.reload()
        notify(self, f"You accept text version {v}.", timeout=3)

    def action_edit(self, conflict: str | None = None, start: tuple[str, str] | None = None) -> None:
        """Edit the current text (question and reference answer); saved as a new version with a compare-and-set
        on the version the editor opened (another session's change in between is refused, the typed text kept)."""
        base = self.view.current
        question, answer = start if start is not None else (base.question, base.reference_answer or "")

        def saved(typed: tuple[str, str] | None) -> None:
            if typed is None:
                return
            try:
                new = edit_text(self.store, self.pair_id, typed[0], typed[1], by=self.annotator,
                                expected_version=base.version)
            except TextConflictError as e:
                self.reload()
                self.action_edit(conflict=f"Not saved: {e}\nctrl+s now saves your text (below) over the newer "
                                          "one; esc keeps it.", start=typed)
                return
            except BenchwrightError as e:
                notify(self, error_text(e), title="Not saved", severity="error")
                self.action_edit(start=typed)
                return
            if new is None:
                notify(self, "The text is unchanged: nothing saved.", timeout=3)
                return
            self.changed = True
            self.reload()
            notify(self, f"Saved as text version {new.version}; the pair is back in review.", timeout=4)

        self.app.push_screen(TextEditScreen(question, answer, version=base.version, conflict=conflict), saved)

    def action_revert(self, to_original: bool) -> None:
        """Make the original text (``o``) or the highlighted version (``v``) current again, as a new version."""
        view = self.view
        if to_original:
            target = 1
        else:
            highlighted = self.query_one("#text-versions", OptionList).highlighted
            options = self.query_one("#text-versions", OptionList)
            if highlighted is None:
                return
            target = int(options.get_option_at_index(highlighted).id.removeprefix("v"))
        try:
            new = revert_text(self.store, self.pair_id, by=self.annotator, to_version=target,
                                         expected_version=view.current.version)
        except TextConflictError as e:
            self.reload()
            notify(self, f"Not reverted: {e}", title="Changed in another session", severity="warning", timeout=8)
            return
        except BenchwrightError as e:
            notify(self, error_text(e), title="Not saved", severity="error")
            return
        if new is None:
            notify(self, f"The current text is version {target}'s already.", timeout=3)
            return
        self.changed = True
        self.reload()
        notify(self, f"Version {target} restored as text version {new.version}; the pair is back in review.",
               timeout=4)
