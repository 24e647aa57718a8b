"""di_code.ui layer."""
