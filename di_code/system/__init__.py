"""What di-code needs from the operating system and the runtime, below every other layer:
child processes and their stop, signals, the safe file opener, private files, web addresses
and the HTTP clients that reach them, threads, and the abort signal a stop travels on.
Nothing here knows about models or tools."""
