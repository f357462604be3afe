#!/usr/bin/env python3
"""Circles in a crate's import graph, by file or by cargo-modules' module graph.

Usage: scripts/import_graph.py files CRATE_SRC_DIR   (e.g. crates/mcp-stack-server/src)
       cargo modules dependencies ... | scripts/import_graph.py modules

Prints every circle (nodes that import each other, directly or around a loop) and exits 1 if
there is one.

`files`: the graph by file. An arrow A -> B is a path in A's code (`use` or inline, through `crate::`,
`super::` or `self::`) that resolves into the module of file B; a name the crate root re-exports
(`crate::Server`) counts as an arrow to the file that defines it. Comments, doc comments and
test code (`#[cfg(test)]` items to the end of the file, `tests.rs` files) are not read.

Why beside cargo-modules (scripts/check-acyclic.sh): cargo-modules counts the methods of an
`impl` block as part of the module of their type, wherever the block is written, so a type
whose methods sit on several floors (the server's dispatch above the extensions it calls) reads
as one circle. This graph is by where the code is written, as a reader meets it.

`modules`: cargo-modules' "uses" edges between modules (DOT on stdin). An edge between a module
and one of its own ancestors does not count: a folder's `mod.rs` that re-exports its files, and
a file that names its parent's items through `super::`, are one folder, not a loop.
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


def files_graph(src):
    """The graph by file: module path -> the module paths it imports, and module -> file."""
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
    return graph, files


def modules_graph(dot):
    """cargo-modules' module graph (DOT), ancestor edges left out."""
    graph = {}
    for line in dot.splitlines():
        m = re.match(r'\s*"([^"]+)" -> "([^"]+)" \[label="uses"', line)
        if not m:
            continue
        a, b = m[1], m[2]
        graph.setdefault(a, set())
        graph.setdefault(b, set())
        if not (a.startswith(b + "::") or b.startswith(a + "::")):
            graph[a].add(b)
    return graph


def circles(graph):
    """Every strongly connected component of more than one node (Tarjan)."""
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
    return found


def report(graph, name, what):
    found = circles(graph)
    for part in found:
        inside = set(part)
        print("  circle of %d %s:" % (len(part), what))
        for v in part:
            print("    %s -> %s" % (name(v), ", ".join(name(w) for w in sorted(graph[v]) if w in inside)))
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "files":
        graph, files = files_graph(sys.argv[2])
        sys.exit(report(graph, lambda m: files[m], "files"))
    if len(sys.argv) == 2 and sys.argv[1] == "modules":
        sys.exit(report(modules_graph(sys.stdin.read()), lambda m: m, "modules"))
    sys.exit(__doc__)
