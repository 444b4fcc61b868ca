#!/usr/bin/env python3
"""The rule "all SQL lives in the backend" (docs/architecture.md), checked: prints every
string literal that reads as SQL, and every match on a backend family, in the files that must
hold none (every file of src/ outside src/backend/ and the few EXEMPT below), and exits 1 when
there is one.

    python3 scripts/sql-outside-backend.py [ROOT]

SQL: a string literal holding an SQL statement's keyword in capitals (SELECT, INSERT, UPDATE,
DELETE FROM, CREATE, DROP, ALTER, SHOW, SET, REPLACE INTO, VACUUM, ANALYZE, CHECKPOINT, FLUSH,
KILL, BEGIN, COMMIT) as a word. A family match: a `match` arm on `BackendKind::Postgres`,
`BackendKind::Mysql`, `Settings::Postgres` or `Settings::Mysql`, or the name `LinkKind`.
Test modules (from `#[cfg(test)]` to the end of the file) are not read. ALLOWED lists the
lines that may stay, as (file, text in the line), each with its reason; EXEMPT the paths not
read, each with its reason.
"""

import pathlib
import re
import sys

# The files that must hold no SQL and no match on a family: all of src/ but EXEMPT.
CHECKED = ["src"]

# Paths under src/ not read, and why.
EXEMPT: dict[str, str] = {
    # The backend: where the SQL lives.
    "src/backend": "the backend",
    # Starts private servers: MariaDB's database is made through the server's own `mariadb`
    # client binary on the socket, before any ibench connection can log in.
    "src/server/mariadb.rs": "server start",
    # Defines BackendKind: the type's own scheme table and the flavour a version names.
    "src/results/target.rs": "BackendKind's own file",
}

# (file, text in the line): lines that may stay, and why.
ALLOWED: list[tuple[str, str]] = [
    # An error text naming the statement that failed.
    ("src/results/statistics.rs", '"SHOW GLOBAL STATUS failed'),
    ("src/results/statistics.rs", '"SHOW ENGINE INNODB STATUS has no history list length"'),
    # A label in the report's sentence ("VACUUM ran 2 time(s)"), not a statement.
    ("src/report/shift.rs", '"vacuum_count", "last_vacuum", "VACUUM"'),
]

SQL = re.compile(
    r'"[^"\n]*\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE|DROP|ALTER|SHOW|SET|REPLACE INTO|'
    r'VACUUM|ANALYZE|CHECKPOINT|FLUSH|KILL|BEGIN|COMMIT)\b[^"\n]*"'
)
FAMILY = re.compile(
    r"\b(BackendKind::(Postgres|Mysql)|Settings::(Postgres|Mysql))\b[^\n]*=>|\bLinkKind\b"
)


def exempt(rel: str) -> bool:
    return any(rel == e or rel.startswith(e + "/") for e in EXEMPT)


def files(root: pathlib.Path):
    for entry in CHECKED:
        path = root / entry
        found = sorted(path.rglob("*.rs")) if path.is_dir() else [path] if path.is_file() else []
        yield from (f for f in found if not exempt(f.relative_to(root).as_posix()))


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    found = 0
    for path in files(root):
        rel = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip().startswith("#[cfg(test)]"):
                break
            if line.strip().startswith("//"):
                continue
            if not (SQL.search(line) or FAMILY.search(line)):
                continue
            if any(rel == f and text in line for f, text in ALLOWED):
                continue
            print(f"{rel}:{number}: {line.strip()}")
            found += 1
    if found:
        print(
            f"{found} line(s) of SQL or of a match on a backend family outside src/backend/: "
            "move them behind the Driver/Conn or ReplicaLink seam (docs/architecture.md)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
