"""The converter between lsprotocol's types and JSON, one per process, made off the loop.

cattrs writes a conversion function for each type the first time it meets one, and lsprotocol's
types are many and large (docs/benchmarks.md, Costs named in the code). Made as a message is
sent or read, that would hold the event loop; so the converter is made once, on the thread that
makes the first connection (di_code.tools.lsp.manager), with the functions for those messages
written ahead.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter

EXCHANGED = (
    types.INITIALIZE,
    types.INITIALIZED,
    types.SHUTDOWN,
    types.EXIT,
    types.TEXT_DOCUMENT_DID_OPEN,
    types.TEXT_DOCUMENT_DID_CHANGE,
    types.TEXT_DOCUMENT_DID_CLOSE,
    types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.WORKSPACE_DIAGNOSTIC_REFRESH,
    types.WORKSPACE_CONFIGURATION,
    types.CLIENT_REGISTER_CAPABILITY,
    types.WINDOW_WORK_DONE_PROGRESS_CREATE,
    types.WINDOW_LOG_MESSAGE,
    types.WINDOW_SHOW_MESSAGE,
    types.PROGRESS,
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
    types.TEXT_DOCUMENT_HOVER,
    types.TEXT_DOCUMENT_DEFINITION,
    types.TEXT_DOCUMENT_REFERENCES,
    types.WORKSPACE_SYMBOL,
)
"""The methods di-code sends, answers or is sent (the connection's and the lsp tool's)."""

_NOTEBOOK_FILTER: Any = (
    str
    | types.NotebookDocumentFilterNotebookType
    | types.NotebookDocumentFilterScheme
    | types.NotebookDocumentFilterPattern
    | None
)
"""A union lsprotocol 2025.0.0 has no hook for (ruff server's initialize result holds it)."""


@cache
def converter() -> Any:
    """pygls's converter, with notebook filters kept as the raw JSON (di-code opens no
    notebooks) where lsprotocol cannot read them, and the functions for each message of
    EXCHANGED written, both ways: the message, its answer and its params (a message's params
    are converted by their own class). Slow the first time: made off the loop.

    Two passes: cattrs 26 empties its cache of written functions whenever it writes one for a
    new list type, and the second pass meets no new one, so what it writes stays."""
    made = default_converter()  # type: ignore[no-untyped-call]
    made.register_structure_hook(_NOTEBOOK_FILTER, lambda value, _: value)
    for _ in range(2):
        for method in EXCHANGED:
            for kind in types.METHOD_TO_TYPES[method][:3]:
                if kind is not None:
                    made.get_structure_hook(kind)
                    made.get_unstructure_hook(kind)
    return made
