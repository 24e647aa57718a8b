"""Test helpers shared by several test packages (the loopback model server)."""
