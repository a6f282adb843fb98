"""Which probes a release includes: the rule, as a pure function the store's probe preflight feeds.

A probe goes into a release when its latest sign-off says ``signed-off`` and was given under the probe's
current fingerprint, and its files on disk still hash to that fingerprint (what was signed off is what is
published). Every other probe is left out with an :class:`ProbeExclusion`, whose value is the reason shown in
the preflight, the card and the manifest (docs/releases.md, "Probes").
"""

from __future__ import annotations

from enum import StrEnum


class ProbeExclusion(StrEnum):
    """Why a probe stays out of a release."""

    NOT_SIGNED_OFF = "not signed off"
    REFUSED = "sign-off refused (not-signed-off)"
    STALE = "stale sign-off (the probe changed since it was signed off)"
    FILES_CHANGED = "files changed on disk since import (import it again, run and sign off)"
    OTHER_CHECKOUT = "its NITR checkout's shared files differ from those of another released probe"


def probe_release_exclusion(*, verdict: str | None, signed_fingerprint: str | None, fingerprint: str,
                            disk_fingerprint: str) -> ProbeExclusion | None:
    """The reason a probe stays out of a release, or None when it goes in.

    ``verdict`` and ``signed_fingerprint`` are those of the probe's latest sign-off (None without one);
    ``fingerprint`` is the stored probe's, ``disk_fingerprint`` what its files hash to now
    (:func:`benchwright.core.probes.probe_fingerprint`).
    """
    if verdict is None:
        return ProbeExclusion.NOT_SIGNED_OFF
    if signed_fingerprint != fingerprint:
        return ProbeExclusion.STALE
    if verdict != "signed-off":
        return ProbeExclusion.REFUSED
    if disk_fingerprint != fingerprint:
        return ProbeExclusion.FILES_CHANGED
    return None


def checkout_shared_digest(checkout_root: str | None) -> str:
    """SHA-256 (hex) of a NITR checkout's shared run-time files (:data:`~.model.CHECKOUT_FINGERPRINTED`), which a
    release writes once under ``probes/``: probes of two checkouts can share a release only when these agree.
    "" for a probe of no checkout."""
    import hashlib
    from pathlib import Path

    from .model import CHECKOUT_FINGERPRINTED, _hash_tree

    if not checkout_root:
        return ""
    digest = hashlib.sha256(b"benchwright-checkout-v1\0")
    for relative in CHECKOUT_FINGERPRINTED:
        _hash_tree(digest, relative, Path(checkout_root) / relative)
    return digest.hexdigest()
