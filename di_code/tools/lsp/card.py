"""What the model is told about the lsp tool (apart from its code, which loads pygls)."""

from __future__ import annotations

from di_code.tools.builtin.cards import ToolCard

OPERATIONS = ("definition", "references", "hover", "symbols", "diagnostics")
LSP_CARD = ToolCard(
    "lsp",
    description=(
        "Ask the language servers about code. operation: definition, references or hover of "
        "the symbol at path + line + character (1-based), or of a `symbol` name (in path, or "
        "anywhere in the workspace); symbols of a file (path) or of the workspace (symbol = "
        "a name to look for); diagnostics of a file (path) or of every file the servers have "
        "seen. Results are path:line:col with the line's text. Finds what grep misses: "
        "aliases, re-exports, methods."
    ),
    parameters={
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": list(OPERATIONS)},
            "path": {"type": "string", "description": "File, relative to the working directory."},
            "line": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based line, as read numbers it.",
            },
            "character": {
                "type": "integer",
                "minimum": 1,
                "description": "1-based column in the line's text (after read's tab).",
            },
            "symbol": {"type": "string", "minLength": 1, "description": "A symbol's name."},
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
    parallel_safe=True,
)
