"""api: the thin front doors -- the FastAPI app and the ``backbone`` CLI."""
