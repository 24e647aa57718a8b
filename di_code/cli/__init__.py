"""di_code.cli layer."""
