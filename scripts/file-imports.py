#!/usr/bin/env python3
"""The import graph of one crate by file: which source file names an item of which other file.

Usage: scripts/file-imports.py CRATE_SRC_DIR      (e.g. crates/mcp-stack-server/src)

Prints every circle of files that import each other (directly or around a loop) and exits 1 if
there is one. An arrow A -> B is a path in A's code (`use` or inline, through `crate::`,
`super::` or `self::`) that resolves into the module of file B; a name the crate root re-exports
(`crate::Server`) counts as an arrow to the file that defines it. Comments, doc comments and
test code (`#[cfg(test)]` items to the end of the file, `tests.rs` files) are not read.

Why beside cargo-modules (scripts/check-acyclic.sh): cargo-modules counts the methods of an
`impl` block as part of the module of their type, wherever the block is written, so a type
whose methods sit on several floors (the server's dispatch above the extensions it calls) reads
as one circle. This graph is by where the code is written, as a reader meets it.
"""
import os
import re
import sys


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return tuple(rel)


def code_of(text):
    # Test code: from the first `#[cfg(test)]` on (test modules close the files here).
    cut = re.search(r"^\s*#\[cfg\(test\)\]", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def expand(path):
    """`crate::{a::X, b::{Y, Z}}` -> ["crate::a::X", "crate::b::Y", "crate::b::Z"]."""
    m = re.match(r"^(.*?)::\{(.*)\}$", path, re.S)
    if not m:
        return [path]
    head, body = m[1], m[2]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for p in (p.strip() for p in parts):
        if p:
            out += expand(head + "::" + p)
    return out


def main(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs") and n != "tests.rs":
                p = os.path.join(root, n)
                files[module_of(src, p)] = p
    codes = {m: code_of(open(p, encoding="utf-8").read()) for m, p in files.items()}

    # Names the crate root re-exports: `pub use a::b::{X, Y};` -> X -> (a, b).
    reexport = {}
    for stmt in re.findall(r"pub use\s+([^;]+);", codes.get((), "")):
        for full in expand(re.sub(r"\s+", "", stmt)):
            segs = full.split("::")
            if segs[0] in files or (segs[0],) in files:
                reexport[segs[-1].split(" as ")[-1]] = tuple(segs[:-1])

    def resolve(here, segs):
        if segs[0] == "crate":
            base, rest = (), segs[1:]
        elif segs[0] in ("super", "self"):
            base = here
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            rest = segs
        else:
            return None
        mod = base
        for s in rest:
            if mod + (s,) in files:
                mod = mod + (s,)
            else:
                if mod == () and s in reexport:
                    return reexport[s]
                break
        return mod

    graph = {m: set() for m in files}
    for here, code in codes.items():
        paths = re.findall(r"\buse\s+((?:crate|super|self)::[^;]+);", code)
        paths += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", code)
        for p in paths:
            for full in expand(re.sub(r"\s+", "", p)):
                target = resolve(here, full.split("::"))
                if target is not None and target != here and target in files:
                    graph[here].add(target)

    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    name = lambda m: files[m]
    for part in found:
        inside = set(part)
        print("  circle of %d files:" % len(part))
        for v in part:
            print("    %s -> %s" % (name(v), ", ".join(name(w) for w in sorted(graph[v]) if w in inside)))
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
