"""The source rules editor: add or edit a rule or global rule of a probe's ``source_analysis`` modules, with
every condition NITR uses, and the module's ``normalize``, ``stop_on_first_match`` and ``enabled_if``; a live
preview shows what the rule and its module report on the starter and on each variant's tree, with NITR's
matching (:func:`benchwright.core.probes.scan_sources`), before running anything. Saving writes the whole
pipeline.json (every other rule and key as it was) and stores the probe again, so an earlier sign-off becomes
stale; an evaluator of a NITR checkout is copied beside the project first (the checkout is only read)."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, Footer, Header, Input, Label, Select, Static, TextArea

from benchwright.core.errors import BenchwrightError, InputFileError
from benchwright.core.text import printable
from benchwright.db import Store

from ..widgets import LiteralInput, LiteralTextArea, literal, literal_options, notify

_OWN_FIELDS = ("id", "message", "min_matching_files", "max_matching_files")
"""Rule keys that have their own field in the form (the rest of a rule is its condition)."""

_NEW_RULE = {"id": "new-rule", "any_patterns": ["TODO"], "message": "{relative_path}:{line}: "}
_NEW_GLOBAL_RULE = {"id": "new-global-rule", "any_substrings": ["TODO"], "min_matching_files": 1,
                    "message": "{matching_file_count} files match: {matching_files}"}


def _items(values, out: Text, indent: str) -> None:
    for value in values:
        out.append_text(literal(f"{indent}  {value}\n", style="cyan"))


def condition_outline(condition, out: Text, indent: str = "") -> None:
    """Append to ``out`` how ``condition`` (a :class:`~benchwright.core.probes.pipeline.Condition`) is
    matched, in NITR's order of evaluation (:func:`benchwright.core.probes.rules.condition_match`); every
    string and pattern is shown literally, one a line."""
    if condition.all_of or condition.any_of:
        children = condition.all_of or condition.any_of
        out.append(f"{indent}{'every one' if condition.all_of else 'at least one'} of these holds:\n")
        for index, child in enumerate(children, 1):
            out.append(f"{indent}  ({index})\n", style="dim")
            condition_outline(child, out, indent + "    ")
        return
    if condition.not_ is not None:
        out.append(f"{indent}this does NOT hold:\n", style="bold")
        condition_outline(condition.not_, out, indent + "    ")
    for key, words in (("any_substrings", "one of the substrings is in the file"),
                       ("all_substrings", "every one of the substrings is in the file"),
                       ("any_patterns", "one of the patterns matches (re.MULTILINE: ^ and $ at every line)"),
                       ("all_patterns", "every one of the patterns matches (re.MULTILINE)")):
        values = getattr(condition, key)
        if values:
            out.append(f"{indent}{words} [{key}]:\n")
            _items(values, out, indent)
            return
    for threshold in condition.substring_hit_thresholds:
        out.append(f"{indent}at least {threshold.at_least} of these distinct substrings are in the file "
                   "[substring_hit_thresholds]:\n")
        _items(threshold.needles, out, indent)
    for pattern_threshold in condition.pattern_hit_thresholds:
        flags = ", ".join(pattern_threshold.flags) or "none: no re.MULTILINE unless asked, as in NITR"
        out.append(f"{indent}at least {pattern_threshold.at_least} of these patterns match (flags: {flags}) "
                   "[pattern_hit_thresholds]:\n")
        _items(pattern_threshold.patterns, out, indent)


class RulesEditorScreen(Screen):
    """Edit one rule or global rule of a ``source_analysis`` module; the preview updates on every change."""

    BINDINGS = [
        Binding("escape", "back", "Back", priority=True, id="rules.back"),
        Binding("ctrl+s", "save", "Save rule", id="rules.save"),
        Binding("ctrl+n", "new_rule", "New rule", priority=True, id="rules.new"),
        Binding("ctrl+g", "new_global_rule", "New global rule", priority=True, id="rules.new_global"),
    ]

    def __init__(self, store: Store, probe_id: str, annotator: str) -> None:
        super().__init__()
        self.store = store
        self.probe_id = probe_id
        self.annotator = annotator
        self.tmp: Path | None = None
        self.trees: dict[str, Path] = {}
        self.tree_errors: dict[str, str] = {}
        self.data: dict = {}
        self.path: Path | None = None
        self.module_index: int | None = None
        self.kind = "rules"  # or "global_rules"
        self.rule_index: int | None = None  # None: a new rule, appended on save
        self._loading = False
        self.dirty = False  # the working copy (self.data) holds edits not saved yet
        self._warned = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="rules-body"):
            with VerticalScroll(id="rules-form"):
                yield Label("Rule of a source_analysis module", classes="section-title")
                yield Select([], prompt="rule", id="rule-pick")
                yield Label("Module: normalize, stop_on_first_match, enabled_if")
                yield Select(literal_options(self._normalize_modes()), allow_blank=False, id="module-normalize")
                yield Checkbox("stop_on_first_match: the module stops at its first finding", id="module-stop")
                yield LiteralInput(placeholder="enabled_if: a variable's name, true or false (empty: always runs)",
                                   id="module-enabled")
                yield Label("Rule: id, message")
                yield LiteralInput(placeholder="rule id", id="rule-id")
                yield LiteralInput(placeholder="message, may use {relative_path} {line_no} {location}", id="rule-message")
                with Horizontal(id="rule-bounds"):
                    yield LiteralInput(placeholder="min_matching_files", id="rule-min")
                    yield LiteralInput(placeholder="max_matching_files", id="rule-max")
                yield Label("Condition, as in pipeline.json (JSON): any_substrings, all_substrings, any_patterns, "
                            "all_patterns, not, all_of, any_of, substring_hit_thresholds, pattern_hit_thresholds")
                yield LiteralTextArea(id="rule-condition", soft_wrap=False)
            with VerticalScroll(id="rules-preview-scroll"):
                yield Static(id="rules-preview")
        yield Footer()

    @staticmethod
    def _normalize_modes() -> tuple[str, ...]:
        from benchwright.core.probes.pipeline import NORMALIZE_MODES

        return NORMALIZE_MODES

    def on_mount(self) -> None:
        from benchwright.core.probes import Probe, Variant, apply_variant_to, chain_for

        from ..services.probes import editable_pipeline

        record = self.store.probe_record(self.probe_id)
        self.probe = Probe.model_validate(record["probe"])
        self.variants = [Variant.model_validate(v) for v in record["variants"]]
        self.data, self.path = editable_pipeline(self.store, self.probe_id)
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
        self._fill_picker()
        self.query_one("#rule-pick", Select).focus()

    def _fill_picker(self, keep: str | None = None) -> None:
        options = []
        for mi, module in enumerate(self.data.get("modules", [])):
            if not isinstance(module, dict) or module.get("module_name") != "source_analysis":
                continue
            for kind, label in (("rules", ""), ("global_rules", " (global rule)")):
                for ri, rule in enumerate(module.get(kind) or []):
                    rule_id = rule.get("id", "?") if isinstance(rule, dict) else "?"
                    options.append((f"{module.get('name', '?')}: {rule_id}{label}", f"{mi}:{kind}:{ri}"))
        select = self.query_one("#rule-pick", Select)
        select.set_options(literal_options(options))
        if options:
            values = [value for _label, value in options]
            select.value = keep if keep in values else values[0]
        else:
            self.query_one("#rules-preview", Static).update(
                Text("This probe has no source_analysis module; add one to pipeline.json first.", style="italic"))

    def on_unmount(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # ----------------------------------------------------------------- the form
    def _load(self, module_index: int, kind: str, rule_index: int | None, rule: dict) -> None:
        """Show ``rule`` (a rule's JSON) and its module's settings in the form."""
        self.module_index, self.kind, self.rule_index = module_index, kind, rule_index
        module = self.data["modules"][module_index]
        self._loading = True
        try:
            self.query_one("#module-normalize", Select).value = module.get("normalize") or "none"
            self.query_one("#module-stop", Checkbox).value = bool(module.get("stop_on_first_match"))
            enabled = module.get("enabled_if")
            self.query_one("#module-enabled", Input).value = (
                "" if enabled is None else str(enabled).lower() if isinstance(enabled, bool) else str(enabled))
            self.query_one("#rule-id", Input).value = str(rule.get("id", ""))
            self.query_one("#rule-message", Input).value = str(rule.get("message", ""))
            self.query_one("#rule-bounds").display = kind == "global_rules"
            for key, widget in (("min_matching_files", "#rule-min"), ("max_matching_files", "#rule-max")):
                self.query_one(widget, Input).value = "" if rule.get(key) is None else str(rule.get(key))
            condition = {k: v for k, v in rule.items() if k not in _OWN_FIELDS}
            self.query_one("#rule-condition", TextArea).text = json.dumps(condition, indent=2, ensure_ascii=False)
        finally:
            self._loading = False
        self.preview()

    def _current(self) -> str | None:
        """The picker value of the rule in the form (None for a new rule not kept yet)."""
        if self.module_index is None or self.rule_index is None:
            return None
        return f"{self.module_index}:{self.kind}:{self.rule_index}"

    def _keep_edit(self, show: str | None = None) -> bool:
        """Keep the form's edit in the working copy before another rule is shown (saved with the next ctrl+s);
        an edit whose condition is not even JSON cannot be kept, and the user is told (False then)."""
        if self.module_index is None:
            return True
        try:
            data = self.edited_data()
        except ValueError as error:
            notify(self, f"The edit was not kept: {printable(str(error))}", severity="warning", timeout=8)
            return False
        if data != self.data:
            self.data, self.dirty = data, True
            if self.rule_index is None:
                self.rule_index = len(data["modules"][self.module_index][self.kind]) - 1
                self._fill_picker(keep=show or self._current())
        return True

    @on(Select.Changed, "#rule-pick")
    def _picked(self, event: Select.Changed) -> None:
        if event.value is Select.NULL:  # the prompt line was picked: keep showing the rule in the form
            if self._current() is not None:
                event.select.value = self._current()
            return
        if str(event.value) == self._current():
            return  # the rule shown already (the list was refilled after a save)
        self._keep_edit(show=str(event.value))
        mi, kind, ri = str(event.value).split(":")
        self._load(int(mi), kind, int(ri), self.data["modules"][int(mi)][kind][int(ri)])

    def action_back(self) -> None:
        """Leave the editor; with unsaved edits, the first esc says so and the second leaves without saving."""
        kept = self._keep_edit()  # an edit that is not valid JSON yet is unsaved too: warn before dropping it
        if (self.dirty or not kept) and not self._warned:
            self._warned = True
            notify(self, "Unsaved edits: ctrl+s saves them; esc again leaves without saving.", severity="warning")
            return
        self.app.pop_screen()

    @on(Input.Changed)
    @on(TextArea.Changed)
    @on(Checkbox.Changed)
    @on(Select.Changed, "#module-normalize")
    def _edited(self, _event) -> None:
        if not self._loading:
            self.preview()

    def edited_rule_json(self) -> dict:
        """The rule as the form holds it, in ``pipeline.json`` shape (id, the condition's keys, message, and
        for a global rule its bounds).

        Raises:
            ValueError: the condition is not a JSON object (the line and column are named), it repeats a field
                of the form, or a bound is not a whole number.
        """
        text = self.query_one("#rule-condition", TextArea).text
        try:
            condition = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"condition: not valid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
        if not isinstance(condition, dict):
            raise ValueError('condition: give a JSON object, e.g. {"any_substrings": ["std::stoi"]}')
        repeated = [k for k in condition if k in _OWN_FIELDS]
        if repeated:
            raise ValueError(f"condition: {repeated[0]} has its own field above; leave it out of the condition")
        rule: dict = {"id": self.query_one("#rule-id", Input).value.strip(), **condition}
        if self.kind == "global_rules":
            for key, widget in (("min_matching_files", "#rule-min"), ("max_matching_files", "#rule-max")):
                value = self.query_one(widget, Input).value.strip()
                if value:
                    try:
                        rule[key] = int(value)
                    except ValueError:
                        raise ValueError(f"{key}: {value!r} is not a whole number") from None
        message = self.query_one("#rule-message", Input).value
        if message:
            rule["message"] = message
        return rule

    def edited_data(self) -> dict:
        """The whole pipeline.json with the edited rule in place (or appended) and the module's settings as the
        form holds them; every other module, rule and key exactly as it was.

        Raises:
            ValueError: see :meth:`edited_rule_json`.
        """
        data = copy.deepcopy(self.data)
        module = data["modules"][self.module_index]
        rule = self.edited_rule_json()
        rules = module.setdefault(self.kind, [])
        if self.rule_index is None or self.rule_index >= len(rules):
            rules.append(rule)
        else:
            rules[self.rule_index] = rule
        normalize = self.query_one("#module-normalize", Select).value
        if normalize != (module.get("normalize") or "none"):
            module["normalize"] = normalize
        stop = self.query_one("#module-stop", Checkbox).value
        if stop != bool(module.get("stop_on_first_match")):
            module["stop_on_first_match"] = stop
        enabled = self.query_one("#module-enabled", Input).value.strip()
        flag = {"true": True, "false": False}.get(enabled.lower(), enabled) if enabled else None
        if flag != module.get("enabled_if"):
            if flag is None:
                module.pop("enabled_if", None)
            else:
                module["enabled_if"] = flag
        return data

    def edited(self):
        """``(data, pipeline, module, rule)``: the edited pipeline.json, validated as an import validates it.

        Raises:
            ValueError: see :meth:`edited_rule_json`.
            InputFileError: the pipeline does not validate (each problem with its JSON path).
        """
        from benchwright.core.probes.pipeline import pipeline_from_dict

        data = self.edited_data()
        pipeline = pipeline_from_dict(data, source=self.path or "pipeline.json")
        module = pipeline.modules[self.module_index]
        rules = getattr(module, self.kind)
        index = len(rules) - 1 if self.rule_index is None else self.rule_index
        return data, pipeline, module, rules[index]

    # --------------------------------------------------------------- the preview
    def preview(self) -> None:
        """What the edited rule and its module report on the starter and each variant (nothing is run)."""
        from benchwright.core.probes import scan_sources
        from benchwright.core.probes.pipeline import is_enabled
        from benchwright.core.probes.rules import source_files

        if self.module_index is None:
            return
        out = Text()
        try:
            _data, pipeline, module, rule = self.edited()
        except (ValueError, InputFileError) as e:
            out.append("The rule is not valid yet:\n", style="bold red")
            problems = getattr(e, "problems", None)
            for line in ([f"{p.field or 'pipeline'}: {p.message}" for p in problems] if problems else [str(e)]):
                out.append_text(literal(f"  {line}\n"))
            self.query_one("#rules-preview", Static).update(out)
            return
        glob = self.kind == "global_rules"
        out.append("Matched as NITR does: patterns with re.MULTILINE, a rule is one finding per file at its "
                   "first line", style="dim")
        out.append(" (a global rule counts the files where it holds)\n" if glob else "\n", style="dim")
        condition_outline(rule, out)
        if rule.negate:
            out.append("a finding where the condition above does NOT hold (not: the required text is missing)\n",
                       style="bold")
        if glob:
            out.append_text(literal(f"files matching: at least {rule.min_matching_files if rule.min_matching_files is not None else 0}"
                                    + (f", at most {rule.max_matching_files}" if rule.max_matching_files is not None else "")
                                    + "\n"))
        out.append_text(literal(
            f"\nmodule {module.name}: scans {', '.join(module.scan_roots)}"
            f" ({' '.join(module.suffixes) or 'every file'})"
            + (f", excluding {', '.join([*module.exclude_files, *module.exclude_globs])}"
               if module.exclude_files or module.exclude_globs else "")
            + f"; normalize {module.normalize}" + ("; stops at its first finding" if module.stop_on_first_match else "")
            + "\n", style="bold"))
        flag = module.enabled_if
        if flag is not None:
            on_ = is_enabled(pipeline.variables.get(flag) if isinstance(flag, str) else flag)
            value = pipeline.variables.get(flag) if isinstance(flag, str) else flag
            out.append_text(literal(
                f"enabled_if {flag}: {value} -> the module {'runs' if on_ else 'is OFF and does not run'}"
                + ("" if on_ or not isinstance(flag, str) else f" (probes run --set {flag}=true runs it)") + "\n",
                style="green" if on_ else "yellow"))
        only = module.model_copy(update={"rules": [] if glob else [rule], "global_rules": [rule] if glob else [],
                                         "stop_on_first_match": False})
        expected = {v.name: (v.kind, v.expected) for v in self.variants}
        for name, root in self.trees.items():
            hits = scan_sources(only, root)
            verdict = scan_sources(module, root)
            kind, exp = expected.get(name, ("starter", "-"))
            out.append_text(literal(f"\n{name} ", style="bold"))
            scanned = len(source_files(module, root))
            out.append(f"({kind}, expected {exp}): {scanned} file{'s' if scanned != 1 else ''} scanned; ", style="dim")
            if hits:
                out.append(f"{len(hits)} finding{'s' if len(hits) != 1 else ''}", style="red")
            else:
                out.append("no finding", style="green")
            out.append(" · module " + ("fails" if verdict else "passes") + "\n",
                       style="red" if verdict else "green")
            for h in hits[:20]:
                out.append_text(literal(f"  {h.location()}  ", style="yellow"))
                if h.text:
                    out.append_text(literal(h.text[:120] + "  "))
                out.append_text(literal(h.message[:200] + "\n", style="dim"))
            if len(hits) > 20:
                out.append(f"  ... and {len(hits) - 20} more\n", style="dim")
        for name, error in self.tree_errors.items():
            out.append_text(literal(f"{name}: variant could not be applied: {error}\n", style="red"))
        self.query_one("#rules-preview", Static).update(out)

    # ---------------------------------------------------------------- commands
    def _new(self, kind: str, template: dict) -> None:
        self._keep_edit()
        modules = [i for i, m in enumerate(self.data.get("modules", []))
                   if isinstance(m, dict) and m.get("module_name") == "source_analysis"]
        if not modules:
            notify(self, "The probe has no source_analysis module.", severity="warning")
            return
        mi = self.module_index if self.module_index in modules else modules[0]
        self._load(mi, kind, None, template)
        self.query_one("#rule-condition", TextArea).focus()

    def action_new_rule(self) -> None:
        """Start a new rule in the current source_analysis module (the first one when none is picked)."""
        self._new("rules", _NEW_RULE)

    def action_new_global_rule(self) -> None:
        """Start a new global rule (files counted against min/max_matching_files) in the current module."""
        self._new("global_rules", _NEW_GLOBAL_RULE)

    def action_save(self) -> None:
        """Write the pipeline with the edited rule and store the probe again (a NITR checkout's evaluator is
        copied beside the project first)."""
        from ..services.probes import save_edited_pipeline

        if self.module_index is None:
            return
        try:
            data, _pipeline, _module, rule = self.edited()
            path, copied = save_edited_pipeline(self.store, self.probe_id, data, by=self.annotator)
        except (ValueError, InputFileError) as e:
            notify(self, f"Not saved: {printable(str(e))}", severity="error", timeout=8)
            return
        except (BenchwrightError, OSError) as e:
            notify(self, f"Not saved: {printable(str(e))}", title="Not saved", severity="error", timeout=8)
            return
        self.data, self.path, self.dirty, self._warned = data, path, False, False
        rules = self.data["modules"][self.module_index][self.kind]
        self.rule_index = len(rules) - 1 if self.rule_index is None else self.rule_index
        self._fill_picker(keep=self._current())
        where = (f"a copy of the checkout's evaluator, {path} (the checkout is not written)" if copied
                 else str(path))
        notify(self, f"Saved rule {rule.id} to {where}; the probe was stored again (earlier sign-offs are now "
                     "stale).", timeout=6)
