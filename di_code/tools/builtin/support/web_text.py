"""A fetched page's bytes as the text the model reads: decoded (refused when the text holds a
NUL: binary content), HTML turned into Markdown, cut to the tools' output limit. Run in a
worker thread (`page_result`): on a 2 MB page the conversion takes seconds, which must not hold
the event loop.

The page's declared charset is honoured only when it names one of the text encodings browsers
know (the WHATWG Encoding Standard's: UTF-8 and UTF-16, the ISO 8859 and Windows code pages,
KOI8, the Mac encodings, GBK/GB18030, Big5, EUC-JP, ISO-2022-JP, Shift_JIS, EUC-KR); any other
label (`punycode`, whose decoder is quadratic, `utf-7`, `rot13`, compression codecs) is read as
UTF-8, and bytes that do not decode become U+FFFD.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from html import unescape

from di_code.agent.tool import ToolResult
from di_code.ai.types import TextContent
from di_code.tools.builtin.cards import FETCH_MAX_BYTES
from di_code.tools.builtin.support.truncation import MAX_BYTES, keep_head
from di_code.tools.common.errors import ToolError

TEXT_CODECS = frozenset(
    {"utf-8", "utf-16", "utf-16-le", "utf-16-be", "cp866", "cp874", "koi8-r", "koi8-u"}
    | {f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)}
    | {f"cp{n}" for n in range(1250, 1259)}
    | {"mac-roman", "mac-cyrillic", "gbk", "gb2312", "gb18030", "big5", "big5hkscs"}
    | {"euc_jp", "iso2022_jp", "shift_jis", "cp932", "euc_kr", "cp949"}
)
"""Python's names for the WHATWG encodings."""
LABELS = {"iso8859-1": "cp1252", "ascii": "cp1252", "windows-874": "cp874"}
"""Labels the WHATWG standard reads as another encoding (latin1 and ASCII as windows-1252),
or that Python does not know by that name."""
LABEL = re.compile(r"[A-Za-z0-9._:-]{1,40}")
PREFIX_DEPTH = 16
"""Quotes and lists nested deeper than this make a page plain text (16 levels of quotes in a
2 MB page: 3 s to convert)."""
TOO_DEEP = (
    "[The page nests its elements too deep to convert (over 1024 levels, or quotes and lists "
    "over 16): shown as plain text.]"
)
HIDDEN = frozenset({"script", "style", "template"})
BLOCKS = frozenset(
    {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figure"}
    | {"footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main"}
    | {"nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul", "title"}
)
"""Elements that start a line of the plain text."""
_MARKUP = re.compile(r"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*>?")
"""A comment's start, or a tag up to its `>` or the next `<` (an unclosed one ends there)."""
_PREFIXING = re.compile(r"<(/?)(?:blockquote|ul|ol)\b", re.IGNORECASE)
"""The elements that prefix each line inside them (`> `, a list's indent)."""


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    status: int
    content_type: str
    body: bytes
    cut: bool


def page_result(page: Page) -> ToolResult:
    """The tool result for `page`: its text, at most the output limit, and notes on what was
    left out."""
    text = page.body.decode(charset(page.content_type), errors="replace")
    if "\0" in text:  # the decoded text: a UTF-16 page's bytes are full of NULs, its text none
        raise ToolError(f"Not fetched: {page.url} holds binary content")
    notes = [f"[{page.status} {page.url}]"]
    if "html" in page.content_type.lower() or (not page.content_type and "<html" in text[:512]):
        text, too_deep = html_to_markdown(text)
        if too_deep:
            notes.append(TOO_DEEP)
    lines, truncation = keep_head(text.splitlines(), fill=True)
    if page.cut:
        notes.append(f"[Only the first {FETCH_MAX_BYTES} bytes were read.]")
    if truncation is not None and truncation.line_cut:
        notes.append(
            f"[Cut at the {MAX_BYTES // 1024} KB limit: showing lines 1-{len(lines)} of "
            f"{truncation.total_lines}, the last one cut short.]"
        )
    elif truncation is not None:
        notes.append(f"[Showing the first {len(lines)} lines of {truncation.total_lines}.]")
    details = {"url": page.url, "status": page.status, "bytes": len(page.body), "cut": page.cut}
    body = "\n".join(lines)
    return ToolResult([TextContent("\n".join([notes[0], "", body, *notes[1:]]))], details)


def html_to_markdown(html: str) -> tuple[str, bool]:
    """Markdown of `html`, and whether it was too deep for that; then it is given as its plain
    text (`plain_text`), which no depth can hide or multiply. The converter skips, without a
    word, every element nested deeper than its limit (1024 levels); and each level of a quote
    or list prefixes every line inside it (a quote's is copied whole too), so 100 KB of quotes
    1000 deep are gigabytes (where memory runs out the converter aborts the process), and 2 MB
    of lists 500 deep 250 MB of Markdown."""
    from html_to_markdown import WarningKind, convert

    if _prefixes_deeper_than(html, PREFIX_DEPTH):
        return plain_text(html), True
    converted = convert(html)
    if any(w.kind == WarningKind.DEPTH_LIMIT_EXCEEDED for w in converted.warnings):
        return plain_text(html), True
    return converted.content or "", False


def _prefixes_deeper_than(html: str, limit: int) -> bool:
    depth = 0
    for tag in _PREFIXING.finditer(html):
        depth = max(depth - 1, 0) if tag.group(1) else depth + 1
        if depth > limit:
            return True
    return False


def plain_text(html: str) -> str:
    """The text of `html` without its scripts, styles and comments, a line per block. One pass
    that never looks back, whatever the markup: html.parser takes minutes on a page of `<a<a<a`
    (each unclosed tag is read again to the end), so tags are cut here at the next `<`."""
    lowered = html.lower()
    parts: list[str] = []
    at = 0
    while (found := _MARKUP.search(html, at)) is not None:
        parts.append(unescape(html[at : found.start()]))
        at = found.end()
        name = (found.group(2) or "").lower()
        if found.group(0) == "<!--":
            closed = html.find("-->", at)
            at = len(html) if closed < 0 else closed + 3
        elif name in HIDDEN and not found.group(1):
            closed = lowered.find(f"</{name}", at)
            at = len(html) if closed < 0 else closed
        elif name in BLOCKS:
            parts.append("\n")
    parts.append(unescape(html[at:]))
    lines = (" ".join(line.split()) for line in "".join(parts).splitlines())
    return "\n".join(line for line in lines if line)


def charset(content_type: str) -> str:
    """The codec for a Content-Type's `charset`: one of TEXT_CODECS, else UTF-8."""
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        label = value.strip().strip("\"'").lower()
        if key.strip().lower() != "charset" or not LABEL.fullmatch(label):
            continue
        try:
            name = codecs.lookup(LABELS.get(label, label)).name
        except LookupError:
            return "utf-8"
        name = LABELS.get(name, name)
        return name if name in TEXT_CODECS else "utf-8"
    return "utf-8"
