#!/usr/bin/env python3
"""The rule "all SQL lives in the backend" (docs/architecture.md), checked: prints every
string literal that reads as SQL, and every match on a backend family, in the files that must
hold none (src/runner/ and the run's replication files), and exits 1 when there is one.

    python3 scripts/sql-outside-backend.py [ROOT]

SQL: a string literal holding an SQL statement's keyword in capitals (SELECT, INSERT, UPDATE,
DELETE FROM, CREATE, DROP, ALTER, SHOW, SET, REPLACE INTO, VACUUM, ANALYZE, CHECKPOINT, FLUSH,
KILL, BEGIN, COMMIT) as a word. A family match: a `match` arm on `BackendKind::Postgres`,
`BackendKind::Mysql`, `Settings::Postgres` or `Settings::Mysql`, or the name `LinkKind`.
Test modules (from `#[cfg(test)]` to the end of the file) are not read. ALLOWED lists the
lines that may stay, as (file, text in the line), each with its reason.
"""

import pathlib
import re
import sys

# The files that must hold no SQL and no match on a family.
CHECKED = [
    "src/runner",
    "src/replication/heartbeat.rs",
    "src/replication/apply.rs",
    "src/replication/slot_watch.rs",
    "src/replication/stop.rs",
    "src/replication/wal_keep.rs",
    "src/replication/mod.rs",
]

# (file, text in the line): lines that may stay, and why. None today.
ALLOWED: list[tuple[str, str]] = []

SQL = re.compile(
    r'"[^"\n]*\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE|DROP|ALTER|SHOW|SET|REPLACE INTO|'
    r'VACUUM|ANALYZE|CHECKPOINT|FLUSH|KILL|BEGIN|COMMIT)\b[^"\n]*"'
)
FAMILY = re.compile(
    r"\b(BackendKind::(Postgres|Mysql)|Settings::(Postgres|Mysql))\b[^\n]*=>|\bLinkKind\b"
)


def files(root: pathlib.Path):
    for entry in CHECKED:
        path = root / entry
        if path.is_dir():
            yield from sorted(path.rglob("*.rs"))
        elif path.is_file():
            yield path


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
