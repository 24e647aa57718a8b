"""Language servers in the loop: diagnostics after each write and edit, and the lsp tool.

`servers` says which servers exist (config and presets, no imports); `connection` talks to
one running server through pygls, imported only when a server starts; `door` starts them
per language and workspace root, restarts them, and hands out what they say.
"""
