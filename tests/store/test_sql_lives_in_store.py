"""Every SQL statement of the project lives in ``rredcot_viz/store/``, behind named queries.

The check reads the source (no imports): any string literal, f-strings included, that starts with an SQL
keyword outside the store is a statement that belongs in a store module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("rredcot_viz", "app.py")  # the pages live in rredcot_viz/app/screens/
STORE = Path("rredcot_viz", "store")
SQL_KEYWORDS = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "DROP ", "ALTER ", "COPY ", "WITH ")


def sql_literals(path: Path) -> list[str]:
    """``file:line: text`` for each string literal in ``path`` that starts with an SQL keyword."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path}:{node.lineno}: {node.value.strip()[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lstrip().startswith(SQL_KEYWORDS)
    ]


def sql_outside_store(root: Path = ROOT) -> list[str]:
    """The SQL literals of the app and library under ``root``, the store's own excepted."""
    files: list[Path] = []
    for name in SCANNED:
        path = root / name
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else [])
    return [hit for path in files if root / STORE not in path.parents for hit in sql_literals(path)]


def test_no_sql_outside_the_store():
    hits = sql_outside_store()
    assert not hits, "SQL outside rredcot_viz/store/; add a named query there instead:\n" + "\n".join(hits)


def test_the_scan_covers_the_app():
    assert (
        (ROOT / "app.py").exists() and (ROOT / "rredcot_viz" / "app" / "screens").is_dir() and (ROOT / STORE).is_dir()
    )


def test_the_checker_finds_sql_literals(tmp_path):
    source = tmp_path / "page.py"
    source.write_text(
        "def runs(store, kind):\n"
        '    help_text = "a store table or a SELECT query"  # prose, not a statement\n'
        '    store.run_sql("SELECT run_id FROM runs")\n'
        '    store.run_sql(f"""\n        DELETE FROM runs WHERE kind = {kind!r}""")\n'
    )
    hits = sql_literals(source)
    assert len(hits) == 2
    assert hits[0].startswith(f"{source}:3: 'SELECT run_id") and "DELETE FROM runs" in hits[1]


def test_the_checker_scans_everything_but_the_store(tmp_path):
    (tmp_path / "rredcot_viz" / "store").mkdir(parents=True)
    (tmp_path / "rredcot_viz" / "app" / "screens").mkdir(parents=True)
    (tmp_path / "rredcot_viz" / "store" / "runs.py").write_text('SQL = "SELECT * FROM runs"\n')
    page = tmp_path / "rredcot_viz" / "app" / "screens" / "train.py"
    page.write_text('SQL = "INSERT INTO runs VALUES (1)"\n')
    (tmp_path / "app.py").write_text('SQL = "UPDATE runs SET status = 1"\n')
    hits = sql_outside_store(tmp_path)
    assert [hit.split(":")[0] for hit in hits] == [str(page), str(tmp_path / "app.py")]
