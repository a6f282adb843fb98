"""``benchwright serve``: the review app in a browser (textual-serve), one app process per visitor, behind tokens
(the logic is in ``tui/services/serve.py``; docs/serve.md)."""

from __future__ import annotations

from pathlib import Path

import click

from benchwright.core.errors import BenchwrightError, Remedy, with_remedy

from .common import friendly, open_store


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but loopback needs --allow-remote.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port, printed).")
@click.option("--annotator", "annotators", multiple=True, metavar="NAME",
              help="Print a login link for NAME (repeatable); each link's token logs in as that annotator only. "
                   "Without any, one shared token is printed and the login form asks for a name.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a --host other than loopback (plain HTTP: a warning is printed).")
@click.option("--as-annotator-from-url", "names_from_url", is_flag=True,
              help="Also print a shared token whose pages take the annotator from the URL (/?as=NAME): trusts "
                   "whoever holds the token to name themselves.")
@click.option("--title", default=None, help="The page title (default: the project file's name).")
@click.option("--max-apps", default=32, show_default=True, type=click.IntRange(1, 1000),
              help="The most app processes (browser tabs) at once; one more tab is told the limit is reached.")
@click.pass_context
@friendly
def serve(ctx, host, port, annotators, allow_remote, names_from_url, title, max_apps) -> None:
    """Serve the review app in a browser: each visitor gets their own app process on this project, as the
    annotator their token (or the login form) names.

    The tokens are random, printed once here and kept only in memory: restarting serve makes new ones. Stop
    with Ctrl+C (or SIGTERM): every visitor's app is asked to quit, then stopped.
    """
    import asyncio
    import contextlib
    import time

    from benchwright.tui.services.serve import Access, ServeServer, check_bind

    warning = check_bind(host, allow_remote)
    path = ctx.obj["db"]
    if not Path(path).exists():
        raise with_remedy(BenchwrightError(f"{path}: no project here"), Remedy.CREATE_PROJECT)
    with open_store(ctx):  # refuse a damaged or newer project now, and upgrade an old one before any app opens it
        pass
    access = Access.create(annotators, names_from_url=names_from_url)
    def event(annotator: str, what: str, pid: int | None) -> None:
        with contextlib.suppress(OSError):  # a closed stdout (a pipe gone) must not stop the visitor's app
            click.echo(f"{time.strftime('%H:%M:%S')} {annotator}: app {what} (pid {pid})")

    server = ServeServer(access, Path(path).resolve(), title=title or Path(path).name, on_event=event,
                         max_apps=max_apps)
    if warning:
        click.echo(warning, err=True)

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        base = f"http://{shown}:{bound}"
        click.echo(f"serving {Path(path).resolve()} on {base}  (Ctrl+C to stop)")
        click.echo("login links (printed once; anyone with a link gets in as its annotator):")
        for name, link in access.links(base):
            if name is not None:
                click.echo(f"  {name}: {link}")
            elif names_from_url:
                click.echo(f"  shared (name from the URL, add &as=NAME): {link}")
            else:
                click.echo(f"  shared (the form asks for a name): {link}")

    asyncio.run(server.run(host, port, ready))
