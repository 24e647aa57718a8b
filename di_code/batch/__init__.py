"""`di-code batch`: many tasks over many repositories, isolated, resumable."""
