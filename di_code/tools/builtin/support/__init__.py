"""What the built-in tools share and are built from: the tool base and its errors, lazy loading,
the workspace's confinement, file writing and locking, text matching and diffs, output limits
and spill files, processes, and the search engine behind grep and find."""
