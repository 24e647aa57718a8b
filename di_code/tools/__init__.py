"""di_code.tools layer."""
