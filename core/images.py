"""Does a question or answer rely on an image? RepoProbe §3.2 "Data Cleaning and Relevance Filtering": "We first
removed discussions where the question or the accepted answer relied on images, since our benchmark targets
text-based language model evaluation."

The paper does not say how it detected them; our rule (documented in docs/curation.md) is textual and
deterministic: a Markdown image (``![alt](url)`` or a reference-style ``![alt][ref]``), an HTML ``<img`` tag, or a
link to GitHub's attachment hosts (``user-images.githubusercontent.com``, ``github.com/user-attachments/...``,
``private-user-images.githubusercontent.com``) or to a file with an image extension. Text inside fenced code
blocks is not looked at: ``![x](y)`` in a code sample is code, not an image.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)[^\n]*\n.*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.S | re.M)
_MD_IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\s?[(\[]")
_HTML_IMG = re.compile(r"<img\b", re.I)
_ATTACHMENT = re.compile(
    r"https?://(?:user-images\.githubusercontent\.com|private-user-images\.githubusercontent\.com"
    r"|github\.com/[^\s/]+/[^\s/]+/assets/|github\.com/user-attachments/)[^\s)\"'>]*",
    re.I,
)
_IMAGE_URL = re.compile(r"https?://[^\s)\"'>]+\.(?:png|jpe?g|gif|webp|bmp|svg|heic)(?:\?[^\s)\"'>]*)?(?=[\s)\"'>]|$)",
                        re.I)

IMAGE_RULES = ("markdown image", "<img> tag", "attachment URL", "image URL")
"""The names of the rules :func:`image_reason` applies, in the order it checks them."""


def image_reason(text: str | None) -> str | None:
    """Why ``text`` relies on an image (one of :data:`IMAGE_RULES`, with what matched, at most 80 characters of
    it), or None when it does not. Linear in the text's length; fenced code blocks are skipped."""
    if not text:
        return None
    prose = _FENCE.sub("", text)
    for rule, pattern in zip(IMAGE_RULES, (_MD_IMAGE, _HTML_IMG, _ATTACHMENT, _IMAGE_URL), strict=True):
        m = pattern.search(prose)
        if m:
            return f"{rule}: {m.group(0)[:80]}"
    return None


def pair_image_reason(question: str | None, answer: str | None) -> str | None:
    """``question: <reason>`` or ``answer: <reason>`` when either side relies on an image (the question first);
    None when neither does."""
    for side, text in (("question", question), ("answer", answer)):
        reason = image_reason(text)
        if reason:
            return f"{side} {reason}"
    return None
