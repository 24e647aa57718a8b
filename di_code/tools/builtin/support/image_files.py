"""Which files are images, judged by their first bytes, and how large one may be: shared by
the read tool and the `@image` attachments of a prompt (which must not load the tool)."""

from __future__ import annotations

IMAGE_MAX_BYTES = 3 * 1024 * 1024 + 768 * 1024
"""3.75 MiB, which is 5 MiB once base64-encoded: the smallest cap among the providers."""
SNIFF_BYTES = 8192


def image_type(head: bytes) -> str | None:
    """The MIME type of a supported image format, from its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None
