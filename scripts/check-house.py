#!/usr/bin/env python3
"""Check the include graph against the house (DESIGN.md, "The house").

Layers: framework includes nothing from actors, persistence or tools;
persistence nothing from actors or tools; actors nothing from tools.

Rooms inside actors/, from top to bottom (ROOM_LEVELS below): a file may
include its own room and rooms below it; rooms on the same level may include
each other as long as no cycle forms between rooms; nothing includes boot;
testing (prism_testing) may include any room but only tests include it
(tests/ is not checked).

Usage: scripts/check-house.py [--root DIR] [--graph] [--allow-unknown ROOM,...]
Exit status: 0 if the tree keeps the house, 1 if not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

# ---------------------------------------------------------------------------
# The house, as data.

# Rooms of actors/, top first. Rooms in one tuple share a level.
ROOM_LEVELS: list[tuple[str, ...]] = [
    ("boot",),
    ("gcs", "raylet", "owner", "worker", "supervisor", "autoscaler",
     "observe"),
    ("join", "http"),
    ("net",),
    ("protocol",),
    ("common",),
]

# Rooms outside the order: they may include any room (boot too), and no
# checked file may include them (only tests do).
TEST_ONLY_ROOMS = {"testing"}

# Rooms nothing outside themselves includes (composition roots), but for
# the layers named here: the `prism` command composes its processes from boot.
NOT_INCLUDED_ROOMS = {"boot"}
NOT_INCLUDED_EXCEPT_LAYERS = {"tools"}

# Directories under actors/ that are a room other than their first component
# (longest prefix wins).
ROOM_DIRS: dict[str, str] = {}

# Top-level layers and what each must not include.
LAYER_FORBIDS: dict[str, set[str]] = {
    "framework": {"actors", "persistence", "tools"},
    "persistence": {"actors", "tools"},
    "actors": {"tools"},
    "tools": set(),
}

# Include roots (the include directories of prism_framework, prism_persistence,
# prism_actors and prism in the CMakeLists), in search order. `<...>` includes
# are searched here only; `"..."` includes first next to the including file.
INCLUDE_ROOTS = [
    "actors",
    "framework/include",
    "framework/internal",
    "persistence",
]

# Where protoc's output lands (persistence's CMAKE_CURRENT_BINARY_DIR) in any
# build directory; a header found there belongs to persistence.
GENERATED_DIR_GLOBS = ["build/persistence", "build/*/persistence", "build*/persistence"]

SOURCE_SUFFIXES = {".hpp", ".h", ".hh", ".hxx", ".ipp", ".inl", ".cpp", ".cc", ".cxx"}

# ---------------------------------------------------------------------------

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def room_level() -> dict[str, int]:
    levels = {}
    for i, rooms in enumerate(ROOM_LEVELS):
        for r in rooms:
            levels[r] = i
    return levels


def find_includes(path: Path):
    """Yield (line number, delimiter, target) for each #include outside comments."""
    in_block = False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    for n, line in enumerate(text.splitlines(), 1):
        if in_block:
            end = line.find("*/")
            if end < 0:
                continue
            line = line[end + 2:]
            in_block = False
        m = INCLUDE_RE.match(line)
        if m:
            yield n, m.group(1), m.group(2)
            continue
        # Track block comments opened on this line (not inside a // comment).
        code = line.split("//", 1)[0]
        start = code.rfind("/*")
        if start >= 0 and code.find("*/", start + 2) < 0:
            in_block = True


class House:
    def __init__(self, root: Path, allow_unknown: set[str]):
        self.root = root.resolve()
        self.allow_unknown = allow_unknown
        self.levels = room_level()
        self.roots = [self.root / r for r in INCLUDE_ROOTS if (self.root / r).is_dir()]
        self.generated: list[Path] = []
        for pattern in GENERATED_DIR_GLOBS:
            for d in sorted(self.root.glob(pattern)):
                if d.is_dir() and d.resolve() not in self.generated:
                    self.generated.append(d.resolve())
        self.protos = {p.stem for p in (self.root / "persistence").glob("*.proto")}
        self.violations: list[tuple[str, str]] = []  # (kind, message)
        self.room_edges: Counter = Counter()  # (from room, to room) -> includes
        self.room_edge_site: dict[tuple[str, str], str] = {}
        self.layer_edges: Counter = Counter()
        self.room_files: Counter = Counter()
        self.unresolved_ambiguous: list[str] = []

    # -- classification -----------------------------------------------------

    def rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def layer_of(self, rel: str) -> str | None:
        top = rel.split("/", 1)[0]
        return top if top in LAYER_FORBIDS else None

    def room_of(self, rel: str) -> str | None:
        """The room of a path under actors/, or None."""
        if not rel.startswith("actors/"):
            return None
        inner = rel[len("actors/"):]
        parts = inner.split("/")
        if len(parts) == 1:
            return "(actors/)"  # a file directly in actors/
        best = None
        for prefix, room in ROOM_DIRS.items():
            if inner.startswith(prefix + "/") and (best is None or len(prefix) > len(best[0])):
                best = (prefix, room)
        return best[1] if best else parts[0]

    def known(self, room: str) -> bool:
        return room in self.levels or room in TEST_ONLY_ROOMS

    # -- resolution ---------------------------------------------------------

    def resolve(self, src: Path, delim: str, target: str) -> str | None:
        """The repo-relative path the include names, or None if external.
        Generated headers resolve to "persistence/<name>"."""
        candidates = []
        if delim == '"':
            candidates.append(src.parent)
        candidates.extend(self.roots)
        for base in candidates:
            p = (base / target)
            if p.is_file():
                try:
                    return self.rel(p.resolve())
                except ValueError:
                    return None  # a symlink out of the tree
        for g in self.generated:
            if (g / target).is_file():
                return "persistence/" + target
        # protoc's output without a build directory: records.pb.h of records.proto.
        if target.endswith(".pb.h") and "/" not in target and target[:-len(".pb.h")] in self.protos:
            return "persistence/" + target
        return None

    # -- checks -------------------------------------------------------------

    def files(self):
        for layer in LAYER_FORBIDS:
            base = self.root / layer
            if not base.is_dir():
                continue
            for p in sorted(base.rglob("*")):
                if p.suffix in SOURCE_SUFFIXES and p.is_file():
                    yield p

    def add(self, kind: str, msg: str):
        self.violations.append((kind, msg))

    def check(self):
        for src in self.files():
            src_rel = self.rel(src)
            src_layer = self.layer_of(src_rel)
            src_room = self.room_of(src_rel)
            if src_room is not None:
                self.room_files[src_room] += 1
            for line, delim, target in find_includes(src):
                dst_rel = self.resolve(src, delim, target)
                if dst_rel is None or dst_rel == src_rel:
                    continue
                dst_layer = self.layer_of(dst_rel)
                if dst_layer is None:
                    continue
                where = f"{src_rel}:{line}"
                if src_layer != dst_layer:
                    self.layer_edges[(src_layer, dst_layer)] += 1
                if dst_layer in LAYER_FORBIDS[src_layer]:
                    self.add("layer", f"{where}: layer '{src_layer}' includes layer "
                                      f"'{dst_layer}' ({dst_rel}; {src_layer} must not include {dst_layer})")
                dst_room = self.room_of(dst_rel)
                if dst_room is None:
                    continue
                if dst_room in NOT_INCLUDED_ROOMS and src_room != dst_room \
                        and src_room not in TEST_ONLY_ROOMS \
                        and src_layer not in NOT_INCLUDED_EXCEPT_LAYERS:
                    self.add("boot", f"{where}: {self.describe(src_rel, src_room)} includes room "
                                     f"'{dst_room}' ({dst_rel}; nothing includes {dst_room})")
                if dst_room in TEST_ONLY_ROOMS and src_room != dst_room:
                    self.add("testing", f"{where}: {self.describe(src_rel, src_room)} includes room "
                                        f"'{dst_room}' ({dst_rel}; only tests include {dst_room})")
                if src_room is None or src_room == dst_room:
                    continue
                self.room_edges[(src_room, dst_room)] += 1
                self.room_edge_site.setdefault((src_room, dst_room), where)
                if src_room in TEST_ONLY_ROOMS or dst_room in NOT_INCLUDED_ROOMS \
                        or dst_room in TEST_ONLY_ROOMS:
                    continue
                a, b = self.levels.get(src_room), self.levels.get(dst_room)
                if a is not None and b is not None and b < a:
                    self.add("order", f"{where}: room '{src_room}' includes room '{dst_room}' "
                                      f"({dst_room} is above {src_room}; {dst_rel})")
        self.check_unknown_rooms()
        self.check_cycles()

    def describe(self, rel: str, room: str | None) -> str:
        return f"room '{room}'" if room is not None else f"layer '{self.layer_of(rel)}'"

    def check_unknown_rooms(self):
        rooms = set(self.room_files)
        for a, b in self.room_edges:
            rooms.update((a, b))
        for room in sorted(rooms):
            if self.known(room) or room in self.allow_unknown:
                continue
            out = sum(n for (a, _), n in self.room_edges.items() if a == room)
            inc = sum(n for (_, b), n in self.room_edges.items() if b == room)
            where = "actors/" if room == "(actors/)" else f"actors/{room}/"
            self.add("unknown", f"{where}: room '{room}' is not in the house "
                                f"({self.room_files[room]} files, {out} includes out, {inc} in)")

    def check_cycles(self):
        graph: dict[str, set[str]] = defaultdict(set)
        for a, b in self.room_edges:
            graph[a].add(b)
            graph.setdefault(b, set())
        # Pairs first: the simplest cycles, named as such.
        for (a, b), n in sorted(self.room_edges.items()):
            if a < b and (b, a) in self.room_edges:
                self.add("mutual", f"{self.room_edge_site[(a, b)]}: rooms '{a}' and '{b}' include "
                                   f"each other ({a}->{b}: {n}, first here; {b}->{a}: "
                                   f"{self.room_edges[(b, a)]}, first at {self.room_edge_site[(b, a)]})")
        for scc in tarjan(graph):
            if len(scc) < 2:
                continue
            cycle = find_cycle(graph, scc)
            path = " -> ".join(cycle + [cycle[0]])
            sites = ", ".join(self.room_edge_site[(cycle[i], cycle[(i + 1) % len(cycle)])]
                              for i in range(len(cycle)))
            self.add("cycle", f"rooms {{{', '.join(sorted(scc))}}} form a cycle: {path} (at {sites})")

    # -- output -------------------------------------------------------------

    def print_graph(self):
        print("Layer graph (includes between layers):")
        for (a, b), n in sorted(self.layer_edges.items()):
            bad = "  <-- forbidden" if b in LAYER_FORBIDS[a] else ""
            print(f"  {a:12} -> {b:12} {n:5}{bad}")
        print("Room graph under actors/ (includes between rooms):")
        print("  rooms: " + ", ".join(f"{r} ({n} files)" for r, n in sorted(self.room_files.items())))
        for (a, b), n in sorted(self.room_edges.items()):
            note = ""
            la, lb = self.levels.get(a), self.levels.get(b)
            if a in TEST_ONLY_ROOMS:
                note = ""
            elif b in NOT_INCLUDED_ROOMS:
                note = "  <-- includes boot"
            elif b in TEST_ONLY_ROOMS:
                note = "  <-- includes testing"
            elif (b, a) in self.room_edges:
                note = "  <-- mutual"
            elif la is None or lb is None:
                note = "  (room not in the house)"
            elif lb < la:
                note = "  <-- upward"
            print(f"  {a:12} -> {b:12} {n:5}{note}")
        print()


def tarjan(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    sccs: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                sccs.append(sorted(comp))
    return sccs


def find_cycle(graph: dict[str, set[str]], scc: list[str]) -> list[str]:
    """A shortest cycle through the first room of a strongly connected component."""
    members = set(scc)
    start = scc[0]
    prev: dict[str, str] = {}
    queue = [start]
    seen = {start}
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return list(reversed(path))
            if w not in seen:
                seen.add(w)
                prev[w] = v
                queue.append(w)
    return [start]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository root (default: the one holding this script)")
    parser.add_argument("--graph", action="store_true",
                        help="print the layer and room include graphs with edge counts")
    parser.add_argument("--allow-unknown", default="", metavar="ROOM,...",
                        help="rooms under actors/ that are not in the house but not errors")
    args = parser.parse_args()
    if not (args.root / "actors").is_dir() and not (args.root / "framework").is_dir():
        print(f"check-house: {args.root} has neither actors/ nor framework/", file=sys.stderr)
        return 2
    allow = {r.strip() for r in args.allow_unknown.split(",") if r.strip()}
    house = House(args.root, allow)
    house.check()
    if args.graph:
        house.print_graph()
    for _, msg in house.violations:
        print(msg)
    kinds = Counter(k for k, _ in house.violations)
    if house.violations:
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        print(f"\ncheck-house: {len(house.violations)} violations ({summary})")
        return 1
    print("check-house: the tree keeps the house")
    return 0


if __name__ == "__main__":
    sys.exit(main())
