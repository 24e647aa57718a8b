"""A conversation as one HTML file that opens anywhere and reaches nothing.

Everything is inline (the style sheet; no script, no image, no font, no link out), and a
Content-Security-Policy forbids every fetch anyway, so a text that slipped through as markup
could still load nothing. Every text is redacted, its control characters shown as the chat
shows them (`visible`), then escaped: a `<script>` in a tool's output reads as text.
"""

from __future__ import annotations

import html

from di_code.ai.redaction import redact
from di_code.system.safe_text import visible
from di_code.ui.export_items import Item, Mark, Prompt, Reply, Thinking, ToolPanel

POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""`default-src 'none'` forbids every fetch (images, fonts, frames, scripts, connections);
only the inline style sheet is allowed. Neither a base URL nor a form target may be set."""

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
  padding: 0 1rem; color: #1f2328; background: #fff; }
h1 { font-size: 1.2rem; } .meta { color: #59636e; font-size: .85rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0;
  font: 13px/1.4 ui-monospace, monospace; }
.prompt { background: #ddf4ff; border-radius: 6px; padding: .5rem .8rem; margin: 1.2rem 0 .6rem; }
.prompt::before, .reply::before { display: block; font-weight: 600; font-size: .8rem;
  color: #59636e; }
.prompt::before { content: "You"; } .reply::before { content: "Assistant"; }
.reply { margin: .6rem 0; }
details.thinking { color: #59636e; margin: .4rem 0; }
.tool { border: 1px solid #1a7f37; border-radius: 6px; margin: .6rem 0; padding: .3rem .8rem; }
.tool.error { border-color: #cf222e; } .tool.cut { border-color: #9a6700; }
.tool .title { font-family: ui-monospace, monospace; font-size: 13px; }
.tool .status { float: right; color: #59636e; font-size: .8rem; }
.tool.error .result { color: #cf222e; }
.add { color: #1a7f37; } .del { color: #cf222e; } .hunk { color: #0969da; }
.mark { border-left: 4px solid #59636e; padding: .2rem .8rem; margin: .6rem 0; color: #59636e; }
.mark.error, .mark.aborted { border-color: #cf222e; color: #cf222e; }
"""


def html_page(title: str, meta: str, items: list[Item]) -> str:
    """The whole file: a heading, a line about the session, then each item."""
    body = "\n".join(_item(item) for item in items)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{_text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f'<h1>{_text(title)}</h1>\n<p class="meta">{_text(meta)}</p>\n{body}\n</body>\n</html>\n'
    )


def _text(text: str) -> str:
    """Outside text as it may appear in the page: redacted, controls shown, escaped."""
    return html.escape(visible(redact(text)))


def _item(item: Item) -> str:
    match item:
        case Prompt(text=text):
            return f'<div class="prompt"><pre>{_text(text)}</pre></div>'
        case Reply(text=text):
            return f'<div class="reply"><pre>{_text(text)}</pre></div>'
        case Thinking(text=text):
            return (
                '<details class="thinking"><summary>Thinking</summary>'
                f"<pre>{_text(text)}</pre></details>"
            )
        case ToolPanel():
            return _panel(item)
        case Mark(kind=kind, text=text):
            label = {"error": "Error", "aborted": "Aborted", "compaction": "", "model": ""}[kind]
            lead = f"<strong>{label}:</strong> " if label else ""
            return f'<div class="mark {kind}">{lead}<pre>{_text(text)}</pre></div>'


def _panel(panel: ToolPanel) -> str:
    state = "cut" if panel.result is None else "error" if panel.is_error else "ok"
    status = panel.status or ("no result saved" if panel.result is None else "")
    parts = [
        f'<div class="tool {state}"><div class="title">'
        f'<span class="status">{_text(status)}</span>'
        f"<strong>{_text(panel.name)}</strong> {_text(panel.title)}</div>"
    ]
    if panel.arguments:
        parts.append(
            f"<details><summary>Arguments</summary><pre>{_text(panel.arguments)}</pre></details>"
        )
    if panel.nested:
        parts.append(f'<pre class="nested">{_text(chr(10).join(panel.nested))}</pre>')
    if panel.diff:
        parts.append(f'<pre class="diff">{_diff(panel.diff)}</pre>')
    if panel.result is not None and (panel.result or not panel.diff):
        parts.append(f'<pre class="result">{_text(panel.result or "(no output)")}</pre>')
    parts.append("</div>")
    return "".join(parts)


def _diff(diff: str) -> str:
    """A unified diff, each line coloured by its first character."""
    classes = {"+": "add", "-": "del", "@": "hunk"}
    lines = []
    for line in diff.splitlines():
        kind = "" if line.startswith(("+++", "---")) else classes.get(line[:1], "")
        lines.append(f'<span class="{kind}">{_text(line)}</span>' if kind else _text(line))
    return "\n".join(lines)
