"""`kenning` imports a command's module only when that command runs (cli/main.py's COMMANDS table).

The table keeps each command's module and one-line help so `kenning --help` lists them all without
importing any; these tests hold it to what the modules really register, so it cannot drift.
"""

from __future__ import annotations

import inspect
import json
import subprocess

import click
import typer.main
from click.testing import CliRunner

from kenning.cli import main as cli_main
from tests.cli.test_cli_local_fast import run_local, runner

KENNING_MODULES = runner("sorted(m for m in sys.modules if m.startswith('kenning'))")


def run(home, port: int, *args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`kenning ARGS` without a daemon, and the kenning modules it imported."""
    result, modules = run_local(home, port, *args, script=KENNING_MODULES)
    return result, set(modules or ())


def first_paragraph(command: click.Command) -> str:
    """What a group's help lists for a command (typer shows the first paragraph of its help)."""
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].strip()


def loaded_group() -> cli_main.LazyGroup:
    group = typer.main.get_command(cli_main.app)
    for name in cli_main.COMMANDS:
        group.load(name)
    return group


def test_the_table_names_every_registered_command_with_its_help():
    modules = {module for module, _ in cli_main.COMMANDS.values()} - {"main"}
    registered = {}
    for module in sorted(modules):
        for name, command in cli_main.module_commands(module).items():
            assert name not in registered, f"{name} is registered by both {registered[name][0]} and {module}"
            registered[name] = (module, first_paragraph(command))
    group = typer.main.get_command(cli_main.app)
    eager = {name: ("main", first_paragraph(command)) for name, command in group.commands.items()
             if not isinstance(command, cli_main.Unloaded)}
    assert set(eager) == {"version"}  # everything else is loaded at need
    assert {**registered, **eager} == cli_main.COMMANDS


def test_help_lists_the_same_commands_as_the_loaded_app_without_importing_them():
    lazy = CliRunner().invoke(typer.main.get_command(cli_main.app), ["--help"], prog_name="kenning")
    loaded = loaded_group()
    assert not [n for n, c in loaded.commands.items() if isinstance(c, cli_main.Unloaded)]
    full = CliRunner().invoke(loaded, ["--help"], prog_name="kenning")
    assert lazy.exit_code == full.exit_code == 0
    assert lazy.output == full.output
    for name in cli_main.COMMANDS:
        assert f" {name} " in full.output


def test_a_loaded_command_keeps_its_options_and_sub_commands():
    group = loaded_group()
    assert {"start", "stop", "status"} <= set(group.commands["daemon"].commands)
    assert "--limit" in {opt for p in group.commands["list"].params for opt in p.opts}


def test_help_imports_no_command_module_and_offline_reads_never_build_the_service(tmp_path, unused_port):
    home = tmp_path / "home"
    result, modules = run(home, unused_port, "--help")
    assert result.returncode == 0, result.stderr
    assert all(f" {name} " in result.stdout for name in cli_main.COMMANDS)
    command_modules = {f"kenning.cli.{m}" for m, _ in cli_main.COMMANDS.values()} - {"kenning.cli.main"}
    assert not modules & command_modules, f"`kenning --help` imported {sorted(modules & command_modules)}"
    assert "kenning.core.config" not in modules

    stored, _ = run(home, unused_port, "remember", "Releases are tagged from main", "--json")
    assert stored.returncode == 0, stored.stderr
    memory_id = json.loads(stored.stdout)["id"]
    for args in (["list"], ["show", memory_id], ["stats"], ["sessions", "list"],
                 ["export", "--out", str(tmp_path / "out.json")], ["forget", memory_id], ["doctor"]):
        result, modules = run(home, unused_port, *args)
        assert result.returncode in (0, 2), (args, result.stderr)  # doctor: 2 = a problem found
        assert "kenning.service" not in modules, f"`kenning {' '.join(args)}` built the whole service"
        assert "kenning.cli.code" not in modules
    listed, _ = run(home, unused_port, "list", "--deleted", "--json")
    assert [(m["id"], m["is_deleted"]) for m in json.loads(listed.stdout)["items"]] == [(memory_id, True)]
