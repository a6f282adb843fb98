"""benchwright.tui.services: the work the front ends share (the CLI and the app call these, neither owns logic).

A layer of its own between the front ends (``tui.cli``, ``tui.app``, ``tui.screens``) and the store and release
writer (``db``, ``exports``): it imports no Textual, and nothing below it imports it (import-linter contracts in
pyproject.toml). Modules: ``releases`` (create, rebuild, import a release), ``probes`` (import and run probes),
``llm`` (a ledger-backed client for a configured role), ``curation_runs`` and ``judge_runs`` (choose the pairs or
answers, run the job, store each outcome as it finishes), ``views`` (what each screen shows, read in one call),
``demo`` (seed the bundled demo project).
"""
