#!/usr/bin/env python3
"""List the Rust functions longer than N lines (default 80) under a folder (default src),
longest first, counted from the `fn` line to its closing brace, as docs/architecture.md
counts them: `python3 scripts/long-functions.py src 80`.

It reads the files as text: strings, characters and comments are blanked before the braces
are matched, so a brace inside them does not count."""
import os
import re
import sys


def blank(src):
    """`src` with its comments, strings and character literals blanked, newlines kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i) + 2
        elif (m := re.match(r'b?r(#*)"', src[i : i + 10])) and (
            i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")
        ):
            end = '"' + m.group(1)
            j = src.find(end, i + len(m.group(0))) + len(end)
        elif src[i] == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j += 1
        elif src[i] == "'" and (m := re.match(r"'(\\.[^']*|[^\\'])'", src[i : i + 12])):
            j = i + len(m.group(0))
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", src[i:j]))
        i = j
    return "".join(out)


def long_functions(root, limit):
    """(lines, path, line, name) of each function longer than `limit` lines under `root`."""
    found = []
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                lines = blank(f.read()).split("\n")
            open_blocks, pending = [], None
            for number, line in enumerate(lines, 1):
                for m in re.finditer(r"\bfn\s+(\w+)|[{};]", line):
                    token = m.group(0)
                    if m.group(1):
                        pending = (m.group(1), number)
                    elif token == "{":
                        open_blocks.append(pending)
                        pending = None
                    elif token == "}":
                        fn = open_blocks.pop() if open_blocks else None
                        if fn and number - fn[1] + 1 > limit:
                            found.append((number - fn[1] + 1, path, fn[1], fn[0]))
                    else:
                        pending = None
    return sorted(found, reverse=True)


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "src"
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    for lines, path, line, name in long_functions(root, limit):
        print(f"{lines} {path}:{line} {name}")
