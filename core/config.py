"""Where things are and who is working: project path, annotator name, user folders.

Order of precedence for the project file: ``--db``, then ``BENCHWRIGHT_DB``, then ``./benchwright.db``.
For the annotator: ``--as``, then ``BENCHWRIGHT_ANNOTATOR``, then ``annotator`` in the user
configuration file (``<user config dir>/benchwright/config.toml``), then the OS user name.
"""

from __future__ import annotations

import getpass
import os
import tomllib
from pathlib import Path

from platformdirs import user_config_dir, user_data_dir, user_log_dir

from .annotator_names import annotator_name
from .errors import BenchwrightError
from .text import printable_line

DEFAULT_DB = "benchwright.db"
ENV_DB = "BENCHWRIGHT_DB"
ENV_ANNOTATOR = "BENCHWRIGHT_ANNOTATOR"
ENV_DATA_DIR = "BENCHWRIGHT_DATA_DIR"
ENV_CONFIG = "BENCHWRIGHT_CONFIG"


CONFIG_FILE_NAME = "config.toml"


def config_path() -> Path:
    """The user configuration file (``BENCHWRIGHT_CONFIG`` overrides its place).

    ``BENCHWRIGHT_CONFIG`` may name the file itself or an existing folder, which then holds ``config.toml`` (and
    the user's ``benchwright.toml``)."""
    if os.environ.get(ENV_CONFIG):
        path = Path(os.environ[ENV_CONFIG]).expanduser()
        return path / CONFIG_FILE_NAME if path.is_dir() else path
    return Path(user_config_dir("benchwright")) / CONFIG_FILE_NAME


def data_dir() -> Path:
    """The user data folder where the demo project lives (``BENCHWRIGHT_DATA_DIR`` overrides it)."""
    if os.environ.get(ENV_DATA_DIR):
        return Path(os.environ[ENV_DATA_DIR])
    return Path(user_data_dir("benchwright"))


def log_dir() -> Path:
    """The user log folder, where the app writes the traceback of a crash (platformdirs' user log folder:
    ``$XDG_STATE_HOME/benchwright/log``, by default ``~/.local/state/benchwright/log`` on Linux,
    ``~/Library/Logs/benchwright`` on macOS). Not created here."""
    return Path(user_log_dir("benchwright"))


def load_user_config() -> dict:
    """The user configuration as a dict ({} when the file does not exist).

    Raises:
        BenchwrightError: the file is not valid TOML (the message names the file and line), or it cannot be read
            (a folder in the file's place, no permission).
    """
    path = config_path()
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BenchwrightError(f"{path}: not valid TOML (not UTF-8 text: {e.reason} at byte {e.start})") from None
    except OSError as e:
        raise BenchwrightError(f"{path}: the user configuration file cannot be read ({e.strerror or e})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BenchwrightError(f"{path}: not valid TOML ({e})") from None


def resolve_db_path(explicit: str | os.PathLike | None = None) -> Path:
    """The project file to open: ``explicit``, else ``$BENCHWRIGHT_DB``, else ``./benchwright.db``."""
    return Path(explicit or os.environ.get(ENV_DB) or DEFAULT_DB)


def resolve_annotator(explicit: str | None = None) -> str:
    """The annotator's name (see the module docstring for the order).

    Raises:
        BenchwrightError: the name breaks :func:`benchwright.core.annotator_names.annotator_name` (empty, not
            text, over 64 characters, a control or format character); the message names where it came from.
            The OS user name is used as it is.
    """
    for value, origin in (
        (explicit, "--as"),
        (os.environ.get(ENV_ANNOTATOR), ENV_ANNOTATOR),
        (load_user_config().get("annotator"), str(config_path())),
    ):
        if value is None:
            continue
        return annotator_name(value, f"{origin}: annotator name '{printable_line(value)}'" if isinstance(value, str) else origin)
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "annotator"
