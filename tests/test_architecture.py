"""The house, as a test: the package's layers in the order data flows, read from docs/architecture.md's table, and
the imports of every module read from the source with `ast` (nothing is imported):

- no import circle among the modules, and no module imports from a later layer;
- function-level imports of the package's own modules only where they keep TensorFlow out of a command line's
  checks (the commands' `main`, after the flags are checked), and counted;
- `import albert` loads no TensorFlow and installs no import hook (in a fresh interpreter).
"""

import ast
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import ROOT

ARCHITECTURE = os.path.join(ROOT, "docs", "architecture.md")


def read_layers(path: str = ARCHITECTURE) -> list:
    """(layer, the modules or packages in it) of the table under `## Layers`, in order: a module may import from its
    own layer and the layers above it."""
    with open(path, encoding="utf-8") as f:
        text = f.read().split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| layer")]
    layers = []
    for row in rows:
        if row.startswith("|---"):
            continue
        name, modules = [cell.strip() for cell in row.strip("|").split("|")][:2]
        layers.append((name, tuple(m.strip().strip("`") for m in modules.split(","))))
    return layers


LAYERS = read_layers()
# The command lines: a function-level import of the package is allowed here, in `main`, after the checks.
COMMANDS = ("create_pretraining_data", "run_pretraining", "run_classifier", "run_squad", "run_race", "run_ner",
            "export_to_tfhub", "export_checkpoints", "convert", "info", "train_spm")
SCRIPTS = tuple(f"albert/commands/{name}.py" for name in COMMANDS)
# How many such imports each command line has (each one loads the job and TensorFlow after the flags are checked).
DEFERRED = {f"albert/commands/{name}.py": 1 for name in ("run_pretraining", "run_classifier", "run_squad", "run_race",
                                                           "run_ner", "export_to_tfhub", "export_checkpoints",
                                                           "convert")}
# The top-level scripts and `python -m albert.<name>`: each imports its command and runs it, nothing else.
THIN = {"create_pretraining_data.py": "create_pretraining_data", "run_pretraining.py": "run_pretraining",
        "run_classifier.py": "run_classifier", "run_squad.py": "run_squad", "run_race.py": "run_race",
        "run_ner.py": "run_ner", "export_to_tfhub.py": "export_to_tfhub", "export_checkpoints.py": "export_checkpoints",
        "albert/convert.py": "convert", "albert/info.py": "info", "albert/train_spm.py": "train_spm"}


# Where a module moved, a door stays at its old name (a documented import or `python -m`): a few lines that import the
# new module and nothing else, and stand in for it. A door may import from a later layer (it is the old address).
DOORS = {"albert.model.loading": "albert.tasks.loading", "albert.tasks.glue": "albert.tasks.classification.glue",
         "albert.tasks.squad_eval": "albert.tasks.squad.evaluate", "albert.jobs.glue": "albert.tasks.classification.job",
         "albert.jobs.squad": "albert.tasks.squad.job", "albert.jobs.race": "albert.tasks.race.job",
         "albert.jobs.pretraining": "albert.tasks.pretraining.job"}


def package_modules(root=ROOT) -> dict:
    """{module name: path} of every module of the package under `root`."""
    found = {}
    for directory, _, files in os.walk(os.path.join(root, "albert")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(path: str, modules) -> list:
    """(imported module of the package, line, at function level) of every import statement in a file."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "albert":
                        found.append((alias.name, child.lineno, nested))
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module \
                    and child.module.split(".")[0] == "albert":
                for alias in child.names:  # `from albert.x import y`: y may be a module itself
                    name = f"{child.module}.{alias.name}"
                    found.append((name if name in modules else child.module, child.lineno, nested))
            visit(child, inner)

    visit(tree, False)
    return found


def layer_of(module: str) -> int:
    best = None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or module.startswith(member + "."):
                if best is None or len(member) > best[1]:
                    best = (index, len(member))
    if best is None:
        raise AssertionError(f"{module} is in no layer of tests/test_architecture.py's LAYERS")
    return best[0]


def graph(modules: dict) -> dict:
    return {name: imports(path, modules) for name, path in modules.items()}


def problems(modules: dict) -> list:
    """What breaks the house: import circles and imports against the flow."""
    edges = graph(modules)
    found = []
    for module, targets in edges.items():
        for target, line, _ in targets:
            if target in modules and layer_of(target) > layer_of(module) and DOORS.get(module) != target:
                found.append(f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
                             f"({LAYERS[layer_of(target)][0]}), a later layer, at line {line}")
    # circles: depth-first search over module -> imported module
    state, stack = {}, []

    def walk(module):
        state[module] = "open"
        stack.append(module)
        for target, _, _ in edges[module]:
            if target not in modules or target == module:
                continue
            if state.get(target) == "open":
                found.append("circle: " + " -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                walk(target)
        stack.pop()
        state[module] = "done"

    for module in sorted(modules):
        if module not in state:
            walk(module)
    return found


def deferred_imports(paths, modules) -> dict:
    """{file: number of function-level imports of the package} of the given files."""
    counts = {}
    for path in paths:
        count = sum(nested for _, _, nested in imports(path, modules))
        if count:
            counts[os.path.relpath(path, ROOT)] = count
    return counts


def test_every_module_is_in_a_layer_and_described():
    assert [name for name, _ in LAYERS] == ["ground", "hub", "text", "data", "weights", "config", "model", "train",
                                            "export", "runner", "tasks", "commands"]
    with open(ARCHITECTURE, encoding="utf-8") as f:
        described = set(re.findall(r"^- `(albert/[\w/]+\.py)`: ", f.read(), re.M))
    for module, path in package_modules().items():
        layer_of(module)
        if not path.endswith("__init__.py") or module == "albert":
            assert os.path.relpath(path, ROOT) in described, f"docs/architecture.md has no line for {module}"


def test_the_package_root_holds_only_its_front_its_config_and_its_command_lines():
    """The ground floor lives in albert/ground/; the root keeps `import albert`'s front, the model config (a layer of
    its own) and the package's command lines (`python -m albert.<name>`, each run by its `__main__` block)."""
    root = sorted(name for name in os.listdir(os.path.join(ROOT, "albert")) if name.endswith(".py"))
    assert root == ["__init__.py", "config.py", "convert.py", "info.py", "train_spm.py"]
    for name in ("convert.py", "info.py", "train_spm.py"):
        with open(os.path.join(ROOT, "albert", name), encoding="utf-8") as f:
            assert 'if __name__ == "__main__":' in f.read(), name


def test_the_scripts_are_thin_and_every_command_has_its_console_script():
    """Each top-level script and `python -m albert.<name>` module is its docstring, one import of its command and the
    call; pyproject.toml installs each command as albert-<name with dashes> (tests/test_package.py runs them)."""
    for script, name in THIN.items():
        with open(os.path.join(ROOT, script), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        assert [type(node).__name__ for node in tree.body] == ["Expr", "ImportFrom", "If"], script
        assert (tree.body[1].module, [a.name for a in tree.body[1].names]) == (f"albert.commands.{name}", ["command"])
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        scripts = dict(re.findall(r'^"?([\w-]+)"? = "(albert\.commands\.\w+:command)"$', f.read(), re.M))
    assert scripts == {"albert-" + name.replace("_", "-"): f"albert.commands.{name}:command" for name in COMMANDS}


def test_every_module_with_code_has_tests():
    """tools/test_map.py's table: every module with code is named by a test file, or imported by modules that are."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import test_map
    finally:
        sys.path.pop(0)
    rows = test_map.table()
    assert len(rows) == len(package_modules())
    assert [path for _, path, tests, through in rows
            if not tests and not through and not test_map.docstring_only(path)] == []


def test_no_circle_and_no_import_against_the_flow():
    assert problems(package_modules()) == []


def test_a_door_is_a_few_lines_that_import_only_the_module_it_stands_for():
    """A door (DOORS) imports its module and nothing else, in at most a docstring and four statements, and the old name
    gives the new module's objects (python -m albert.tasks.squad_eval runs the scoring: tests/test_squad_eval.py)."""
    import importlib

    modules = package_modules()
    for door, target in DOORS.items():
        with open(modules[door], encoding="utf-8") as f:
            tree = ast.parse(f.read())
        assert len(tree.body) <= 5, door
        assert [name for name, _, _ in imports(modules[door], modules)] == [target], door
    for door, target in DOORS.items():
        if door != "albert.tasks.squad_eval":
            assert importlib.import_module(door) is importlib.import_module(target), door


def test_function_level_imports_only_in_the_command_lines_and_counted():
    modules = package_modules()
    library = [path for name, path in modules.items() if os.path.relpath(path, ROOT) not in SCRIPTS]
    assert deferred_imports(library, modules) == {}
    assert deferred_imports([os.path.join(ROOT, s) for s in SCRIPTS], modules) == DEFERRED


def test_the_test_rejects_a_circle_and_an_import_against_the_flow(tmp_path):
    """The same check on a copy of the package with one back import added (a model module importing a job), and
    with a circle added (the encoder importing a task model, which imports the encoder)."""
    import shutil

    for target, line in (("albert/model/heads.py", "from albert.tasks.classification import job\n"),
                         ("albert/model/encoder.py", "from albert.model import heads\n")):
        copy = tmp_path / target.replace("/", "_")
        shutil.copytree(os.path.join(ROOT, "albert"), copy / "albert")
        with open(copy / target, "a") as f:
            f.write(line)
        found = problems(package_modules(str(copy)))
        if "job" in line:
            assert any("albert.model.heads (model) imports albert.tasks.classification.job (tasks)" in p for p in found), found
        else:
            assert any(p.startswith("circle:") and "albert.model.heads" in p and "albert.model.encoder" in p
                       for p in found), found


def test_import_albert_loads_no_tensorflow_and_installs_no_hook():
    code = ("import sys; before = list(sys.meta_path); import albert; "
            "assert sys.meta_path == before, sys.meta_path; "
            "assert not any(m.split('.')[0] in ('tensorflow', 'keras') for m in sys.modules), 'TF loaded'; "
            "print(sorted(albert.__all__)[:2])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "['AlbertClassifier', 'AlbertConfig']"


@pytest.mark.parametrize("module", ["albert.ground.cli", "albert.config", "albert.train.settings",
                                    "albert.weights.formats", "albert.tasks.classification.glue", "albert.tasks.squad.examples",
                                    "albert.model.sizing"])
def test_what_the_command_lines_check_with_loads_no_tensorflow(module):
    code = (f"import sys; import {module}; "
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras')); "
            "assert not loaded, loaded[:3]")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 0, result.stderr[-2000:]


def test_every_module_imports_with_the_core_install_alone(tmp_path):
    """Optional extras stay optional: in a process where a meta-path finder refuses every package of
    albert.ground.extras (onnx, tf2onnx, onnxruntime, apache_beam, dask, distributed), every module of the package
    still imports; the refusal itself is checked first. Importing them all in one process defines no absl flag: a
    command line's flags are made when it runs (albert.ground.cli.run), so no two commands' flags collide."""
    from tests.helpers import refusing_extras

    modules = sorted(package_modules())
    code = ("import importlib, sys\n"
            "for name in ('onnx', 'apache_beam', 'dask'):\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ModuleNotFoundError:\n"
            "        pass\n"
            "    else:\n"
            "        sys.exit(f'{name} was not refused')\n"
            "from absl import app, flags, logging\n"  # absl's own flags (--verbosity, ...) are made here
            f"names = {modules!r}\n"
            "for name in names:\n"
            "    before = set(flags.FLAGS)\n"  # TensorFlow defines its own when it is first imported
            "    importlib.import_module(name)\n"
            "    if name.startswith('albert.commands.') and set(flags.FLAGS) != before:\n"
            "        sys.exit(f'importing {name} defined flags: {sorted(set(flags.FLAGS) - before)}')\n"
            "print(len(names))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                            env=refusing_extras(str(tmp_path)))
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == str(len(modules))


def test_no_module_level_import_of_a_package_the_core_install_lacks():
    """The same rule read from the source: every module-level import of a third-party package names one that
    requirements.txt installs (or that comes with Python)."""
    allowed = core_packages()
    found = []
    for module, path in package_modules().items():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            for name in names:
                top = name.split(".")[0]
                if top != "albert" and top not in sys.stdlib_module_names and top not in allowed:
                    found.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {name}")
    assert found == []


def core_packages() -> set:
    """The import names of requirements.txt's packages."""
    imports_of = {"tensorflow": ("tensorflow",), "tensorflow-text": ("tensorflow_text",), "absl-py": ("absl",),
                  "google-crc32c": ("google_crc32c",), "scikit-learn": ("sklearn",),
                  "huggingface-hub": ("huggingface_hub",)}
    names = set()
    with open(os.path.join(ROOT, "requirements.txt"), encoding="utf-8") as f:
        for line in f:
            package = re.split(r"[=<>\s#\[]", line.strip(), maxsplit=1)[0]
            if package:
                names.update(imports_of.get(package, (package.replace("-", "_"),)))
    return names
