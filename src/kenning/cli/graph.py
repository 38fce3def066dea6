"""`kenning graph …`: look at the knowledge graph (entities, relations, aspects, memories)."""

from __future__ import annotations

from typing import Optional

import typer
from rich.tree import Tree

from kenning.cli.context import console, print_json
from kenning.cli.memory import backend
from kenning.cli.tables import Col, print_table

graph_app = typer.Typer(no_args_is_help=True, help="Knowledge graph: entities and how they relate.")


@graph_app.command("show")
def show(
    name: str = typer.Argument(..., help="Entity name (any casing) or id."),
    memories: int = typer.Option(10, "--memories", "-m", min=0, max=500, help="Mentioning memories to list."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one entity: relations, aspects with attributes/constraints, and memories."""
    with backend() as b:
        data = b.entity(name, memories=memories)
    if as_json:
        print_json(data)
        return
    tree = Tree(f"[bold]{data['name']}[/bold] ({data['entity_type']}, {data['mentions']} mentions) {data['id']}")
    rel = tree.add("relations")
    for r in data["relations"]:
        arrow = "→" if r["direction"] == "out" else "←"
        rel.add(f"{arrow} {r['type']} {arrow} [bold]{r['other_name']}[/bold]  conf {r['confidence']:.2f} ×{r['mentions']}")
    asp = tree.add("aspects")
    for a in data["aspects"]:
        node = asp.add(f"{a['name']} (weight {a['weight']:.2f})")
        for attr in a["attributes"]:
            marker = "[red]constraint[/red]" if attr["kind"] == "constraint" else "attribute"
            node.add(f"{marker}: {attr['content'][:120]}")
    mem = tree.add("memories")
    for m in data["memories"]:
        mem.add(f"{m['id']} [{m['type']}] {m['content'][:100]}")
    console.print(tree)


@graph_app.command("list")
def list_entities(
    query: Optional[str] = typer.Argument(None, help="Name substring."),
    type: Optional[str] = typer.Option(None, "--type", "-t", help="Entity type."),
    limit: int = typer.Option(30, "--limit", "-n", min=1, max=1000),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List entities, most mentioned first."""
    with backend() as b:
        data = b.entities(query=query or None, entity_type=type or None, limit=limit)
    if as_json:
        print_json(data)
        return
    print_table(console, [Col("id", "id", "id"), Col("mentions", "mentions", "num"),
                          Col("type", "entity_type", max_width=12), Col("name", "name", max_width=40)],
                data["items"], title=f"{data['total']} entities")


def register(app: typer.Typer) -> None:
    app.add_typer(graph_app, name="graph")
