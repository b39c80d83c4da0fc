"""The modules of kg import one way: no circle between them, and no stage reaching up into a later one.

Every import is read from the source with ``ast``, those inside functions too: a lazy import hides a
circle from Python, not from this test. ``viz/`` is the package ``kg.viz`` (see pyproject.toml).
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"kg": ROOT / "kg", "kg.viz": ROOT / "viz"}


def module_files() -> dict[str, Path]:
    """Every module of kg by its dotted name: ``kg/extract/__init__.py`` is ``kg.extract``."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (the file ``path``) imports, anywhere in its body.

    ``from . import x`` names the submodule ``x`` when there is one, else the package itself.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    return {target for target in targets if target in known and target != name}


@pytest.fixture(scope="module")
def imports() -> nx.DiGraph:
    modules = module_files()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in imported(name, path, set(modules)))
    return graph


def test_the_reader_resolves_relative_and_lazy_imports(tmp_path):
    path = tmp_path / "__init__.py"
    path.write_text("from . import a, helper\nfrom .b import f\nfrom .. import top\n"
                    "import kg.c\ndef later():\n    from ..d.e import g\n")
    known = {"kg.pkg", "kg.pkg.a", "kg.pkg.b", "kg.top", "kg.c", "kg.d.e"}
    # "helper" is no module: an attribute of the package itself, which is no import of another module.
    assert imported("kg.pkg", path, known) == {"kg.pkg.a", "kg.pkg.b", "kg.top", "kg.c", "kg.d.e"}


def circles(imports: nx.DiGraph) -> list[str]:
    """Each circle of ``imports`` as it runs, from its first module in alphabetical order.

    >>> circles(nx.DiGraph([("kg.b", "kg.a"), ("kg.a", "kg.b"), ("kg.a", "kg.c")]))
    ['kg.a -> kg.b -> kg.a']
    """
    found = []
    for cycle in nx.simple_cycles(imports):
        first = cycle.index(min(cycle))
        cycle = cycle[first:] + cycle[:first]
        found.append(" -> ".join(cycle + cycle[:1]))
    return sorted(found)


def test_a_circle_is_named_as_it_runs():
    assert circles(nx.DiGraph([("kg.b", "kg.c"), ("kg.c", "kg.a"), ("kg.a", "kg.b"), ("kg.a", "kg.d")])) == [
        "kg.a -> kg.b -> kg.c -> kg.a"]


def test_no_module_imports_itself_in_a_circle(imports):
    found = circles(imports)
    assert not found, "Import circles: " + "; ".join(found)


#: The floors of kg, lowest first: a module imports from its own floor or the floors below, never
#: from one above. The ground floor is everything directly in ``kg/`` but the two on top.
FLOORS = (
    ("ground",),
    ("kg.ingest",),
    ("kg.extract",),
    ("kg.resolve",),
    ("kg.link",),
    ("kg.write",),
    ("kg.query",),
    ("kg.viz",),
    ("kg.serve", "kg.evaluate"),
    ("kg.train",),
    ("kg.build", "kg.cli"),
)


def floor_of(module: str) -> int:
    """The floor of ``module``: its package's place in :data:`FLOORS`.

    >>> floor_of("kg.vocab"), floor_of("kg.extract.rules"), floor_of("kg.query"), floor_of("kg.cli")
    (0, 2, 6, 10)
    """
    for number, packages in enumerate(FLOORS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return number
    return 0


def test_every_module_is_in_a_floor_package_or_on_the_ground():
    for module, path in module_files().items():
        if floor_of(module) == 0:
            assert path.parent == ROOT / "kg", f"{module} is in no floor of FLOORS"


def test_no_module_imports_from_a_floor_above_its_own(imports):
    upward = sorted(f"{a} -> {b}" for a, b in imports.edges if floor_of(b) > floor_of(a))
    assert not upward, "Imports up a floor: " + "; ".join(upward)


#: What a module never imports, though it lies below: what the build hands it instead.
NEVER = {
    "kg.extract": ("kg.extract.cluster",),  # the build chooses the executor
    "kg.link.graph": ("kg.link.concepts", "kg.pwc"),  # the build annotates the entities
    "kg.resolve": ("kg.pwc",),  # the build hands on the known datasets
}


@pytest.mark.parametrize("stage", sorted(NEVER))
def test_a_stage_never_imports_what_the_build_hands_it(imports, stage):
    modules = [m for m in imports if (m == stage or m.startswith(f"{stage}.")) and not m.startswith(NEVER[stage])]
    assert modules, f"no module {stage}"
    reached = {t for m in modules for t in nx.descendants(imports, m)}
    handed = sorted(t for t in reached if t.startswith(NEVER[stage]))
    assert not handed, f"{stage} imports, directly or not: " + ", ".join(handed)


def test_the_keys_are_a_ground_floor(imports):
    # kg.pwc, kg.link.concepts and kg.query.lookup key names with kg.keys: it must not lift them into a stage.
    assert nx.descendants(imports, "kg.keys") <= {"kg.lexicon", "kg.text"}


def test_answering_from_a_built_graph_never_loads_spacy():
    """The read commands answer in a fraction of a second: spaCy (2 s to import) is the build's."""
    import subprocess
    import sys

    modules = ["kg.cli", "kg.query.commands", "kg.query.explain", "kg.query.leaderboard", "kg.query.trends",
               "kg.query.panels", "kg.query.related", "kg.query.export", "kg.serve"]
    code = f"import sys; import {', '.join(modules)}; print(sorted(m for m in ('spacy', 'torch') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
