"""What the built-in tools are built from: lazy loading, bash's policy, file writing and
locking, text matching and diffs, output limits and spill files, processes and background jobs,
and the search engine behind grep and find."""
