"""`python -m kenning` runs the CLI."""

from kenning.cli.main import app

app()
