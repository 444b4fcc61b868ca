#!/usr/bin/env python3
"""Measure the counts docs/architecture.md states, at the working tree, and print them as
ready-to-paste lines: `python3 scripts/architecture-counts.py [SRC]` (default src).

It reads the Rust files as text (comments and strings blanked, as scripts/long-functions.py
does) and prints:
- files and lines per room (a room: a folder of src/ or a top-level file), and in all;
- the import arrows between rooms, outside test modules (a file of room A naming `crate::B`, `use crate::{B, ..}`,
  or writing through `say!`/`say_inline!`, which expand to `crate::console`), the circles
  between rooms, and the floors (the longest chain of arrows down to the ground floor);
- inside each room, the arrows between its files (`super::x`, `crate::room::x`) and any circle;
- the files over 600 and over 800 lines with no `#[cfg(test)]` module;
- the functions over 80 lines (scripts/long-functions.py);
- the `#[allow(clippy::too_many_arguments)]` left;
- SQL in src/runner/: string literals outside test modules holding an SQL statement's
  keyword, and match arms on a backend's kind or protocol.
"""
import importlib.util
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("long_functions", os.path.join(HERE, "long-functions.py"))
lf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lf)

SRC = sys.argv[1] if len(sys.argv) > 1 else "src"


def rust_files(root):
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".rs"):
                yield os.path.join(folder, name)


def room_of(path):
    """`backend` for src/backend/…, `console` for src/console.rs."""
    rel = os.path.relpath(path, SRC).split(os.sep)
    return rel[0] if len(rel) > 1 else rel[0][:-3]


def file_key(path):
    """`backend/postgres/wire` for src/backend/postgres/wire.rs; mod.rs is its folder."""
    rel = os.path.relpath(path, SRC)[:-3]
    return rel[: -len("/mod")] if rel.endswith("/mod") else rel


def non_test(text):
    """The text before the file's `#[cfg(test)]` module (its tests are not counted)."""
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+", text)
    return text[: m.start()] if m else text


def crate_names(code):
    """Every `crate::NAME…` path a file's code writes (groups `crate::{a, b::c}` opened)."""
    names = []
    for m in re.finditer(r"(?<![\w$])crate::(\{|[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)", code):
        if m.group(1) != "{":
            names.append(m.group(1))
            continue
        depth, i, start, items = 1, m.end(), m.end(), []
        while depth and i < len(code):
            c = code[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if (c == "," and depth == 1) or depth == 0:
                items.append(code[start:i].strip())
                start = i + 1
            i += 1
        names.extend(re.match(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*", it).group(0) for it in items if re.match(r"[A-Za-z_]", it))
    return names


def main():
    files = list(rust_files(SRC))
    rooms = sorted({room_of(p) for p in files})
    texts = {p: open(p, encoding="utf-8").read() for p in files}
    blanked = {p: lf.blank(t) for p, t in texts.items()}
    lines = {p: t.count("\n") for p, t in texts.items()}

    print(f"## Counts at {os.popen('git rev-parse --short HEAD 2>/dev/null').read().strip() or '?'}"
          f" (python3 scripts/architecture-counts.py {SRC})\n")
    per_room = defaultdict(lambda: [0, 0])
    for p in files:
        per_room[room_of(p)][0] += 1
        per_room[room_of(p)][1] += lines[p]
    print(f"- {len(files)} files, {sum(lines.values()):,} lines in {SRC}/, in {len(rooms)} rooms "
          "(folders and top-level files):")
    for r in sorted(per_room, key=lambda r: -per_room[r][1]):
        f, n = per_room[r]
        print(f"  - `{r}`: {f} file{'s' if f > 1 else ''}, {n:,} lines")

    # Arrows between rooms and between the files of a room.
    arrows = defaultdict(set)
    inner = defaultdict(set)
    modules = {file_key(p) for p in files}
    for p in files:
        code = non_test(blanked[p])
        a = room_of(p)
        names = crate_names(code)
        if re.search(r"\bsay(_inline)?!", code):
            names.append("console::say_line")
        for n in names:
            b = n.split("::")[0]
            if b in per_room and b != a:
                arrows[a].add(b)
            elif b == a:
                parts = n.split("::")
                for k in range(len(parts), 0, -1):
                    if "/".join(parts[:k]) in modules:
                        inner[file_key(p)].add("/".join(parts[:k]))
                        break
        # `super::x`: the sibling x of a file (of a mod.rs: of its folder).
        here = file_key(p)
        parent = os.path.dirname(here)
        for m in re.finditer(r"(?<![\w:])super::([a-z_]\w*)", code):
            target = f"{parent}/{m.group(1)}" if parent else m.group(1)
            if target in modules and target != here:
                inner[here].add(target)
    bench = os.path.join(os.path.dirname(os.path.abspath(SRC)), "bench")
    bench_files = [p for p in rust_files(bench)] if os.path.isdir(bench) else []
    for p in bench_files:
        code = lf.blank(open(p, encoding="utf-8").read())
        for m in re.finditer(r"(?<![\w$])ibench::([a-z_]\w*)", code):
            if m.group(1) in per_room:
                arrows["bench"].add(m.group(1))
    # main.rs names the library as `ibench::` too.
    for p in files:
        for m in re.finditer(r"(?<![\w$])ibench::([a-z_]\w*)", non_test(blanked[p])):
            if m.group(1) in per_room and m.group(1) != room_of(p):
                arrows[room_of(p)].add(m.group(1))
    if bench_files:
        rooms.append("bench")
    n_arrows = sum(len(v) for v in arrows.values())

    def circles(graph, nodes):
        """Strongly connected components of more than one node (Tarjan)."""
        index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(graph.get(v, ())):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

        sys.setrecursionlimit(10000)
        for v in sorted(nodes):
            if v not in index:
                visit(v)
        return out

    room_circles = circles(arrows, rooms)
    floor = {}

    def height(v, seen=()):
        if v in floor:
            return floor[v]
        if v in seen:
            return 0
        floor[v] = 1 + max((height(w, seen + (v,)) for w in arrows.get(v, ())), default=-1)
        return floor[v]

    for r in rooms:
        height(r)
    floors = max(floor.values()) + 1
    print(f"\n- Import arrows between the {len(rooms)} rooms (src/'s {len(rooms) - bool(bench_files)}"
          f"{' and bench/, which names the crate as `ibench::`' if bench_files else ''}): {n_arrows}; circles between rooms: "
          f"{len(room_circles)}{' ' + str(room_circles) if room_circles else ''}; {floors} floors "
          "(a room's floor: the longest chain of arrows below it)")
    for f in range(floors - 1, -1, -1):
        print(f"  - floor {f}: {', '.join(sorted(r for r in rooms if floor[r] == f))}")
    print("- What each room imports (arrows out, outside test modules):")
    for r in sorted(rooms, key=lambda r: (-floor[r], r)):
        print(f"  - `{r}` (floor {floor[r]}): {', '.join(sorted(arrows.get(r, ()))) or 'nothing of the crate'}")
    file_circles = circles(inner, modules)
    print(f"- Arrows between the files of a room: {sum(len(v) for v in inner.values())}; "
          f"circles between the files of a room: {len(file_circles)}"
          + (": " + "; ".join(" ↔ ".join(c) for c in file_circles) if file_circles else ""))

    for limit in (600, 800):
        big = sorted((lines[p], p) for p in files
                     if lines[p] > limit and "#[cfg(test)]" not in texts[p])
        print(f"- Files over {limit} lines without a `#[cfg(test)]` module: {len(big)}"
              + ("" if not big else ": " + ", ".join(f"`{os.path.relpath(p, SRC)}` ({n})" for n, p in reversed(big))))
    longest = sorted((lines[p], p) for p in files)[-3:]
    print("- Largest files: " + ", ".join(f"`{os.path.relpath(p, SRC)}` ({n:,})" for n, p in reversed(longest)))

    long = lf.long_functions(SRC, 80)
    print(f"- Functions over 80 lines (python3 scripts/long-functions.py {SRC} 80): {len(long)}"
          + ("" if not long else ": " + ", ".join(f"`{os.path.relpath(p, SRC)}:{l}` {name} ({n})" for n, p, l, name in long)))
    tma = [(p, texts[p].count("too_many_arguments")) for p in files if "too_many_arguments" in texts[p]]
    print(f"- `#[allow(clippy::too_many_arguments)]`: {sum(n for _, n in tma)}"
          + ("" if not tma else " (" + ", ".join(f"`{os.path.relpath(p, SRC)}` {n}" for p, n in tma) + ")"))

    sql = re.compile(r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE|DROP|ALTER|SHOW|SET GLOBAL|SET SESSION|START SLAVE|STOP SLAVE|FROM|WHERE)\b")
    # A match arm on which backend or protocol: `LinkKind::Postgres =>`, `BackendKind::Mysql =>`,
    # also in a tuple pattern (`(Some(l), LinkKind::Postgres)` in an `if let`).
    arms = re.compile(r"\b\w*(Protocol|Kind|Dbms)::(Postgres|Mysql|MySql|Mariadb|Sqlite)\b[^\n]*(=>|\)\s*=)")
    in_runner = [p for p in files if room_of(p) == "runner"]
    sql_hits, arm_hits = [], []
    for p in in_runner:
        code = non_test(texts[p])
        literals = re.findall(r'r?#*"(?:[^"\\]|\\.)*"', code)
        n = sum(1 for s in literals if sql.search(s))
        if n:
            sql_hits.append((n, p))
        a = len(arms.findall(non_test(blanked[p])))
        if a:
            arm_hits.append((a, p))
    fmt = lambda hits: ", ".join(f"`{os.path.relpath(p, SRC)}` {n}" for n, p in sorted(hits, reverse=True))
    print(f"- SQL in `runner/` (string literals outside tests holding an SQL keyword): "
          f"{sum(n for n, _ in sql_hits)}" + (f" ({fmt(sql_hits)})" if sql_hits else ""))
    print(f"- Match arms on which backend or protocol (`LinkKind::Postgres =>`) in `runner/` (outside tests): "
          f"{sum(n for n, _ in arm_hits)}" + (f" ({fmt(arm_hits)})" if arm_hits else ""))
    tl = [p for p in in_runner if "thread_local!" in texts[p]]
    print(f"- `thread_local!` in `runner/`: {len(tl)}" + (f" ({', '.join(os.path.relpath(p, SRC) for p in tl)})" if tl else ""))


if __name__ == "__main__":
    main()
