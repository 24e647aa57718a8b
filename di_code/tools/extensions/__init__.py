"""Tools from outside: MCP servers and installed plugins."""
