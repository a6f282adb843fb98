"""The review screen: one Q&A pair, its metadata and evidence; verdict keys store decisions at once."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from benchwright.core.errors import BenchwrightError
from benchwright.core.evidence import Citation, Evidence
from benchwright.core.evidence_drift import DELETED, EVIDENCE_STALE, EVIDENCE_UNKNOWN, UNKNOWN, CitationChange
from benchwright.core.leakage import leaked_terms
from benchwright.core.models import QAPair, stale_checklist_note
from benchwright.core.review import CRITERIA, CRITERION_LABELS, Criteria, Verdict, next_verdict
from benchwright.core.vocabulary import REJECT_REASON_NAMES, REOPEN_WHY
from benchwright.db import ChecklistVersion, NoteConflictError, QueueFilter, StaleReviewError, Store

from ..services.texts import text_label
from ..services.views import OthersReviews, ReviewView, counts_inline, progress_in_thread, review_view
from ..widgets import LiteralMarkdown, literal, notify, update_if_changed

_DECISION_STYLE = {"accept": "bold green", "reject": "bold red", "revise": "bold magenta", "skip": "yellow"}
_EVIDENCE_MARK = {
    "found": ("✓", "green"), "found-by-suffix": ("✓", "green"), "ambiguous": ("?", "yellow"),
    "missing": ("✗ missing", "red"), "unsafe": ("✗ outside the repository", "red"),
    "no-repository": ("–", "dim"),
}


MAX_CANDIDATES = 6
"""Files listed under a citation that several files of the repository match."""
LEAKED_TERMS_SHOWN = 12
"""Leaked terms the leakage banner names (the text screen, ``w``, marks every one)."""
LEAKED_TERM_CHARS = 80
"""A leaked term longer than this (a long key-point phrase) is cut in the banner."""
REPAINT_S = 0.1
"""While decision keys are queued (a held ``a``), the whole pair is drawn at most this often (seconds); the
status line follows every pair."""
KEY_POINT_CHARS = 500
"""A key point longer than this is cut in the sidebar (``c`` shows it whole): wrapping a 1 MB key point froze
the screen for seconds on every visit of its pair."""


class ReviewScreen(Screen):
    """Review one pair at a time.

    Keys: ``a`` accept, ``x`` reject, ``space`` skip (each stores the decision, then moves on),
    left/right previous/next, ``backspace`` undo the last decision, ``n`` notes, ``e`` evidence,
    ``?`` help, ``escape`` back to the queue.
    """

    BINDINGS = [
        Binding("question_mark", "app.help", "Help", key_display="?", id="review.help"),
        Binding("escape", "back", "Queue", id="review.queue"),
        Binding("a", "decide('accept')", "Accept", id="review.accept"),
        Binding("x", "decide('reject')", "Reject", id="review.reject"),
        Binding("r", "decide('revise')", "Revise", id="review.revise"),
        Binding("space", "decide('skip')", "Skip", id="review.skip"),
        Binding("1", "criterion(0)", "QA consistency", show=False, id="review.c1"),
        Binding("2", "criterion(1)", "Checklist quality", show=False, id="review.c2"),
        Binding("3", "criterion(2)", "Task validity", show=False, id="review.c3"),
        Binding("4", "criterion(3)", "Code relevance", show=False, id="review.c4"),
        Binding("left", "move(-1)", "Previous", id="review.previous"),
        Binding("right", "move(1)", "Next", id="review.next"),
        Binding("backspace", "undo", "Undo", id="review.undo"),
        Binding("n", "notes", "Notes", id="review.notes"),
        Binding("k", "criterion_notes", "Criterion notes", show=False, id="review.criterion_notes"),
        Binding("e", "focus_evidence", "Evidence", id="review.evidence"),
        Binding("c", "edit_checklist", "Checklist", id="review.checklist"),
        Binding("d", "checklist_diff", "Diff", id="review.diff"),
        Binding("h", "history", "History", id="review.history"),
        Binding("g", "curation", "Curate", id="review.curation"),
        Binding("j", "inspect_judgments", "Judgments", id="review.judgments"),
        Binding("w", "text_versions", "Text versions", id="review.text"),
        Binding("D", "duplicates", "Duplicates", key_display="D", show=False, id="review.duplicates"),
    ]

    class Decided(Message):
        """Posted after a decision (or an undo) is stored: ``pair_id``, ``decision`` (None after undo)."""

        def __init__(self, pair_id: str, decision: str | None) -> None:
            super().__init__()
            self.pair_id = pair_id
            self.decision = decision

    def __init__(self, store: Store, annotator: str, pair_id: str, flt: QueueFilter = QueueFilter()) -> None:
        super().__init__()
        self.store = store
        self.annotator = annotator
        self.flt = flt
        self.pair_id = pair_id
        self.pair: QAPair | None = None
        self.evidence: list[Evidence] = []
        self._openable: dict[str, Evidence] = {}
        self.criteria = Criteria()
        self.state_id: int | None = None
        self.view: ReviewView | None = None
        self._progress = None
        self._changes: dict[str, CitationChange] = {}
        self._shown_at = 0.0
        self._display_stale = False
        self._flush_timer = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="review-status")
        yield Static(id="evidence-stale")
        yield Static(id="leakage-banner")
        yield Static(id="duplicate-banner")
        with Horizontal(id="review-body"):
            with VerticalScroll(id="review-text"):
                yield Static(id="text-origin")
                yield Label("Question", classes="section-title")
                yield LiteralMarkdown(id="question")
                yield Label("Reference answer", classes="section-title")
                yield LiteralMarkdown(id="answer")
                yield Label("Answer-first provenance", classes="section-title", id="answer-first-title")
                yield Static(id="answer-first")
            with VerticalScroll(id="review-side"):
                yield Static(id="metadata")
                yield Label("Criteria (1-4: pass / fail / unset · k notes)", classes="section-title")
                yield Static(id="criteria")
                yield Label("Other reviews", classes="section-title")
                yield Static(id="others")
                yield Label("Checklist (c edit · d diff)", classes="section-title")
                yield Static(id="checklist")
                yield Label("Evidence (enter opens)", classes="section-title")
                yield OptionList(id="evidence")
                yield Label("Notes (n)", classes="section-title")
                yield Static(id="note")
        yield Footer()

    async def on_mount(self) -> None:
        await self.show_pair(self.pair_id)

    # ------------------------------------------------------------------ display
    async def show_pair(self, pair_id: str) -> None:
        """Load ``pair_id``'s view from the store (:func:`~benchwright.tui.services.views.review_view`) and
        display it."""
        self._display_stale = False
        self._shown_at = time.monotonic()
        self.pair_id = pair_id
        # progress is counted once, and again only after a decision or an undo (and then only when the project
        # changed: views.counted); a large project counts it in a thread, shown when done
        inline = counts_inline(self.store)
        view = self.view = review_view(self.store, pair_id, self.annotator, progress=self._progress,
                                       count_progress=inline)
        self._progress = view.progress
        if view.progress is None:
            self._count_progress()
        pair = self.pair = view.pair
        repo = view.repository
        self._show_status(view)
        update_if_changed(self.query_one("#text-origin", Static), self._text_origin(view))
        self.query_one("#question", LiteralMarkdown).show(pair.question)
        answer = pair.reference_answer or "*No reference answer yet: this pair needs one.*"
        self.query_one("#answer", LiteralMarkdown).show(answer)
        self.query_one("#review-text").scroll_home(animate=False)
        update_if_changed(self.query_one("#metadata", Static), self._metadata(pair, repo))
        self.evidence = list(view.evidence)
        options: list[Option] = []  # the evidence list's new options, added at once (one layout, not one each)
        if not self.evidence:
            options.append(Option(Text("no file cited", style="dim"), disabled=True))
        self._openable: dict[str, Evidence] = {}
        self._show_evidence_check(view, options)
        self._show_leakage(view)
        self._show_duplicates(view)
        self._show_answer_first(view)
        for i, ev in enumerate(self.evidence):
            mark, style = _EVIDENCE_MARK[ev.status]
            label = literal(str(ev.citation))
            label.append(f"  {mark}", style=style)
            if ev.beyond_end:
                label = literal(str(ev.citation))
                label.append(f"  ✗ lines beyond the end ({ev.line_count} lines)", style="bold red")
            if ev.status == "found-by-suffix":
                label.append_text(literal(f" {ev.path}", style="dim"))
            elif ev.status == "ambiguous":
                label.append(f" {len(ev.candidates)} files match:", style="yellow")
            if ev.status == "ambiguous":
                options.append(Option(label, id=f"ev{i}", disabled=True))
                for j, candidate in enumerate(ev.candidates[:MAX_CANDIDATES]):
                    option_id = f"ev{i}.{j}"
                    self._openable[option_id] = replace(ev, path=candidate)
                    options.append(Option(literal(f"   ↳ {candidate}"), id=option_id))
                continue
            if ev.openable:
                self._openable[f"ev{i}"] = ev
            options.append(Option(label, id=f"ev{i}", disabled=not ev.openable))
        evidence_list = self.query_one("#evidence", OptionList)
        evidence_list.clear_options()
        evidence_list.add_options(options)
        update_if_changed(self.query_one("#checklist", Static),
                          self._checklist_text(view.checklist, view.stale_checklist))
        self.criteria = view.criteria
        self.state_id = view.state_id
        self._show_criteria()
        update_if_changed(self.query_one("#others", Static), self._others_text(view.others))
        note = view.note
        update_if_changed(self.query_one("#note", Static), literal(note) if note else Text("no notes", style="dim"))

    class ProgressCounted(Message):
        """Posted by the progress worker: the annotator's progress, counted in a thread."""

        def __init__(self, progress) -> None:
            super().__init__()
            self.progress = progress

    @work(thread=True, exclusive=True, group="review-progress", exit_on_error=False)
    def _count_progress(self) -> None:
        """Count the progress of a large project in a thread (:func:`~benchwright.tui.services.views.progress_in_thread`)
        and post it."""
        progress = progress_in_thread(self.store, self.annotator)
        if not get_current_worker().is_cancelled:  # a newer count (after a decision) replaced this one
            self.post_message(self.ProgressCounted(progress))

    @on(ProgressCounted)
    def _on_progress_counted(self, event: ProgressCounted) -> None:
        self._progress_counted(event.progress)

    def _progress_counted(self, progress) -> None:
        if self.view is None or self._progress is not None:
            return
        self._progress = progress
        self.view = replace(self.view, progress=progress)
        self._show_status(self.view)

    def _show_answer_first(self, view: ReviewView) -> None:
        """A pair made by answer-first generation (Code-QA-Bench): its chunk, task set, and the audit's removed
        and rewritten claims as a word diff of the gold answer against the verified one."""
        shown = view.answer_first is not None
        self.query_one("#answer-first-title", Label).display = shown
        box = self.query_one("#answer-first", Static)
        box.display = shown
        if shown:
            box.update(answer_first_text(view.answer_first))

    def _show_duplicates(self, view: ReviewView) -> None:
        """The banner of a pair in an unresolved duplicate group of the latest dedup run (SWE-QA-Pro §2.3): the
        other members' positions and the group's highest similarity; ``D`` compares them side by side."""
        banner = self.query_one("#duplicate-banner", Static)
        group = view.duplicates
        if group is None or group.resolution is not None:
            banner.display = False
            return
        banner.display = True
        others = [m for m in group.members if m.id != view.pair.id]
        shown = ", ".join(f"#{m.ordinal}" for m in others[:8]) + (f" and {len(others) - 8} more" if len(others) > 8
                                                                  else "")
        banner.update(Text(f"possible duplicate of {shown} ({group.kind}, similarity up to {group.max_score:.3f}, "
                           "unresolved): D compares them", style="bold black on cyan"))

    def _show_leakage(self, view: ReviewView) -> None:
        """The banner of a pair whose current question gives away terms of its reference answer or checklist
        (:mod:`benchwright.core.leakage`): each leaked term, literally, with its kind and source."""
        banner = self.query_one("#leakage-banner", Static)
        check = view.leakage
        if check is None or check.status != "leaked":
            banner.display = False
            return
        banner.display = True
        terms = leaked_terms(check.spans)
        line = literal(f"question leaks {len(terms)} term{'' if len(terms) == 1 else 's'} the original did not "
                       f"have (w shows them): ", style="bold black on yellow")
        for k, span in enumerate(terms[:LEAKED_TERMS_SHOWN]):
            line.append(" · " if k else "")
            text = span.text if len(span.text) <= LEAKED_TERM_CHARS else span.text[:LEAKED_TERM_CHARS] + "…"
            line.append_text(literal(text, style="bold"))
            line.append_text(literal(f" ({span.kind}, {span.source})", style="italic"))
        if len(terms) > LEAKED_TERMS_SHOWN:
            line.append(f" · and {len(terms) - LEAKED_TERMS_SHOWN} more", style="italic")
        banner.update(line)

    def _show_evidence_check(self, view: ReviewView, options: list[Option]) -> None:
        """The banner of a pair whose evidence went stale at a re-pin (``repos move``), and an entry in the evidence
        list per stale citation (first, appended to ``options``), which opens the viewer on the change (its diff,
        and the file at the new pin)."""
        banner = self.query_one("#evidence-stale", Static)
        self._changes = {}
        check = view.evidence_check
        if check is None or check.status not in (EVIDENCE_STALE, EVIDENCE_UNKNOWN):
            banner.display = False
            return
        banner.display = True
        line = Text()
        if check.status == EVIDENCE_UNKNOWN:
            # Unknown is not only an unreadable old text: a cited file that is now too large, or a symlink out,
            # at the new pin, lines past the old file's end... each citation's note says why.
            n = sum(1 for c in check.changes if c.status == UNKNOWN)
            line.append_text(literal(f"evidence not re-checked at repos move to {check.to_pin}: {n} citation"
                                     f"{'' if n == 1 else 's'} could not be compared (press e)", style="yellow"))
        else:
            n = len(check.stale_changes)
            line.append_text(literal(f"evidence stale since repos move to {check.to_pin}: {n} citation"
                                     f"{'' if n == 1 else 's'} changed (press e)", style="bold black on yellow"))
            if view.text is not None and view.text.created_at > check.created_at:
                line.append(f"  · the text was edited since (version {view.text.version})", style="italic")
        banner.update(line)
        shown = check.stale_changes if check.status == EVIDENCE_STALE else \
            tuple(c for c in check.changes if c.status == UNKNOWN)
        for k, change in enumerate(shown):
            option_id = f"chg{k}"
            label = Text("⚠ ", style="bold yellow")
            label.append_text(literal(change.describe()))
            path = change.new_path or change.path or change.citation
            rng = change.new_range or change.old_range
            cited = Citation(path, *(rng if rng else (None, None)))
            self._changes[option_id] = change
            gone = change.status == DELETED
            self._openable[option_id] = Evidence(cited, "missing" if gone else "found", None if gone else path)
            options.append(Option(label, id=option_id))

    def _show_status(self, view: ReviewView) -> None:
        """Update the status line: position, my decision, progress."""
        decision = view.decision
        prog = view.progress
        line = Text()
        line.append(f"#{view.ordinal}  ", style="bold")
        if decision and view.reopened:
            line.append_text(literal(f"undecided (back in review: {REOPEN_WHY.get(view.reopened, view.reopened)} "
                                     f"since your {decision.value})", style="bold yellow"))
        elif decision:
            line.append({"accept": "accepted", "reject": "rejected", "revise": "to revise", "skip": "skipped"}[decision.value],
                        style=_DECISION_STYLE[decision.value])
        else:
            line.append("undecided", style="dim")
        if prog is None:  # counting in a thread (a large project)
            line.append("   decided …/… · mine …   annotator: ")
        else:
            line.append(f"   decided {prog.decided}/{prog.total} · mine {prog.mine}   annotator: ")
        line.append_text(literal(self.annotator, style="bold"))
        if self.flt != QueueFilter():
            line.append("   (filtered queue)", style="italic")
        update_if_changed(self.query_one("#review-status", Static), line)

    @staticmethod
    def _text_origin(view: ReviewView) -> Text:
        """``text v3 refined by MODEL · w diff, accept, edit, revert`` for a text that is not the original."""
        if view.text is None or view.text.version == 1:
            t = Text("original text · w: text versions", style="dim")
        else:
            t = literal(text_label(view.text), style="bold cyan")
            t.append(" · w: diff against the original, accept, edit, revert", style="dim")
        if view.stale_checklist:
            t.append(f"\nchecklist stale: {stale_checklist_note(*view.stale_checklist)}", style="bold yellow")
        return t

    def _checklist_text(self, current: ChecklistVersion | None, stale: tuple[int, int] | None = None) -> Text:
        if current is None:
            return Text("no checklist yet: press c to write one", style="dim")
        t = Text()
        if stale and current.text_version == stale[0]:
            t.append(f"stale: {stale_checklist_note(*stale)}\n", style="bold yellow")
        t.append(f"v{current.version} {current.origin}", style="bold")
        if current.is_draft:
            t.append(" · draft", style="bold yellow")
        t.append(" · valid" if current.is_valid else f" · {len(current.violations)} problems",
                 style="green" if current.is_valid else "bold red")
        t.append("\n")
        if current.author != self.annotator and current.origin == "edited":
            t.append_text(literal(f" · by {current.author}", style="italic"))
            t.append("\n")
        for it in current.checklist.items:
            t.append(f"[{it.weight}] ", style="bold cyan")
            key_point = it.key_point or "(no key point)"
            t.append_text(literal(key_point[:KEY_POINT_CHARS]))
            if len(key_point) > KEY_POINT_CHARS:
                t.append(f"… [{len(key_point) - KEY_POINT_CHARS:,} more characters: c shows them]", style="dim")
            t.append(f"  {'/'.join(str(s) for s in sorted(it.allowed_scores, reverse=True))}\n", style="dim")
        for v in current.violations[:4]:
            t.append("✗ ", style="red")
            t.append_text(literal(v))
            t.append("\n")
        return t

    def _metadata(self, pair: QAPair, repo) -> Text:
        t = Text()

        def row(label: str, value: str | None) -> None:
            if value:
                t.append(f"{label:<11}", style="bold")
                t.append_text(literal(value))
                t.append("\n")

        row("repository", repo.pin if repo else pair.repository or "(none)")
        if repo and not repo.local_path:
            t.append("           not checked out here: benchwright repos add NAME PATH\n", style="yellow")
        row("category", pair.category)
        row("QA type", " / ".join(x for x in (pair.qa_type, pair.qa_subtype) if x) or None)
        row("cluster", " ".join(x for x in (pair.cluster_id, pair.cluster_name) if x) or None)
        row("theme", pair.theme)
        row("language", pair.language)
        row("source", str(pair.source))
        row("id", pair.id)
        if pair.needs_reference:
            t.append("needs a reference answer\n", style="bold red")
        return t

    # ------------------------------------------------------------------ actions
    async def action_decide(self, decision: str, reason: str | None = None) -> None:
        """Store the review now (decision, the four criteria, committed), then move to the next pair. A reject
        first asks for its reason (:class:`~benchwright.tui.screens.reject_reason.RejectReasonScreen`; esc
        stores nothing)."""
        if decision == "accept" and self.pair is not None and self.pair.needs_reference:
            notify(self, "This pair has no reference answer, so it cannot be accepted; reject it or mark it "
                        "for revision (r).", title="Not accepted", severity="warning")
            return
        if decision == "reject" and reason is None:
            from .reject_reason import RejectReasonScreen

            asked_on = self.pair_id

            def chosen(picked: str | None) -> None:
                if picked is not None and self.pair_id == asked_on:
                    self.run_worker(self.action_decide("reject", picked))

            self.app.push_screen(RejectReasonScreen(self.criteria), chosen)
            return
        try:
            self.store.record_decision(
                self.pair_id, self.annotator, decision,
                criteria=self.criteria if decision != "skip" else self.store.current_criteria(self.pair_id, self.annotator),
                expected_state=self.state_id, reason=reason,
                expected_text_version=self.view.text.version if self.view.text is not None else None,
            )
        except StaleReviewError as e:
            self._progress = None  # another session decided: the header's counts are stale too
            await self.show_pair(self.pair_id)
            notify(self, str(e), title="Changed in another session", severity="warning", timeout=8)
            return
        except BenchwrightError as e:
            notify(self, str(e), title="Not saved", severity="error")
            return
        self._progress = None
        self.post_message(self.Decided(self.pair_id, decision))
        nxt = self.store.neighbor(self.pair_id, self.annotator, self.flt, step=1)
        if nxt is None:
            await self.show_pair(self.pair_id)
            notify(self, "End of the queue.", title=decision)
            return
        await self._show_next(nxt)

    async def _show_next(self, pair_id: str) -> None:
        """Show ``pair_id`` after a decision. While more input is queued (a held decision key), the whole pair
        is drawn at most every :data:`REPAINT_S`: in between only its view is loaded (what the next decision
        needs: state, criteria, text version; progress not recounted, cited files not read) and the status
        line updated; a timer draws the last pair when the keys stop. After a full draw the app yields, so the
        screen repaints."""
        if self.app.message_queue_size and time.monotonic() - self._shown_at < REPAINT_S:
            view = self.view = review_view(self.store, pair_id, self.annotator, count_progress=False,
                                           evidence=False)
            self.pair_id, self.pair = pair_id, view.pair
            self.criteria, self.state_id = view.criteria, view.state_id
            self._show_status(view)
            self._display_stale = True
            if self._flush_timer is None:
                self._flush_timer = self.set_timer(REPAINT_S, self._flush_display)
            return
        await self.show_pair(pair_id)
        await asyncio.sleep(0)

    async def _flush_display(self) -> None:
        """Draw the pair whose view was loaded without being drawn (see :meth:`_show_next`)."""
        self._flush_timer = None
        if self._display_stale and self.is_attached:
            await self.show_pair(self.pair_id)

    def action_criterion(self, index: int) -> None:
        """Cycle a criterion's verdict: unset → pass → fail → unset (stored with the next decision key)."""
        name = CRITERIA[index]
        self.criteria.verdicts[name] = next_verdict(self.criteria.verdicts.get(name))
        self.store.save_criteria_draft(self.pair_id, self.annotator, self.criteria)
        self._show_criteria()

    def _show_criteria(self) -> None:
        t = Text()
        for i, name in enumerate(CRITERIA, start=1):
            verdict = self.criteria.verdicts.get(name)
            mark, style = {None: ("·", "dim"), Verdict.PASS: ("✓ pass", "green"), Verdict.FAIL: ("✗ fail", "red")}[verdict]
            t.append(f"{i} {CRITERION_LABELS[name]:<18}", style="bold")
            t.append(mark, style=style)
            if self.criteria.notes.get(name):
                t.append("  ")
                t.append_text(literal(self.criteria.notes[name][:40]))
            t.append("\n")
        update_if_changed(self.query_one("#criteria", Static), t)

    def _others_text(self, others: OthersReviews) -> Text:
        if not others.total:
            return Text("none yet", style="dim")
        if others.hidden:
            return Text(f"{others.hidden} hidden until you submit yours (blind mode)", style="italic yellow")
        t = Text()
        for who, r in others.shown.items():
            t.append_text(literal(f"{who}: ", style="bold"))
            t.append(r.decision, style=_DECISION_STYLE.get(r.decision, ""))
            if r.reason:
                t.append(f" ({REJECT_REASON_NAMES.get(r.reason, 'unknown reason')})", style="red")
            t.append("  ")
            for name in CRITERIA:
                v = r.criteria.verdicts.get(name)
                t.append({None: "·", Verdict.PASS: "✓", Verdict.FAIL: "✗"}[v],
                         style={None: "dim", Verdict.PASS: "green", Verdict.FAIL: "red"}[v])
            if r.notes:
                t.append("  ")
                t.append_text(literal(r.notes[:60]))
            t.append("\n")
        return t

    def action_criterion_notes(self) -> None:
        """Notes per criterion (saved with the next decision)."""
        from .criteria_notes import CriteriaNotesScreen

        def done(notes: dict[str, str] | None) -> None:
            if notes is not None:
                self.criteria.notes = {k: v for k, v in notes.items() if v.strip()}
                self.store.save_criteria_draft(self.pair_id, self.annotator, self.criteria)
                self._show_criteria()

        self.app.push_screen(CriteriaNotesScreen(dict(self.criteria.notes)), done)

    def action_curation(self) -> None:
        """The curation pipeline on this pair: classify, enrich, refine, checklist, verify (RepoProbe §3.2)."""
        from .curation import CurationScreen

        self.app.push_screen(CurationScreen(self.store, self.pair_id, self.annotator),
                             callback=lambda _: self.run_worker(self.show_pair(self.pair_id)))

    def action_inspect_judgments(self) -> None:
        """The judge inspector: answers to this pair, each judge's runs, rationales and overrides."""
        from .inspector import InspectorScreen

        self.app.push_screen(InspectorScreen(self.store, self.pair_id, self.annotator))

    def action_text_versions(self) -> None:
        """The pair's text versions: the word diff against the original; accept, edit or revert the text."""
        from .text_versions import TextVersionsScreen

        def back(changed: bool | None) -> None:
            if changed:
                self._progress = None  # a new text version reopens the pair: the counts change
                self.run_worker(self.show_pair(self.pair_id))

        self.app.push_screen(TextVersionsScreen(self.store, self.pair_id, self.annotator), back)

    def action_duplicates(self) -> None:
        """The pair's duplicate group side by side (latest dedup run): keep one, keep all or merge."""
        from .duplicates import DuplicatesScreen

        if self.store.group_of_pair(self.pair_id) is None:
            notify(self, "this pair is in no duplicate group of the latest dedup run", timeout=4)
            return
        def back(changed: bool | None) -> None:
            if changed:  # a resolution: the banner follows
                self.run_worker(self.show_pair(self.pair_id))

        self.app.push_screen(DuplicatesScreen(self.store, self.annotator, pair_id=self.pair_id), back)

    def action_history(self) -> None:
        """The pair's audit trail: every decision, review, note, checklist version and adjudication."""
        from .history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.store, self.pair_id, self.annotator))

    async def action_move(self, step: int) -> None:
        """Show the previous (-1) or next (+1) pair of the queue."""
        target = self.store.neighbor(self.pair_id, self.annotator, self.flt, step=step)
        if target is None:
            notify(self, "Start of the queue." if step < 0 else "End of the queue.", timeout=2)
            return
        await self.show_pair(target)

    async def action_undo(self) -> None:
        """Undo my last decision (even one made before a restart) and show its pair."""
        pair_id = self.store.undo_last(self.annotator)
        if pair_id is None:
            notify(self, "Nothing to undo.", timeout=2)
            return
        self._progress = None
        self.post_message(self.Decided(pair_id, None))
        await self.show_pair(pair_id)
        notify(self, f"Undone: pair #{self.view.ordinal} is back to its earlier state.", timeout=3)

    def action_notes(self) -> None:
        """Edit my note on this pair in a dialog; saved as a new note version."""
        from .notes import NotesScreen

        pair_id = self.pair_id

        def edit(text: str, base: int | None, newer: str | None = None) -> None:
            def saved(typed: str | None) -> None:
                if typed is None:
                    return
                try:
                    self.store.add_note(pair_id, self.annotator, typed, expected=base)
                except NoteConflictError as e:  # the same annotator in another terminal: nothing is replaced
                    edit(typed, e.current_id, e.current)
                    return
                if pair_id == self.pair_id:
                    self.query_one("#note", Static).update(literal(typed) if typed else Text("no notes", style="dim"))
                notify(self, "Note saved.", timeout=2)

            self.app.push_screen(NotesScreen(text, newer=newer), saved)

        base, text = self.store.current_note_version(pair_id, self.annotator)
        edit(text, base)

    def action_focus_evidence(self) -> None:
        """Move focus to the evidence list (enter opens the highlighted file)."""
        options = self.query_one("#evidence", OptionList)
        options.focus()
        current = options.highlighted
        if current is None or options.get_option_at_index(current).disabled:
            # the first file that can be opened (an ambiguous citation's header line cannot)
            openable = [i for i in range(options.option_count) if not options.get_option_at_index(i).disabled]
            if openable:
                options.highlighted = openable[0]

    def action_edit_checklist(self) -> None:
        """Open the checklist editor on this pair's current checklist."""
        from .checklist_editor import ChecklistEditorScreen

        pair_id = self.pair_id

        async def closed(_version: int | None) -> None:
            if pair_id == self.pair_id:
                await self.show_pair(pair_id)

        self.app.push_screen(ChecklistEditorScreen(self.store, self.annotator, pair_id), closed)

    def action_checklist_diff(self) -> None:
        """Compare checklist versions (default: generated or first against current)."""
        from .checklist_diff import ChecklistDiffScreen

        self.app.push_screen(ChecklistDiffScreen(self.store, self.pair_id, viewer=self.annotator))

    def action_back(self) -> None:
        """Return to the queue, which puts its cursor on the pair shown last."""
        self.dismiss(self.pair_id)

    @on(OptionList.OptionSelected, "#evidence")
    def open_evidence(self, event: OptionList.OptionSelected) -> None:
        """Open the chosen cited file in the evidence viewer."""
        from .evidence import EvidenceScreen

        ev = self._openable.get(event.option_id or "")
        if ev is None:
            return
        self.app.push_screen(EvidenceScreen(self.view.repository, ev,
                                            change=self._changes.get(event.option_id or "")))


def answer_first_text(view: dict) -> Text:
    """The answer-first provenance of a pair (:func:`~benchwright.tui.services.generation.answer_first_view`) as
    literal text: task set, chunk (path, lines, kind, title, pin), then for a code-derivable pair the audit: each
    documentation-only claim (removed, or its rewrite) and the word diff of the gold answer against the verified
    answer (removed struck through, added underlined; only up to the diff limit, beyond it the claims alone)."""
    from benchwright.core.text_diff import LONG_DIFF_CHARS

    from .curation import render_diff

    chunk = view.get("chunk") or {}
    t = Text()
    t.append("task set  ", style="bold")
    t.append_text(literal(str(view.get("task_set") or "(none)")))
    t.append("\nchunk     ", style="bold")
    where = f"{chunk.get('path')}:{chunk.get('start_line')}-{chunk.get('end_line')}"
    t.append_text(literal(f"{where} ({chunk.get('kind')}: {chunk.get('title')})"[:500]))
    if chunk.get("pin"):
        t.append_text(literal(f" at {chunk.get('pin')}"[:200]))
    if view.get("chunk_text") is None:
        t.append("\n          the chunk is no longer in this project", style="dim")
    audit = view.get("audit")
    if not audit:
        if view.get("task_set") == "code-derivable":
            t.append("\naudit     none found", style="dim")
        return t
    claims = audit.get("claims") or []
    doc_only = [c for c in claims if c.get("verdict") == "documentation-only"]
    t.append("\naudit     ", style="bold")
    t.append(f"{len(claims)} claims, {audit.get('removed', 0)} documentation-only removed, "
             f"{audit.get('rewritten', 0)} rewritten\n")
    for c in doc_only[:20]:
        t.append("  ✗ ", style="red")
        t.append_text(literal(str(c.get("claim", ""))[:1000]))
        rewrite = str(c.get("rewrite") or "")
        t.append("\n    → ", style="dim")
        t.append_text(literal(rewrite[:1000]) if rewrite.strip() else Text("removed", style="italic"))
        t.append("\n")
    old, new = str(audit.get("original_answer") or ""), str(audit.get("answer") or "")
    if old and len(old) + len(new) <= LONG_DIFF_CHARS:
        t.append("gold answer → verified answer\n", style="bold")
        t.append_text(render_diff(old, new))
    return t
