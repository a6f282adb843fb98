"""Pushing a verified release folder to the Hugging Face Hub (``benchwright releases push``, issue 20 item 4).

The folder is checked as ``releases verify`` checks it first (an unverified folder is refused: nothing is sent);
then the dataset repository is created when missing (``HfApi.create_repo(exist_ok=True)``, ``--private`` applies to
a new repository only, as on the Hub), the branch ``--revision`` too when it is not ``main``, and every file of the
manifest plus ``manifest.json`` goes up in one commit (``HfApi.create_commit``: preupload, then LFS or Xet for the
large files, then the commit), so the Hub never shows half a release. A commit that fails on the way (an HTTP 5xx,
429, or a dropped connection) is sent again, up to ``attempts`` times with a doubling wait; huggingface_hub itself
retries its preupload and LFS calls but not the commit. A refused token (HTTP 401 or 403) stops at once.

The token comes from the environment (``HF_TOKEN``) or the Hub's own login (``hf auth login``), read by
``huggingface_hub.get_token``; it is never stored, printed, logged or written to the project. The push is recorded in
the project (``release_pushes``, m027) only once the Hub answered the commit with its id.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchwright.core.errors import BenchwrightError
from benchwright.core.text import printable

MANIFEST = "manifest.json"
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""``ORG/NAME`` as the Hub spells a repository id (letters, digits, ``-``, ``_``, ``.``)."""
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
"""HTTP statuses after which a commit is sent again."""


class HubError(BenchwrightError):
    """A push to the Hub that did not happen: no token, a refused token, an unverified folder, or the Hub's
    refusal. Nothing is recorded in the project when it is raised."""


@dataclass(frozen=True)
class PushResult:
    """One push that the Hub accepted: the release (``name``, ``version``), where it went (``endpoint``,
    ``repo_id``, ``revision``), the Hub's commit (``commit_url``, ``commit_oid``), the files sent (paths in the
    repository, sorted), how many commit attempts it took (1 when the first went through), whether the repository
    is private as the Hub reported it after the push (``private``; what is recorded), and ``warnings`` (sentences
    for the user, e.g. ``--private`` having changed nothing on an existing public repository)."""

    name: str
    version: str
    endpoint: str
    repo_id: str
    revision: str
    commit_url: str
    commit_oid: str
    files: tuple[str, ...]
    attempts: int
    private: bool = False
    warnings: tuple[str, ...] = ()


def hub_token() -> str:
    """The Hub token of this environment: ``HF_TOKEN``, else the one ``hf auth login`` stored.

    Raises:
        HubError: there is none.
    """
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise HubError("no Hugging Face token: set HF_TOKEN in the environment or log in with `hf auth login` "
                       "(benchwright never stores it)")
    return token


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` when it is ``ORG/NAME`` (:data:`REPO_ID`).

    Raises:
        HubError: it is not (the message names ``--repo-id``).
    """
    if not REPO_ID.match(repo_id or "") or ".." in repo_id or len(repo_id) > 96:
        raise HubError(f"--repo-id {repo_id!r}: expected ORG/NAME (letters, digits, '-', '_', '.'; "
                       "at most 96 characters)")
    return repo_id


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def check_revision(revision: str) -> str:
    """``revision`` when it is a valid branch name by git's ref rules (``git check-ref-format``), which the Hub
    applies: no control characters or spaces, none of ``~ ^ : ? * [ \\``, no ``..``, ``@{`` or ``//``, not
    starting or ending with ``/``, no part starting with ``.`` or ending with ``.lock``, not ending with ``.``,
    not ``@``, at most 255 characters. Checked before any request.

    Raises:
        HubError: it is not (the message names ``--revision`` and shows the value with its control characters
            visible).
    """
    bad = (not revision or len(revision) > 255 or revision == "@" or bool(_REF_FORBIDDEN.search(revision))
           or revision.startswith("/") or revision.endswith(("/", "."))
           or any(part.startswith(".") or part.endswith(".lock") for part in revision.split("/"))
           or any(unicodedata.category(c) in ("Cc", "Cf") for c in revision))
    if bad:
        raise HubError(f"--revision {printable(repr(revision))}: not a valid branch name (git ref rules: no spaces, "
                       "control characters, '~ ^ : ? * [ \\', '..', '@{', '//', no leading '/' or '.', no trailing "
                       "'/', '.' or '.lock'); nothing was pushed")
    return revision


def check_endpoint(endpoint: str) -> str:
    """``endpoint`` without a trailing ``/`` when it is an ``http://`` or ``https://`` URL with a host. Checked
    before any request (another scheme would only fail after huggingface_hub's retries).

    Raises:
        HubError: it is not (the message names ``--endpoint`` and shows the value literally).
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
    except ValueError:
        parts = None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc
            or any(unicodedata.category(c) in ("Cc", "Cf") or c.isspace() for c in endpoint)):
        raise HubError(f"--endpoint {printable(repr(endpoint))}: expected an http:// or https:// URL of a Hub, e.g. "
                       "https://huggingface.co; nothing was pushed")
    return endpoint.rstrip("/")


def verified_release(folder: Path) -> tuple[dict, list[str]]:
    """The manifest of the release ``folder`` and the files to push (the manifest's files, then
    ``manifest.json``), after the checks of ``releases verify``.

    Raises:
        HubError: the folder is not a release, or differs from its manifest (the first problems are named).
    """
    from benchwright.exports import verify_release

    report = verify_release(folder)
    if not report.ok:
        shown = "; ".join(report.problems[:5]) + ("; ..." if len(report.problems) > 5 else "")
        raise HubError(f"{folder}: not pushed: the release does not verify ({len(report.problems)} "
                       f"problem{'' if len(report.problems) == 1 else 's'}: {shown}); "
                       "see benchwright releases verify")
    manifest = json.loads((folder / MANIFEST).read_bytes())
    return manifest, [*sorted(manifest["files"]), MANIFEST]


def _status(e: Exception) -> int | None:
    response = getattr(e, "response", None)
    return getattr(response, "status_code", None)


def _transient(e: Exception) -> bool:
    import httpx2

    return isinstance(e, httpx2.TransportError) or _status(e) in TRANSIENT_STATUS


def _commit(api, repo_id: str, folder: Path, files: list[str], *, private: bool, revision: str, message: str):
    from huggingface_hub import CommitOperationAdd

    api.create_repo(repo_id, repo_type="dataset", private=True if private else None, exist_ok=True)
    is_private = bool(api.repo_info(repo_id, repo_type="dataset").private)  # the Hub's word: the repo may exist
    if revision != "main":
        api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
    operations = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(folder / rel)) for rel in files]
    info = api.create_commit(repo_id, operations, commit_message=message, repo_type="dataset", revision=revision)
    return info, is_private


def push_release(store, folder: str | Path, repo_id: str, *, by: str, private: bool = False,
                 revision: str | None = None, endpoint: str | None = None, token: str | None = None,
                 attempts: int = 4, wait: float = 2.0, sleep: Callable[[float], None] | None = None,
                 progress: Callable[[str], None] | None = None) -> PushResult:
    """Push the verified release ``folder`` to the dataset repository ``repo_id`` and record the push in ``store``.

    ``endpoint`` defaults to huggingface_hub's (``HF_ENDPOINT``, else https://huggingface.co); ``token`` to
    :func:`hub_token`; ``revision`` to ``main`` (another branch is created from main when missing). A transient
    failure (see module docstring) is retried up to ``attempts`` commits in all, waiting ``wait`` seconds, then
    twice that, ... between them (``sleep``, default ``time.sleep``, is injectable for tests).

    ``revision`` (:func:`check_revision`) and ``endpoint`` (:func:`check_endpoint`) are checked before any
    request. huggingface_hub's progress bars are off during the push; ``progress`` (when given) receives one short
    line per step instead (``"commit attempt 1 of 4: 5 files"``). The visibility recorded is the one the Hub reports
    after ``create_repo`` (``HfApi.repo_info(...).private``): ``private`` on an existing public repository changes
    nothing, and the result's ``warnings`` says so.

    Raises:
        HubError: bad ``repo_id``, unverified folder, no token, refused token, invalid card metadata, or a failure
            that outlasted the attempts. Nothing is recorded then.
    """
    from huggingface_hub import HfApi, constants
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    check_repo_id(repo_id)
    revision = check_revision(revision or "main")
    endpoint = check_endpoint(endpoint or constants.ENDPOINT)
    folder = Path(folder)
    manifest, files = verified_release(folder)
    api = HfApi(endpoint=endpoint, token=token or hub_token())
    name, version = str(manifest["name"]), str(manifest["version"])
    message = f"benchwright release {name} {version}"
    where = f"{endpoint} ({repo_id}, revision {revision})"
    bars_were_off = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        info, is_private, attempt = _attempts(api, repo_id, folder, files, private=private, revision=revision,
                                              message=message, attempts=attempts, wait=wait, sleep=sleep,
                                              progress=progress, endpoint=endpoint, where=where, release=(name, version))
    finally:
        if not bars_were_off:
            enable_progress_bars()
    warnings = []
    if private and not is_private:
        warnings.append(f"the repo {repo_id} exists and is public: --private changed nothing; change it on the Hub")
    sha = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()
    store.record_release_push(name=name, version=version, manifest_sha256=sha, endpoint=endpoint, repo_id=repo_id,
                              revision=revision, private=is_private, commit_url=info.commit_url,
                              commit_oid=info.oid, by=by)
    return PushResult(name=name, version=version, endpoint=endpoint, repo_id=repo_id, revision=revision,
                      commit_url=info.commit_url, commit_oid=info.oid, files=tuple(files), attempts=attempt,
                      private=is_private, warnings=tuple(warnings))


def _attempts(api, repo_id: str, folder: Path, files: list[str], *, private: bool, revision: str, message: str,
              attempts: int, wait: float, sleep, progress, endpoint: str, where: str, release: tuple[str, str]):
    """The commit sent up to ``attempts`` times (see :func:`push_release`): ``(commit info, private, attempt)``."""
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    name, version = release
    for attempt in range(1, max(1, attempts) + 1):
        if progress is not None:
            progress(f"commit attempt {attempt} of {max(1, attempts)}: {len(files)} files")
        try:
            info, is_private = _commit(api, repo_id, folder, files, private=private, revision=revision,
                                       message=message)
            return info, is_private, attempt
        except (HfHubHTTPError, httpx2.TransportError, OSError, ValueError) as e:
            status = _status(e)
            if status in (401, 403):
                raise HubError(f"the Hub at {endpoint} refused the token (HTTP {status}): check that HF_TOKEN "
                               f"(or your `hf auth login`) may write to {repo_id}; nothing was pushed") from None
            if not _transient(e):
                raise HubError(f"push of {name} {version} to {where} failed: {_reason(e)}") from None
            if attempt >= attempts:
                raise HubError(f"push of {name} {version} to {where} failed after {attempt} attempts: "
                               f"{_reason(e)}; nothing was recorded, run the command again") from None
            (sleep or time.sleep)(wait * 2 ** (attempt - 1))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _reason(e: Exception) -> str:
    """What went wrong in one line: ``HTTP STATUS at URL: the server's message`` for an HTTP error, else the first
    line of the error (huggingface_hub's messages name the URL; they never hold the token)."""
    status = _status(e)
    if status is None:
        return (str(e).strip().splitlines() or [type(e).__name__])[0]
    try:
        url = str(e.response.request.url)
    except (AttributeError, RuntimeError):  # a response built without its request
        url = ""
    said = " ".join(str(getattr(e, "server_message", None) or "").split())
    return f"HTTP {status}" + (f" at {url}" if url else "") + (f": {said}" if said else "")
