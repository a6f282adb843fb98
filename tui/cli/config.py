"""Commands registered on the benchwright command group (see tui/cli.py)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import click

from .common import friendly

if TYPE_CHECKING:
    from benchwright.core.llm.config import LLMConfig

# ------------------------------------------------------------------------------------------- config
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def render_config(shown: dict) -> str:
    """``LLMConfig.show()`` as TOML-like text, each value followed by ``# source``; unset values are
    listed as comments so the user sees which keys exist."""
    lines = []
    for f in shown["files"]:
        lines.append(f"# {f['scope']} file: {f['path']}{'' if f['found'] else ' (not found)'}")
    tables = [(f"{section}.{_toml_key(name)}", entries) for section in ("providers", "roles", "prices")
              for name, entries in shown[section].items()]
    if "agent" in shown:
        tables.append(("agent", shown["agent"]))
    for title, entries in tables:
        lines.append("")
        lines.append(f"[{title}]")
        rows: list[tuple[str, str]] = []
        for key, entry in entries.items():
            value, source = entry["value"], entry["source"]
            if key == "api_key":
                env = entries.get("api_key_env", {}).get("value")
                rows.append((f"# API key: {f'${env} ' if env else ''}{value}", ""))
            elif value is None:
                rows.append((f"# {key} (not set)", ""))
            else:
                rows.append((f"{key} = {_toml_value(value)}", source))
        width = max((len(left) for left, source in rows if source), default=0)
        lines.extend(f"{left:<{width}}  # {source}" if source else left for left, source in rows)
    return "\n".join(lines)


@click.group("config")
def config_group() -> None:
    """Show the LLM configuration (benchwright.toml in the project folder, then the user folder)."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the configuration as JSON.")
@click.pass_context
@friendly
def config_show(ctx: click.Context, as_json: bool) -> None:
    """Print the effective LLM configuration and where each value comes from (API keys masked)."""
    from benchwright.core.llm.config import load_llm_config

    config: LLMConfig = load_llm_config(ctx.obj["db"].resolve().parent)
    shown = config.show()
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
    else:
        click.echo(render_config(shown))
