"""di_code.session layer."""
