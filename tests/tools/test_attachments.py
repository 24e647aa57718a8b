"""Images attached to a prompt: `@path` words and `--image` files, checked before any request."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from di_code.ai.types import ImageContent, Model, TextContent
from di_code.tools.builtin.support.attachments import AttachmentError, prompt_content
from di_code.tools.builtin.support.image_files import IMAGE_MAX_BYTES

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 24
VISION = Model("gpt-4.1", "GPT", "openai", "openai-completions", input=frozenset({"text", "image"}))
TEXT_ONLY = Model("tiny", "Tiny", "ollama", "openai-completions")


def image(data: bytes, mime: str) -> ImageContent:
    return ImageContent(base64.b64encode(data).decode(), mime)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "photo.jpg").write_bytes(JPEG)
    (tmp_path / "notes.md").write_text("# notes\n")
    return tmp_path


def test_a_prompt_without_images_stays_text(root: Path) -> None:
    text = "read @notes.md, mail @bob and see @missing.png"
    assert prompt_content(text, root, TEXT_ONLY) == text


def test_at_paths_to_images_are_attached_after_the_text_once_each(root: Path) -> None:
    text = "compare @shot.png with @photo.jpg? and @shot.png again (@notes.md)"
    assert prompt_content(text, root, VISION) == [
        TextContent(text),
        image(PNG, "image/png"),
        image(JPEG, "image/jpeg"),
    ]


def test_image_files_are_judged_by_content_not_name(root: Path) -> None:
    (root / "fake.png").write_text("not a picture")
    (root / "picture.bin").write_bytes(PNG)
    content = prompt_content("@fake.png @picture.bin", root, VISION)
    assert content == [TextContent("@fake.png @picture.bin"), image(PNG, "image/png")]


def test_image_option_files_come_first_and_must_be_images(root: Path) -> None:
    content = prompt_content("what is @photo.jpg", root, VISION, ["shot.png"])
    assert content == [
        TextContent("what is @photo.jpg"),
        image(PNG, "image/png"),
        image(JPEG, "image/jpeg"),
    ]
    with pytest.raises(AttachmentError, match=r"^--image notes.md: not a png, jpeg, gif or webp"):
        prompt_content("x", root, VISION, ["notes.md"])
    with pytest.raises(AttachmentError, match=r"^cannot read nope.png: No such file"):
        prompt_content("x", root, VISION, ["nope.png"])


def test_a_text_only_model_is_refused_with_one_clear_line(root: Path) -> None:
    with pytest.raises(AttachmentError) as caught:
        prompt_content("see @shot.png", root, TEXT_ONLY)
    assert str(caught.value) == (
        "ollama/tiny does not accept images (1 attached); use a model with image input"
    )


def test_an_image_over_the_limit_is_refused(root: Path) -> None:
    (root / "huge.png").write_bytes(PNG + b"\x00" * IMAGE_MAX_BYTES)
    with pytest.raises(AttachmentError, match=r"^image too large: huge.png is \d+ bytes"):
        prompt_content("@huge.png", root, VISION)


def test_only_the_first_distinct_at_words_are_looked_up(root: Path) -> None:
    """A pasted log full of `@` costs MAX_MENTIONS look-ups, however long it is; a word
    longer than a path can be is not one."""
    from di_code.tools.builtin.support.attachments import MAX_MENTIONS, PATH_MAX, mention_words

    log = "".join(f"user@host: see @notes.txt and @w{n}\n" for n in range(3 * MAX_MENTIONS))
    words = mention_words("@" + "x" * (PATH_MAX + 1) + " " + log)
    assert words[:3] == ["notes.txt", "w0", "w1"]
    assert len(words) == MAX_MENTIONS
    assert mention_words("a@b @c\t@d.png, (@e") == ["c", "d.png,"]
