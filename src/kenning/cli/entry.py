"""Console-script entry: `kenning hook …` takes a fast path that imports no CLI framework.

Harness hooks run on every prompt and tool step, so their process start matters; every other
command goes to the typer app in `cli.main`. Installed hooks run this file as a script
(`<python> -P …/kenning/cli/entry.py hook …`, hooks.install.hook_argv), which skips the imports of
pip's console script.
"""

from __future__ import annotations

import sys

HARNESS_HOOKS = {  # `kenning hook <harness> <event>`: the harness's adapter module (Claude Code: `kenning hook <event>`)
    "codex": "kenning.hooks.adapters.codex",
    "gemini": "kenning.hooks.adapters.gemini",
    "opencode": "kenning.hooks.adapters.opencode",
    "copilot": "kenning.hooks.adapters.copilot",
}


def _via_plugin() -> bool:
    """True for a hook the Claude Code plugin runs (hooks.plugin.VIA_ENV, read without importing it)."""
    import os

    return os.environ.get("KENNING_HOOK_VIA") == "plugin"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook" and not {"--help", "-h"} & set(sys.argv[2:]):
        if len(sys.argv) > 2 and sys.argv[2] in HARNESS_HOOKS:  # `kenning hook codex|gemini|opencode <event>`
            adapter = __import__(HARNESS_HOOKS[sys.argv[2]], fromlist=("main",))  # (importlib costs ~0.3 ms)
            sys.exit(adapter.main(sys.argv[3:]))
        from kenning.hooks.adapters.claude_code import main as hook_main  # (not the hooks.claude_code re-export: one module less)

        if _via_plugin():
            from kenning.hooks.plugin import plugin_defers  # reads the settings files: only for the plugin's hooks

            if plugin_defers():  # the Claude Code plugin's hook, while `kenning connect claude-code` hooks run too
                sys.exit(0)
        sys.exit(hook_main(sys.argv[2:]))
    from kenning.cli.main import main as cli_main

    cli_main()


if __name__ == "__main__":  # an installed hook: `<python> -P …/kenning/cli/entry.py hook <event>`
    main()
