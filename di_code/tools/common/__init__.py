"""What every tool stands on, built-in or not (lsp, MCP): the tool base, the one error a tool
raises, and the workspace a model's paths are confined to. It imports no other part of tools."""
