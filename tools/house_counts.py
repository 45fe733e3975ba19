"""The house in numbers (issue "one definition per task"): what a change of structure is measured by.

    python tools/house_counts.py [ROOT]      # ROOT: a checkout (default: this one)

- lines of code in albert/: lines that hold code, without blank lines, comments and docstrings;
- setting fields declared in more than one settings class (a dataclass field of the same name in two classes of
  albert/ that derive from albert.ground.settings_flags.Settings, read from the source);
- helper functions in tests/ that start a process (a function not named test_* whose own body calls subprocess's
  run / Popen / check_output / check_call / call, or multiprocessing's Process);
- per task, the files of albert/ whose path names it, and the folders they sit in.
"""

import ast
import io
import os
import re
import sys
import tokenize

TASKS = {"squad": ("squad",), "race": ("race", "choice"), "ner": ("ner", "conll", "entit", "token_class"),
         "classification": ("glue", "classif", "own_data"), "pretraining / fill-mask": ("pretraining", "fill_mask")}
STARTS = {"run", "Popen", "check_output", "check_call", "call", "Process"}


def python_files(folder: str):
    for parent, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(parent, name)


def code_lines(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        source = f.read()
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                          tokenize.ENDMARKER):
            continue
        lines.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docstrings)
    return len(lines)


def settings_fields(root: str) -> dict:
    """field name -> the settings classes that declare it."""
    classes = {}
    for path in python_files(os.path.join(root, "albert")):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                own = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                       and "ClassVar" not in ast.unparse(s.annotation)]  # a class constant is no setting
                classes[node.name] = (bases, own)
    settings = {"Settings"}
    while True:
        more = {name for name, (bases, _) in classes.items() if bases & settings} - settings
        if not more:
            break
        settings |= more
    declared = {}
    for name in sorted(settings - {"Settings"}):
        for field in classes[name][1]:
            declared.setdefault(field, []).append(name)
    return declared


def process_helpers(root: str) -> list:
    found = []
    for path in python_files(os.path.join(root, "tests")):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("test_"):
                calls = {getattr(c.func, "attr", getattr(c.func, "id", "")) for c in ast.walk(node)
                         if isinstance(c, ast.Call)}
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
                    {n.value.id for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
                if calls & STARTS and names & {"subprocess", "multiprocessing", "Popen", "Process"}:
                    found.append(f"{os.path.relpath(path, root)}:{node.name}")
    return found


def parts(path: str, package: str) -> list:
    """The folders and the file name (without .py) of a module's path under the package: what names a task."""
    return os.path.relpath(path, package)[:-3].split(os.sep)


def is_door(path: str) -> bool:
    """A module left at a moved module's old name that only forwards to it (its docstring says so)."""
    with open(path, encoding="utf-8") as f:
        return f.read().startswith('"""A door: ')


def main(root: str):
    package = os.path.join(root, "albert")
    files = list(python_files(package))
    print(f"lines of code in albert/ (no blank lines, comments, docstrings): {sum(map(code_lines, files)):,} "
          f"in {len(files)} files")
    repeated = {field: owners for field, owners in settings_fields(root).items() if len(owners) > 1}
    print(f"setting fields declared in more than one settings class: {len(repeated)}")
    helpers = process_helpers(root)
    print(f"helper functions in tests/ that start a process: {len(helpers)}")
    doors = [p for p in files if is_door(p)]
    print(f"doors (a moved module's old name, forwarding): {len(doors)}; not counted below")
    for task, words in TASKS.items():
        named = [os.path.relpath(p, root) for p in files
                 if any(re.search(f"(^|_){w}", part) for part in parts(p, package) for w in words) and p not in doors]
        folders = sorted({os.path.dirname(p) for p in named})
        print(f"  {task}: {len(named)} files in {len(folders)} folders ({', '.join(folders)})")


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(__file__))))
