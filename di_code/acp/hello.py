"""The answer to `initialize`, given before the ACP SDK is imported.

An editor starts `di-code acp` and waits for this answer before anything else. The SDK's
import builds hundreds of pydantic models (most of the process's start), and nothing in
this answer needs them: it is fixed data, what di-code offers, plus the protocol version the
editor asked for. So `stdio.py` answers `initialize` here, from plain JSON, and the SDK is
imported when the first request that needs it comes (tests/acp check this answer against
the official ACP v1 schema, as every message). What the editor offers (its files, its
terminals) is kept in `EditorOffers` for the sessions.
"""

from __future__ import annotations

import json
from typing import Any

from di_code import __version__
from di_code.config.key_variables import PRESET_KEYS

INITIALIZE = "initialize"
PROTOCOL_VERSION = 1
"""ACP v1, the version di-code speaks (the SDK's `acp.PROTOCOL_VERSION`)."""
LARGEST_VERSION = 65535
"""The schema's `ProtocolVersion` is a uint16."""
INVALID_PARAMS = -32602

KEY_METHODS = {f"{provider}-api-key": variable for provider, variable in PRESET_KEYS.items()}
"""The key variables di-code reads, each an auth method, so an editor can say what to set."""

AGENT = {
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
        "sessionCapabilities": {"list": {}, "delete": {}, "resume": {}, "close": {}, "fork": {}},
    },
    "agentInfo": {"name": "di-code", "title": "di-code", "version": __version__},
    "authMethods": [
        {
            "type": "env_var",
            "id": f"{provider}-api-key",
            "name": f"Use {variable}",
            "description": f"Set {variable} in the environment di-code is started with (or "
            "the key in di-code's config file) for the provider's models.",
            "vars": [{"name": variable, "label": f"{provider} API key", "secret": True}],
        }
        for provider, variable in PRESET_KEYS.items()
    ],
}
"""What di-code offers an editor, in the schema's names (InitializeResponse without its
`protocolVersion`)."""


class EditorOffers:
    """What the editor said it offers in its `initialize`: its files (read and write both)
    and its terminals. Read when the first session is made."""

    def __init__(self) -> None:
        self.files = False
        self.terminals = False


def answer_initialize(request: dict[str, Any], offers: EditorOffers) -> bytes:
    """The answer line to an `initialize` request; `offers` keeps what the editor offers.
    A capability of the wrong type reads as not offered, as the schema says
    (`x-deserialize-default-on-error`); a missing or wrong `protocolVersion` is refused.
    Whatever version the editor asks for, the answer is the one di-code speaks: ACP says an
    agent that does not speak the version asked answers with its latest, and v1 is its only."""
    params = request.get("params")
    version = _integer(params.get("protocolVersion") if isinstance(params, dict) else None)
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if version is None or not 0 <= version <= LARGEST_VERSION:
        problem = "protocolVersion: an integer from 0 to 65535 is required"
        reply["error"] = {"code": INVALID_PARAMS, "message": "Invalid params", "data": problem}
    else:
        assert isinstance(params, dict)
        capabilities = _object(params.get("clientCapabilities"))
        files = _object(capabilities.get("fs"))
        offers.files = files.get("readTextFile") is True and files.get("writeTextFile") is True
        offers.terminals = capabilities.get("terminal") is True
        reply["result"] = {"protocolVersion": PROTOCOL_VERSION, **AGENT}
    return json.dumps(reply, separators=(",", ":")).encode() + b"\n"


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _integer(value: Any) -> int | None:
    """`value` as the schema's `integer`, which is any number without a fraction (`1.0` is 1);
    None for anything else (a boolean too, though Python counts it an int)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value if type(value) is int else None
