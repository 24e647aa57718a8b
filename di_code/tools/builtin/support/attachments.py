"""Images a user attaches to a prompt: `@path` words that name an image, and `--image FILE`.

An `@path` word naming an image file (png, jpeg, gif or webp, judged by its first bytes as the
read tool judges) becomes an ImageContent after the prompt's text; the text keeps the word, so
the model knows which file the picture is. Any other `@word` (a text file, a name, a path that
does not exist) is left as it is: the model reads files with its tools. Trailing punctuation
(`@shot.png?`) is tried without. Paths are taken from the workspace root, `~` expanded; the
user names them, so they are not confined to the workspace as a model's paths are, but they
are opened through the file opener all the same: a FIFO or a device is refused, never waited on.

The checks happen before any request: a `--image` that is not a readable image, an image over
the read tool's size limit, or any image for a model that takes text only is an
`AttachmentError` with a one-line message.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from pathlib import Path

from di_code.ai.types import ImageContent, Model, TextContent, UserContent
from di_code.system.errors import DiCodeError
from di_code.system.files.opener import open_path, read_at_most
from di_code.tools.builtin.support.image_files import IMAGE_MAX_BYTES, SNIFF_BYTES, image_type

_WORD = re.compile(r"\S+")
_SPACE = re.compile(r"\s")
MAX_MENTIONS = 100
"""Distinct `@` words looked up as files, at most: a pasted log full of `@` costs no more."""
PATH_MAX = 4096
"""A longer `@` word names no file (Linux's PATH_MAX): it is not looked up."""
_TRAILING = ".,;:!?)]}>'\""


class AttachmentError(DiCodeError, ValueError):
    """An attachment that cannot be sent; the message is one line for the user."""

    exit_code = 2


def prompt_content(
    text: str, root: Path, model: Model, images: Sequence[str] = ()
) -> str | list[UserContent]:
    """The prompt as sent: `text` alone, or its text followed by the attached images."""
    found: dict[Path, ImageContent] = {}
    for raw in images:
        path = _path(root, raw)
        loaded = _load(path, raw)
        if loaded is None:
            raise AttachmentError(f"--image {raw}: not a png, jpeg, gif or webp image")
        found[path] = loaded
    for path, image in mentioned_images(text, root):
        found.setdefault(path, image)
    if not found:
        return text
    refuse_images(model, len(found))
    return [TextContent(text), *found.values()]


def refuse_images(model: Model, count: int) -> None:
    """Raise AttachmentError when `count` images are attached for a model that takes text
    only (an editor's pasted images are refused the same way)."""
    if count and "image" not in model.input:
        raise AttachmentError(
            f"{model.provider}/{model.id} does not accept images "
            f"({count} attached); use a model with image input"
        )


def mentioned_images(text: str, root: Path) -> list[tuple[Path, ImageContent]]:
    """The images the `@path` words of `text` name, in order, each file once."""
    out: list[tuple[Path, ImageContent]] = []
    for word in mention_words(text):
        for candidate in dict.fromkeys((word, word.rstrip(_TRAILING))):
            path = _path(root, candidate)
            if candidate and path.is_file():
                image = _load(path, candidate)
                if image is not None and all(path != seen for seen, _ in out):
                    out.append((path, image))
                break
    return out


def mention_words(text: str) -> list[str]:
    """The distinct `@` words of `text` (an `@` at the start or after white space, up to the
    next white space), in order, at most MAX_MENTIONS. Work bounded by what is looked up: the
    `@`s are found by `str.find` and each word is matched from its `@` only, so a 100 MB
    prompt costs a scan at memory speed (a regex tried at every position took seconds)."""
    words: dict[str, None] = {}
    at = text.find("@")
    while at != -1 and len(words) < MAX_MENTIONS:
        word = _WORD.match(text, at + 1, at + 2 + PATH_MAX)
        end = at + 1 if word is None else word.end()
        after_space = at == 0 or _SPACE.match(text, at - 1)
        if word is not None and after_space and len(word.group()) <= PATH_MAX:
            words.setdefault(word.group())
        at = text.find("@", end)
    return list(words)


def _path(root: Path, raw: str) -> Path:
    return Path(os.path.realpath(root / os.path.expanduser(raw)))


def _load(path: Path, shown: str) -> ImageContent | None:
    """The image at `path`, None when the file is not an image."""
    try:
        with open_path(path) as f:
            mime = image_type(f.read(SNIFF_BYTES))
            if mime is None:
                return None
            size = os.fstat(f.fileno()).st_size
            if size > IMAGE_MAX_BYTES:
                raise AttachmentError(
                    f"image too large: {shown} is {size} bytes (limit {IMAGE_MAX_BYTES})"
                )
            f.seek(0)
            data = read_at_most(f, IMAGE_MAX_BYTES)
            return ImageContent(base64.b64encode(data).decode("ascii"), mime)
    except OSError as exc:
        raise AttachmentError(f"cannot read {shown}: {exc.strerror or exc}") from None
