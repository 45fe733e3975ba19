"""Which tests cover which module of the package, as a table (printed; docs/architecture.md says how to ask).

A test file covers a module it names (an import, a `python -m albert.<module>`, code it runs in a subprocess), a
module a helper it imports names (tests/*_helpers.py), or the job a command line it runs calls (run_classifier.py:
albert.tasks.classification.job, ...). A module no test file names is tested through the modules that import it: its row names
them (look up their rows). tests/test_architecture.py fails when a module with code has no test at all.

    python tools/test_map.py            # print the table
"""

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The command lines at the top of the repository, and the module each one hands its work to.
# (`python -m albert.<name>` and the console scripts run albert.commands.<name> too.)
COMMAND_LINES = {"run_classifier.py": ("albert.commands.run_classifier", "albert.tasks.classification.job"),
                 "run_pretraining.py": ("albert.commands.run_pretraining", "albert.tasks.pretraining.job"),
                 "run_squad.py": ("albert.commands.run_squad", "albert.tasks.squad.job"),
                 "run_race.py": ("albert.commands.run_race", "albert.tasks.race.job"),
                 "run_ner.py": ("albert.commands.run_ner", "albert.tasks.ner.job", "albert.tasks.ner.serving"),
                 "create_pretraining_data.py": ("albert.commands.create_pretraining_data", "albert.data.generator",
                                                "albert.data.beam"),
                 "export_to_tfhub.py": ("albert.commands.export_to_tfhub", "albert.export.hub"),
                 "export_checkpoints.py": ("albert.commands.export_checkpoints", "albert.tasks.conversion"),
                 "albert.convert": ("albert.commands.convert",), "albert.info": ("albert.commands.info",),
                 "albert.train_spm": ("albert.commands.train_spm",)}


def modules() -> dict:
    """{module name: path relative to the repository} of every module of the package."""
    found = {}
    for directory, _, files in os.walk(os.path.join(ROOT, "albert")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.relpath(os.path.join(directory, name), ROOT)
                parts = path[:-3].split(os.sep)
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def named(text: str, known: dict) -> set:
    """The package's modules `text` names (`albert.x.y`, `from albert.x import y`, a command line's file name)."""
    found = set()
    for match in re.finditer(r"\balbert(?:\.\w+)+", text):
        parts = match.group(0).split(".")
        for end in range(len(parts), 1, -1):  # the longest prefix that is a module (albert.x.y.attribute)
            if ".".join(parts[:end]) in known:
                found.add(".".join(parts[:end]))
                break
    for match in re.finditer(r"from (albert(?:\.\w+)*) import \(?([\w, \n]+)\)?", text):
        for name in re.split(r"[,\s]+", match.group(2)):
            if f"{match.group(1)}.{name}" in known:
                found.add(f"{match.group(1)}.{name}")
    for script, jobs in COMMAND_LINES.items():
        if script in text:
            found.update(jobs)
    if re.search(r"^\s*(import albert\b|from albert import )", text, re.M):
        found.add("albert")  # the package's front
    return found


def docstring_only(path: str) -> bool:
    """A module with nothing but its docstring (a sub-package's __init__): nothing to test."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        body = ast.parse(f.read()).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def imports_of(path: str, known: dict) -> set:
    """The package's modules one module imports."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("albert"):
            found.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
            found.add(node.module) if node.module in known else None
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
    return found


def table() -> list:
    """[(module, path, [test files], through)]: the test files that name the module; for a module none names,
    `through`: the modules that import it and have tests (their own or through others in turn)."""
    known = modules()
    tests_dir = os.path.join(ROOT, "tests")
    helpers = {}
    for name in sorted(os.listdir(tests_dir)):
        if name.endswith(".py") and not name.startswith("test_"):
            with open(os.path.join(tests_dir, name), encoding="utf-8") as f:
                helpers[name[:-3]] = named(f.read(), known)
    covered = {module: set() for module in known}
    for name in sorted(os.listdir(tests_dir)):
        if name.startswith("test_") and name.endswith(".py"):
            with open(os.path.join(tests_dir, name), encoding="utf-8") as f:
                text = f.read()
            reached = named(text, known)
            for helper, their in helpers.items():
                if re.search(rf"\btests\.{helper}\b|\bfrom tests import {helper}\b", text):
                    reached |= their
            for module in reached:
                covered[module].add(name)
    importers = {module: set() for module in known}
    for module, path in known.items():
        for imported in imports_of(path, known):
            if imported != module:
                importers[imported].add(module)
    reached = {module for module in known if covered[module]}
    through = {}
    while True:  # a module none names is tested through the tested modules that import it
        more = {module: {m for m in importers[module] if m in reached} for module in known if module not in reached}
        more = {module: importing for module, importing in more.items() if importing}
        if not more:
            break
        through.update(more)
        reached |= set(more)
    return [(module, known[module], sorted(covered[module]), sorted(through.get(module, ())))
            for module in sorted(known)]


def markdown(rows: list) -> str:
    lines = ["| module | its tests |", "|---|---|"]
    for module, path, tests, through in rows:
        if tests:
            listed = ", ".join(f"`{t}`" for t in tests)
        elif through:
            listed = "through " + ", ".join(f"`{m}`" for m in through)
        else:
            listed = "(its docstring only)" if docstring_only(path) else "**none**"
        lines.append(f"| `{path}` | {listed} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(table()))
