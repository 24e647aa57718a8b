"""A plugin tool that di-code finds through an entry point, for the extension tests of `run` and
`chat`."""

PLUGIN = """
from di_code.ai.types import TextContent


class Shout:
    name = "shout"
    description = "Upper-case a text."
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    async def execute(self, tool_call_id, params, signal=None):
        return [TextContent(params["text"].upper() + "!")]
"""
