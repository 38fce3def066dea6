"""The real agent CLIs and their scripted local model servers, shared by the benches and the tests.

bench/real_harness.py, bench/observer_real_cli.py and bench/durability.py drive them, and so do
tests/harness/ (the real-binary tests), tests/durability/ and tests/security/: one copy, outside
tests/, so a bench never imports the test suite. `clis` installs the pinned CLIs from npm; the
`*_server` modules answer their model requests (Anthropic Messages, OpenAI Responses and chat
completions, Gemini); `claude_runner` / `cli_runners` run a CLI against one; `kenning_setup`
connects kenning to a harness; `claude_format` writes Claude Code transcripts and payloads.
Test-only assertions stay in tests/harness/kenning_checks.py.
"""
