"""di_code.config layer."""
