"""`IN (?, ...)` lists on PostgreSQL: one array parameter each (store.pg.translate.in_lists), so a
statement's text does not depend on how many values it lists, with the rows SQLite gives."""

from __future__ import annotations

import pytest

from kenning.store.db import Database
from kenning.store.pg.db import PostgresDatabase, bind
from kenning.store.pg.translate import in_lists, translate

SCHEMA = "CREATE TABLE items(id TEXT PRIMARY KEY, n INTEGER, tag TEXT)"
ROWS = [(f"m{i}", i, None if i % 7 == 0 else f"t{i % 3}") for i in range(800)]


def test_each_list_is_found_past_other_placeholders_and_literals():
    sql = ("SELECT id FROM items WHERE tag = ? AND note <> 'in (?, ?)' AND id IN (?, ?, ?)"
           " AND n NOT IN (?,?) AND id IN (SELECT id FROM other WHERE k = ?) AND tag IS ?")
    assert in_lists(sql) == ((1, 3), (4, 2))
    text, values = bind(sql, ["a", "x", "y", "z", 1, 2, "k", None])
    assert values == ("a", ["x", "y", "z"], [1, 2], "k", None)
    assert "id = ANY(%s)" in text and "n <> ALL(%s)" in text and "'in (?, ?)'" in text
    assert "IN (SELECT id FROM other WHERE k = %s)" in text and "IS NOT DISTINCT FROM %s" in text
    assert in_lists("CREATE TABLE t(a TEXT CHECK (a IN ('x', 'y')))") == ()


def test_the_statement_is_the_same_text_for_any_number_of_values():
    def select(n: int) -> str:
        return f"SELECT id FROM items WHERE id IN ({','.join('?' * n)})"

    assert translate(select(3)) == translate(select(600)) == "SELECT id FROM items WHERE id = ANY(%s)"


@pytest.fixture
def both(tmp_path, pg_url):
    sqlite, postgres = Database(tmp_path / "items.db"), PostgresDatabase(pg_url)
    for db in (sqlite, postgres):
        with db.with_write_tx() as conn:
            conn.execute(SCHEMA)
            for row in ROWS:
                conn.execute("INSERT INTO items(id, n, tag) VALUES (?, ?, ?)", row)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


@pytest.mark.parametrize("sql, listed, after", [
    ("SELECT id FROM items WHERE id IN ({marks}) ORDER BY id", [f"m{i}" for i in range(0, 800, 3)] + ["absent"], []),
    ("SELECT id FROM items WHERE n IN ({marks}) AND tag IS NOT NULL ORDER BY id", list(range(1, 700, 2)), []),
    ("SELECT id FROM items WHERE tag NOT IN ({marks}) ORDER BY id", ["t1"], []),
    ("SELECT id FROM items WHERE n NOT IN ({marks}) ORDER BY id", [*range(5, 800), None], []),  # a NULL: no row
    ("SELECT COUNT(*) FROM items WHERE tag IN ({marks}) OR n < ?", ["t0"], [3]),
])
def test_postgres_answers_as_sqlite_does(both, sql, listed, after):
    sqlite, postgres = both
    statement, values = sql.format(marks=",".join("?" * len(listed))), [*listed, *after]
    expected = [tuple(r) for r in sqlite.reader().execute(statement, values).fetchall()]
    assert expected or None in listed
    assert [tuple(r) for r in postgres.reader().execute(statement, values).fetchall()] == expected
    with postgres.with_write_tx() as conn:  # inside a write transaction (a savepoint each) too
        assert [tuple(r) for r in conn.execute(statement, values).fetchall()] == expected
