"""One adapter per harness: its hook payloads and transcripts turned into kenning's events (issue 23)."""
