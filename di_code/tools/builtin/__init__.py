"""The built-in tools and what they share: files, processes, output limits."""
