"""Diagnostics, analytics and timelines: what memory did, how healthy it is, and why."""
