"""The source rules editor: add or edit a ``source_analysis`` rule of a probe and see at once which files of
each variant it matches, before running anything (NITR structural oracles). Saving writes the rule into the
evaluator's pipeline.json and imports the probe again, so an earlier sign-off becomes stale."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, Footer, Header, Input, Label, Select, Static, TextArea

from benchwright.core.errors import BenchwrightError
from benchwright.core.text import printable
from benchwright.db import Store

from ..widgets import LiteralInput, LiteralTextArea, literal, literal_options, notify


class RulesEditorScreen(Screen):
    """Edit one rule of one ``source_analysis`` module; the preview updates on every change."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", priority=True, id="rules.back"),
        Binding("ctrl+s", "save", "Save rule", id="rules.save"),
        Binding("ctrl+n", "new_rule", "New rule", priority=True, id="rules.new"),
    ]

    def __init__(self, store: Store, probe_id: str, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.probe_id = probe_id
        self.annotator = annotator
        self.tmp: Path | None = None
        self.trees: dict[str, Path] = {}
        self.tree_errors: dict[str, str] = {}
        self.module_index: int | None = None
        self.rule_index: int | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="rules-body"):
            with Vertical(id="rules-form"):
                yield Label("Rule of a source_analysis module", classes="section-title")
                yield Select([], prompt="rule", id="rule-pick")
                yield LiteralInput(placeholder="rule id", id="rule-id")
                yield Label("Patterns (regular expressions, one per line)")
                yield LiteralTextArea(id="rule-patterns", soft_wrap=False)
                yield Checkbox("not: the pattern must be found (a missing match is the violation)", id="rule-negate")
                yield LiteralInput(placeholder="message, may use {relative_path}", id="rule-message")
            with VerticalScroll(id="rules-preview-scroll"):
                yield Static(id="rules-preview")
        yield Footer()

    def on_mount(self) -> None:
        from benchwright.core.probes import Probe, Variant, apply_variant_to, chain_for

        record = self.store.probe_record(self.probe_id)
        self.probe = Probe.model_validate(record["probe"])
        self.variants = [Variant.model_validate(v) for v in record["variants"]]
        self.tmp = Path(tempfile.mkdtemp(prefix="benchwright-rules-"))
        for v in [None, *self.variants]:
            name = v.name if v else "(starter)"
            dest = self.tmp / (v.name if v else "_starter")
            try:
                # the case as the variant leaves it (earlier steps first), scanned without running anything
                shutil.copytree(self.probe.case_dir, dest, symlinks=True)
                for item in ([*chain_for(v, self.variants), v] if v else []):
                    apply_variant_to(dest, item)
                self.trees[name] = dest
            except (BenchwrightError, OSError, ValueError) as e:
                self.tree_errors[name] = str(e)
        options = []
        for mi, module in enumerate(self.probe.pipeline.modules):
            if module.module_name == "source_analysis":
                for ri, rule in enumerate(module.rules):
                    options.append((f"{module.name}: {rule.id}", f"{mi}:{ri}"))
        select = self.query_one("#rule-pick", Select)
        select.set_options(literal_options(options))
        if options:
            select.value = options[0][1]
        else:
            self.query_one("#rules-preview", Static).update(
                Text("This probe has no source_analysis module; add one to pipeline.json first.", style="italic"))

    def on_unmount(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    @on(Select.Changed, "#rule-pick")
    def _picked(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:
            return
        mi, ri = (int(x) for x in str(event.value).split(":"))
        self.module_index, self.rule_index = mi, ri
        rule = self.probe.pipeline.modules[mi].rules[ri]
        self.query_one("#rule-id", Input).value = rule.id
        self.query_one("#rule-patterns", TextArea).text = "\n".join(rule.any_patterns)
        self.query_one("#rule-negate", Checkbox).value = rule.negate
        self.query_one("#rule-message", Input).value = rule.message
        self.preview()

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Checkbox.Changed)
    def _edited(self, _event) -> None:
        self.preview()

    def edited_rule(self):
        """The rule as edited (raises BenchwrightError/ValueError for a bad regex or an empty field)."""
        from benchwright.core.probes.pipeline import SourceRule

        patterns = [p for p in self.query_one("#rule-patterns", TextArea).text.splitlines() if p.strip()]
        return SourceRule(
            id=self.query_one("#rule-id", Input).value.strip(), any_patterns=patterns,
            negate=self.query_one("#rule-negate", Checkbox).value,
            message=self.query_one("#rule-message", Input).value,
        )

    def edited_module(self):
        """The source_analysis module with the edited rule in place (or added)."""
        module = self.probe.pipeline.modules[self.module_index]
        rules = list(module.rules)
        rule = self.edited_rule()
        if self.rule_index is None or self.rule_index >= len(rules):
            rules.append(rule)
        else:
            rules[self.rule_index] = rule
        return module.model_copy(update={"rules": rules})

    def preview(self) -> None:
        """Which files of each variant the edited rule matches (nothing is run)."""
        from benchwright.core.probes import scan_sources

        if self.module_index is None:
            return
        out = Text()
        try:
            module = self.edited_module()
            rule_id = self.edited_rule().id
        except (BenchwrightError, ValueError) as e:
            out.append("The rule is not valid yet: ", style="bold red")
            errors = getattr(e, "errors", None)
            text = "; ".join(err.get("msg", "") for err in errors()) if callable(errors) else str(e)
            out.append(printable(text))
            self.query_one("#rules-preview", Static).update(out)
            return
        only_rule = module.model_copy(update={"rules": [r for r in module.rules if r.id == rule_id]})
        expected = {v.name: (v.kind, v.expected) for v in self.variants}
        for name, root in self.trees.items():
            hits = scan_sources(only_rule, root)
            kind, exp = expected.get(name, ("starter", "-"))
            out.append_text(literal(f"{name} ", style="bold"))
            out.append(f"({kind}, expected {exp}): ", style="dim")
            if hits:
                out.append(f"{len(hits)} violation{'s' if len(hits) != 1 else ''}\n", style="red")
                for h in hits[:20]:
                    out.append(f"  {printable(str(h.relative_path))}:{h.line or ''}  ", style="yellow")
                    out.append(printable((h.text or h.message or "")[:120]) + "\n")
            else:
                out.append("no violation\n", style="green")
        for name, error in self.tree_errors.items():
            out.append_text(literal(f"{name}: variant could not be applied: {error}\n", style="red"))
        self.query_one("#rules-preview", Static).update(out)

    def action_new_rule(self) -> None:
        """Start a new rule in the first source_analysis module."""
        modules = [i for i, m in enumerate(self.probe.pipeline.modules) if m.module_name == "source_analysis"]
        if not modules:
            notify(self, "The probe has no source_analysis module.", severity="warning")
            return
        self.module_index, self.rule_index = modules[0], None
        self.query_one("#rule-id", Input).value = "new-rule"
        self.query_one("#rule-patterns", TextArea).text = ""
        self.query_one("#rule-negate", Checkbox).value = False
        self.query_one("#rule-message", Input).value = "{relative_path}: "
        self.query_one("#rule-patterns", TextArea).focus()

    def action_save(self) -> None:
        """Write the rule into the evaluator's pipeline.json and import the probe again."""
        try:
            module = self.edited_module()
        except (BenchwrightError, ValueError) as e:
            notify(self, f"Not saved: {e}", severity="error")
            return
        path = Path(self.probe.evaluator_dir) / "pipeline.json"
        from benchwright.core.probes import sample_probe_dirs

        shipped = [d.resolve() for d in sample_probe_dirs()]
        if any(d in path.resolve().parents for d in shipped):
            notify(self, "This is a probe shipped with benchwright; copy its folder, import the copy, and edit that.",
                        title="Not saved", severity="error", timeout=8)
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            raw = data["modules"][self.module_index]
            raw["rules"] = [r.to_json() for r in module.rules]  # every NITR condition key kept
            path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            from benchwright.core.probes import probe_fingerprint, read_probe

            # the pipeline changed on disk; the variants stay as imported
            self.probe = read_probe(Path(self.probe.case_dir), Path(self.probe.evaluator_dir), self.probe.spec_file)
            self.store.save_probe(self.probe, self.variants, probe_fingerprint(self.probe, self.variants),
                                  by=self.annotator)
        except (BenchwrightError, OSError, KeyError, ValueError) as e:
            notify(self, f"Not saved: {e}", severity="error", timeout=8)
            return
        self.rule_index = next(i for i, r in enumerate(module.rules) if r.id == self.edited_rule().id)
        notify(self, f"Saved to {path}; the probe was imported again (earlier sign-offs are now stale).", timeout=6)
