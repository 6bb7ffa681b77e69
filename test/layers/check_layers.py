#!/usr/bin/env python3
"""Checks that no folder of src/ includes a header of a folder above it.

The order of the folders, bottom first, is the line starting with "Order:" in
doc/design/layers.md (the one place it is written). A file of folder F may include headers of
F itself (a path relative to the file, or "F/...") and of folders below F. cr_impl.h is
generated from the MPI Forum's data and declares every implementation function with the types
of core/types.h: it counts as core. Exits 1 and names every include that goes up.

usage: check_layers.py [REPO]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
src = os.path.join(root, "src")
doc = os.path.join(root, "doc", "design", "layers.md")

order = None
for line in open(doc):
    if line.startswith("Order:"):
        order = [w.strip().strip("`") for w in line[len("Order:"):].split("<")]
if not order:
    sys.exit(f"{doc}: no line starting with 'Order:'")
rank = {f: i for i, f in enumerate(order)}
GENERATED = {"cr_impl.h": "core"}

problems, files, edges = [], 0, set()
for dirpath, _, names in os.walk(src):
    rel = os.path.relpath(dirpath, src)
    if rel == ".":
        continue
    folder = rel.split(os.sep)[0]
    if folder not in rank:
        problems.append(f"src/{rel}: folder '{folder}' is not in the order of {doc}")
        continue
    for name in names:
        if not name.endswith((".c", ".h")):
            continue
        files += 1
        path = os.path.join(dirpath, name)
        for n, line in enumerate(open(path, errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if os.path.exists(os.path.join(dirpath, inc)):
                target = folder  # beside the file
            elif inc in GENERATED:
                target = GENERATED[inc]
            else:
                target = inc.split("/")[0]
                if target not in rank or not os.path.exists(os.path.join(src, inc)):
                    problems.append(f"src/{rel}/{name}:{n}: #include \"{inc}\" names no header of src/")
                    continue
            edges.add((folder, target))
            if rank[target] > rank[folder]:
                problems.append(f"src/{rel}/{name}:{n}: {folder} includes \"{inc}\" of {target}, a layer above it "
                                f"(order: {' < '.join(order)})")

for p in problems:
    print(p)
print(f"{files} files, {len(edges)} edges between folders, order {' < '.join(order)}: "
      f"{'no include goes up' if not problems else str(len(problems)) + ' problems'}")
sys.exit(1 if problems else 0)
