"""`python -m kenning.hooks <event>`: the fastest way to run a harness hook (no CLI framework)."""

import sys

from kenning.hooks.claude_code import main

sys.exit(main())
