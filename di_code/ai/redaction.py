"""The one place that knows di-code's secrets, and the one place they are hidden at.

Whoever holds a secret (the set-up for the chosen key and the base URL's password, a provider
for its key and auth headers) registers it once; every channel out of the process passes its
text through `redact` here: stdout and stderr (`RedactingStream`: run's output, the chat
screen), an editor's ACP messages, session files, `--log` lines, hooks' input, batch results,
provider error messages. tests/test_guarded_secrets.py fails when a channel writes around it. So a
key cannot leak through a path nobody thought of: `printenv OPENAI_API_KEY` in bash, a server
echoing the key, an error naming the URL, a file the model reads. What goes out over the
network is held to the same rule: a request body holds no secret but its own credentials
(`foreign_secrets_hidden`), and fetch takes no URL that `holds_secret`.

A secret is hidden wherever it appears, in its JSON spellings too (a `"` or a non-ASCII letter
of a key is escaped in a JSON line, a `/` may be; a JSON file's spelling shown in a JSON line
is escaped twice), and so is any piece of it of `PIECE` characters or more:
an error body cut in the middle of a key leaves at most a few characters. A text streamed in
pieces (an answer's deltas) goes through a `StreamRedactor`, which holds back what may be the
start of a key. Values shorter than `MIN_SECRET` are not treated as secrets: hiding them would
mask ordinary words. Credentials written in a URL (`scheme://user:password@host`) are hidden
by their shape, whether registered or not.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
from collections.abc import Iterable, Mapping

from di_code.system.text_front import TextFront

MASK = "***"
MIN_SECRET = 4
PIECE = 12
ANCHOR = PIECE // 2
STRIDE = PIECE - ANCHOR + 1
"""Anchors ANCHOR long every STRIDE characters: any PIECE-long piece holds one whole."""

_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:]*:)[^\s/@]+@")
_lock = threading.Lock()
_secrets: tuple[str, ...] = ()
_longest = 0


def register(*values: str | None) -> None:
    """Remember secrets (surrounding whitespace ignored), each with its JSON spellings; short
    or empty values are skipped."""
    global _secrets, _longest
    found = {value.strip() for value in values if value and len(value.strip()) >= MIN_SECRET}
    found = {spelling for value in found for spelling in _spellings(value)}
    with _lock:
        _secrets = tuple(found.union(_secrets))
        _longest = max(map(len, _secrets), default=0)


def _spellings(value: str) -> set[str]:
    """`value` and how JSON writes it: escaped once (in a JSON line, or in a JSON file, where
    PHP's and Java's writers spell `/` as `\\/`), and each of those escaped again (that file
    shown in a JSON line). A key without such characters is its only spelling."""
    once = _escaped(value)
    once |= {spelling.replace("/", "\\/") for spelling in once}
    return {value} | once | {twice for spelling in once for twice in _escaped(spelling)}


def _escaped(text: str) -> set[str]:
    """`text` inside a JSON string, with and without non-ASCII letters escaped."""
    return {json.dumps(text, ensure_ascii=escaped)[1:-1] for escaped in (True, False)}


def register_url(url: str | None) -> None:
    """Remember the password of a URL's `user:password@` part."""
    if url:
        from urllib.parse import urlsplit

        with contextlib.suppress(ValueError):  # not a URL at all: nothing to take
            register(urlsplit(url).password)


SECRET_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization")
"""Headers whose values are credentials, whoever is sent them (a provider, an MCP server)."""


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The values of `headers` that are credentials (SECRET_HEADERS), to `register`."""
    return [value for name, value in headers.items() if name.lower() in SECRET_HEADERS]


def forget_all() -> None:
    """Drop every secret (tests start each case from none)."""
    global _secrets, _longest
    with _lock:
        _secrets, _longest = (), 0


def redact(text: str) -> str:
    """`text` with every known secret, every long piece of one and URL passwords as `***`."""
    if "://" in text:
        text = _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
    spans = [
        span
        for secret in _secrets
        if len(text) >= min(len(secret), PIECE)
        for span in _spans(text, secret)
    ]  # all found in the same text, so a raw key's piece cannot cut its JSON spelling
    return _masked(text, spans) if spans else text


def redact_bytes(data: bytes) -> bytes:
    """`redact` for bytes that are mostly UTF-8 text (a protocol line, a hook's input); bytes
    that are not UTF-8 pass as they are."""
    if not _secrets and b"://" not in data:
        return data
    return redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def foreign_secrets_hidden(body: bytes, credentials: Iterable[str]) -> bytes:
    """A request body with every secret hidden but those the request itself sends as its
    credentials (`credentials`: its URL and header values): after a switch to another provider,
    a key the conversation read (a `.env` file) is not sent to a server it was not given for.
    URL passwords are not hidden by their shape here: this is the model's own text."""
    sent = " ".join(credentials)
    foreign = [secret for secret in _secrets if secret not in sent]
    if not foreign:
        return body
    text = body.decode("utf-8", "surrogateescape")
    spans = [span for secret in foreign for span in _spans(text, secret)]
    return _masked(text, spans).encode("utf-8", "surrogateescape") if spans else body


def holds_secret(text: str) -> bool:
    """Whether `text` holds a known secret or a long piece of one (a URL about to be sent),
    percent-encoded too: a server reads `%73k-...` as `sk-...`."""
    from urllib.parse import unquote

    return any(_spans(form, secret) for form in {text, unquote(text)} for secret in _secrets)


class StreamRedactor:
    """One streamed text (an answer, its thinking, a tool call's arguments) shown piece by
    piece with every secret hidden. `redact` on each piece alone would let a key through in
    pieces of four characters; so the tail that could be the start of a secret is held back
    until the next piece (or `end`) says whether it is one."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """What may be shown now, of everything fed so far (it may be empty)."""
        text = self._held + piece
        cut = len(text) - _secret_start(text)
        self._held = text[cut:]
        return redact(text[:cut])

    def end(self) -> str:
        """The rest: the text is complete."""
        held, self._held = self._held, ""
        return redact(held)


def _secret_start(text: str) -> int:
    """The length of the longest end of `text` that is part of a secret (it may grow into
    one). A longer end holds each shorter one, so the search stops at the first miss."""
    length = 0
    secrets = _secrets
    while length < min(len(text), _longest):
        tail = text[len(text) - length - 1 :]
        if not any(tail in secret for secret in secrets):
            break
        length += 1
    return length


def _masked(text: str, found: list[tuple[int, int]]) -> str:
    """`text` with each stretch found (merged where they touch or overlap) as MASK."""
    spans = sorted(found)
    merged = [list(spans[0])]
    for begin, stop in spans[1:]:
        if begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([begin, stop])
    out, end = [], 0
    for begin, stop in merged:
        out += [text[end:begin], MASK]
        end = stop
    out.append(text[end:])
    return "".join(out)


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where `text` holds the secret or a long piece of it. Only the anchors (short pieces at a
    stride) are searched for, each found one grown both ways: every `PIECE`-long piece holds a
    whole anchor, and a few searches cost far less than one per offset of the secret."""
    if len(secret) <= PIECE:
        return [(at, at + len(secret)) for at in _find_all(text, secret)]
    spans = []
    grown: dict[int, int] = {}  # text offset of the secret's start -> end of the stretch grown
    for anchor in range(0, len(secret) - ANCHOR + 1, STRIDE):
        for at in _find_all(text, secret[anchor : anchor + ANCHOR]):
            if at < grown.get(at - anchor, -1):
                continue  # inside a stretch already grown along the same alignment
            begin, end, left, right = at, at + ANCHOR, anchor, anchor + ANCHOR
            while begin > 0 and left > 0 and text[begin - 1] == secret[left - 1]:
                begin, left = begin - 1, left - 1
            while end < len(text) and right < len(secret) and text[end] == secret[right]:
                end, right = end + 1, right + 1
            grown[at - anchor] = end
            if end - begin >= PIECE:
                spans.append((begin, end))
    return spans


def _find_all(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found


class RedactingStream(TextFront):
    """A text stream that redacts whatever is written to it; the rest is the stream's."""

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)


def redact_output() -> None:
    """Route `sys.stdout` and `sys.stderr` (and so every library, logging and tracebacks)
    through `redact`; calling it again changes nothing."""
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)


def clip(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, redacted before it is cut (a cut key would
    otherwise leave its first part behind, no longer matching the whole secret)."""
    return redact(text)[:limit]
