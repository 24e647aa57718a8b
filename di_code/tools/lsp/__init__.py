"""Language servers in the loop: diagnostics after each write and edit, and the lsp tool.

`servers` says which servers exist (config and presets, no imports) and what each does in
an untrusted project; `spawn` starts one through the launcher, in its sandbox;
`connection` talks to one running server through pygls, imported only when a server starts;
`manager` starts them per language and workspace root, restarts them, and hands out what they
say; `locations` confines the places they name to the workspace by real path.
"""
