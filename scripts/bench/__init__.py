"""di-code's benchmark harness (issue 8): run with `.venv/bin/python -m scripts.bench`."""
