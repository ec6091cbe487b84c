"""One module per CLI command, each with ``run(...) -> int`` (the exit code); no typer here."""
