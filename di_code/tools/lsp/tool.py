"""The lsp tool: ask the language servers where a symbol is defined and used, what it is,
which symbols a file or the workspace has, and which problems they see. Offered only when a
server is configured or found on PATH (di_code.tools.default_tools)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from di_code.agent.tool import ToolOutput, ToolUpdate
from di_code.ai.codec import encodable
from di_code.ai.types import TextContent
from di_code.system.abort import AbortSignal
from di_code.tools.builtin.support.editor_files import EditorFiles
from di_code.tools.builtin.support.truncation import keep_head
from di_code.tools.common.base import WorkspaceTool
from di_code.tools.common.errors import ToolError
from di_code.tools.lsp.card import LSP_CARD
from di_code.tools.lsp.connection import Connection, ServerEnded, one_line
from di_code.tools.lsp.locations import hover_text, inside, locations, place_lines, symbols
from di_code.tools.lsp.manager import LanguageServers, Stopped, abortable, read_text
from di_code.tools.lsp.report import MAX_SHOWN, Problem, problem


@dataclass(frozen=True, slots=True)
class LspTool(WorkspaceTool):
    name: ClassVar[str] = LSP_CARD.name
    description: ClassVar[str] = LSP_CARD.description
    parameters: ClassVar[dict[str, Any]] = LSP_CARD.parameters
    parallel_safe: ClassVar[bool] = True
    lsp: LanguageServers
    editor: EditorFiles | None = None
    """Where the text of files is (the user's editor, under `di-code acp`), else the disk."""

    async def run(
        self, params: dict[str, Any], signal: AbortSignal, on_update: ToolUpdate | None
    ) -> ToolOutput:
        try:
            lines = await abortable(self._answer(params), signal)
        except Stopped:
            raise ToolError("Stopped while waiting for the language server") from None
        except TimeoutError:
            raise ToolError("The language server did not answer in time") from None
        except ServerEnded:
            raise ToolError("The language server ended before it answered") from None
        except JsonRpcException as exc:
            raise ToolError(f"The language server refused: {one_line(exc)}") from None
        return [TextContent(bounded([*lines, *self.lsp.take_notes()]) or "No results.")]

    async def _answer(self, params: dict[str, Any]) -> list[str]:
        operation = params["operation"]
        path = self.workspace.locate(params["path"])[0] if "path" in params else None
        if operation == "diagnostics":
            lines = await self._diagnostics(path)
        elif operation == "symbols" and path is None:
            lines = await self._workspace_symbols(params.get("symbol", ""))
        else:
            if path is None:
                path = await self._find(params.get("symbol"), operation)
            lines = await self._at(operation, path, params)
        return lines

    async def _server(self, path: Path) -> tuple[Connection, str]:
        connections = await self.lsp.connections(path)
        if not connections:
            notes = " ".join(self.lsp.take_notes())
            raise ToolError(f"No language server answers for {path.name}. {notes}".strip())
        text = await read_text(path, self.editor)
        if text is None:
            raise ToolError(f"Cannot read {self.workspace.display(path)} as text")
        for connection in connections:
            if path.as_uri() not in connection.open or connection.texts.get(path.as_uri()) != text:
                connection.sync(path, text)
        return connections[0], path.as_uri()

    async def _at(self, operation: str, path: Path, params: dict[str, Any]) -> list[str]:
        connection, uri = await self._server(path)
        document = types.TextDocumentIdentifier(uri=uri)
        if operation == "symbols":
            got = await connection.request(
                types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                types.DocumentSymbolParams(text_document=document),
            )
            return await self._places(symbols(got, uri))
        position = await self._position(connection, path, params)
        if operation == "hover":
            got = await connection.request(
                types.TEXT_DOCUMENT_HOVER,
                types.HoverParams(text_document=document, position=position),
            )
            return [hover_text(got) or "No hover information here."]
        if operation == "definition":
            got = await connection.request(
                types.TEXT_DOCUMENT_DEFINITION,
                types.DefinitionParams(text_document=document, position=position),
            )
        else:
            context = types.ReferenceContext(include_declaration=True)
            got = await connection.request(
                types.TEXT_DOCUMENT_REFERENCES,
                types.ReferenceParams(context=context, text_document=document, position=position),
            )
        return await self._places(locations(got)) or [f"No {operation} found."]

    async def _position(
        self, connection: Connection, path: Path, params: dict[str, Any]
    ) -> types.Position:
        if "line" in params and "character" in params:
            return types.Position(line=params["line"] - 1, character=params["character"] - 1)
        name = params.get("symbol")
        if not name:
            raise ToolError("Give line and character, or symbol")
        uri = path.as_uri()
        got = await connection.request(
            types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri)),
        )
        for place_uri, line, character, label in symbols(got, uri):
            if place_uri == uri and label.split(" ", 1)[-1] == name:
                return types.Position(line=line, character=character)
        raise ToolError(f"No symbol {name!r} in {self.workspace.display(path)}")

    async def _find(self, name: str | None, operation: str) -> Path:
        """The file that defines `name`, from the workspace's symbols."""
        if not name:
            raise ToolError(f"{operation} needs path (with line and character, or symbol)")
        places = await self._symbol_places(name)
        real = await self._inside([uri for uri, _, _, _ in places])
        for uri, _, _, label in places:
            if label.split(" ", 1)[-1] == name and uri in real:
                return real[uri]
        raise ToolError(f"No symbol {name!r} found in the workspace; give its path")

    async def _workspace_symbols(self, query: str) -> list[str]:
        return await self._places(await self._symbol_places(query)) or ["No symbols found."]

    async def _symbol_places(self, query: str) -> list[tuple[str, int, int, str]]:
        connections = self.lsp.running()
        if not connections:
            raise ToolError("No language server is running yet: give a path")
        places = []
        for connection in connections:
            got = await connection.request(
                types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=query)
            )
            places += symbols(got)
        real = await self._inside([uri for uri, _, _, _ in places])
        return [place for place in places if place[0] in real]

    async def _diagnostics(self, path: Path | None) -> list[str]:
        if path is not None:
            await self._server(path)
            wanted = {path.as_uri()}
            for connection in await self.lsp.connections(path):
                version = connection.versions[path.as_uri()]
                await connection.wait_diagnostics(path, version, None, self.lsp.wait)
        else:
            wanted = None
        found: list[tuple[str, Problem]] = []
        for connection in self.lsp.running():
            known = {u: d for u, (_, d) in connection.diagnostics.items()}
            published = {**connection.closed, **known}
            real = await self._inside([u for u in published if wanted is None or u in wanted])
            for uri, diagnostics in published.items():
                file = real.get(uri)
                if file is None:
                    continue
                shown = self.workspace.display(file)
                found += [(shown, problem(d, connection.spec.name)) for d in diagnostics]
        found.sort(key=lambda item: (item[0], item[1].line, item[1].column))
        lines = [p.line_text(shown) for shown, p in found[: MAX_SHOWN * 5]]
        return lines or ["No problems reported."]

    async def _inside(self, uris: list[str]) -> dict[str, Path]:
        """The real paths of the `uris` that lie in the workspace, judged in a thread."""
        return await asyncio.to_thread(inside, self.workspace, uris)

    async def _places(self, places: list[tuple[str, int, int, str]]) -> list[str]:
        return await asyncio.to_thread(place_lines, self.workspace, places)


def bounded(lines: list[str]) -> str:
    """The answer cut like a read's output (2000 lines / 50 KB), saying so; what a server
    said (a label, a hover, a file name) made text UTF-8 can hold."""
    kept, cut = keep_head([encodable(line) for line in lines])
    if cut is None:
        return "\n".join(kept)
    notice = f"[Output cut to the first {cut.output_lines} lines (50 KB limit). Narrow the query.]"
    return "\n".join([*kept, notice])
