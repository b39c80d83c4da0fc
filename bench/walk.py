"""The walk of one mention through the build: the kg functions it passes through, the files they
live in and the shapes it takes, from extraction to (a) its N-Triples line and (b) its node in the
offline page's tables.

A one-abstract corpus (the first abstract of tests/fixtures/sample.txt, with the file's header
line) is built in this process by ``kg.build.build`` (one process, no extraction cache) under
``sys.setprofile``, and one mention is followed: by default the abstract's first proposed method
(the first mention of type Method or Model that the paper proposes; when that is the long form
of an acronym the paper defines, the acronym, which is the name the graph gives the entity),
chosen by extracting the abstract in a separate process so that no cache of kg is warm when the
build is traced. ``--mention TEXT`` follows another.

Run on the kg importable here (``PYTHONPATH=tree python bench/walk.py``), or on revisions checked
out into temporary git worktrees, side by side (as bench/side_by_side.py does)::

    python bench/walk.py --revision 60218c7 --revision HEAD

The definition the numbers follow is printed with them (:func:`definition`).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "sample.txt"

#: How deep the scan of an argument or a return value goes: a string nested this many objects
#: down is seen. 4 reaches an RDF block's literal, ``(subject, [(predicate, (value, datatype,
#: language))])``, a graph node's label (graph -> ``_node`` -> the node's attributes -> label)
#: and a mention's text in a list of extractions (list -> extraction -> mentions -> Mention).
DEPTH = 4
#: The most elements read from one container, and the most objects visited by one scan.
PER_CONTAINER = 1_000
PER_SCAN = 20_000

#: Functions whose dynamic extent makes a stage: the RDF writing, the page, and the side
#: branches that lead to neither the triple nor the node (the entities' vectors, the report).
RDF_STAGE = "write_rdf"
PAGE_STAGE = "render_html"
TABLES = "graph_tables"
SIDE = {"entity_vectors", "resolution_report"}

def definition(depth: int = DEPTH) -> str:
    return f"""\
Definition (bench/walk.py):
- The mention: one mention's text T, matched as a whole string: a str s carries it when
  s.casefold() == T.casefold() ("C-GRPO" and the lookup key "c-grpo"; not a sentence or the
  abstract that contains it). Other mentions with the same text are not told apart.
- An object carries the mention when T is found in it by a bounded shallow scan: the object
  itself if a str; the keys and values of a dict, the elements of a list, tuple, set or
  frozenset (at most {PER_CONTAINER:,} each); a dataclass's fields; an object's __dict__ and
  __slots__; spaCy objects' .text and pyoxigraph terms' .value/.subject/.predicate/.object;
  down to {depth} objects below the argument (at most {PER_SCAN:,} objects a scan). Modules,
  classes, functions, methods, generators and iterators are not opened (a generator's items
  are seen when it yields them).
- A hop is a kg function (code in a .py file under kg/ or viz/ of the tree measured; named
  functions and methods, nested ones included; lambdas, comprehensions, generator expressions
  and module bodies are part of their enclosing code and not counted) that is called with an
  argument (self included) that carries the mention, or returns or yields a value that does.
  sys.setprofile sees the calls; frames outside kg/ and viz/ are skipped. Each function counts
  once, where it is first seen carrying the mention.
- Stages, by the call stack: rdf = inside {RDF_STAGE}(), page = inside {PAGE_STAGE}(), side =
  inside {' or '.join(f"{name}()" for name in sorted(SIDE))} (on neither walk); common = the rest,
  up to the first call of {RDF_STAGE}() (extraction, resolution, concepts, the graph).
- Walk (a), to the triple: the common hops, then the rdf hops up to and including the first
  one that hands on a pyoxigraph triple or quad carrying the mention (pyoxigraph then writes
  the N-Triples line; its serializer is not kg code).
- Walk (b), to the node: the common hops, then the page hops up to and including the first
  return of {TABLES}() that carries the mention (the page's tables, where the node is a column
  entry; the page first measures itself around empty tables, and that pass is on the way).
- Files = distinct source files of a walk's hops. Shapes = distinct type names of the objects
  on the scan's paths from a hop's argument or return value down to the str (the str itself
  left out), e.g. list>Mention>Span; "named" leaves out the builtin containers (list, tuple,
  dict, set, frozenset).
- The build: kg.build.build(..., cache=None) of the one abstract, in this process, with one
  extraction process (the keyword the revision's signature has). With the cache off the
  mention is never a cache row."""

_CONTAINERS = {"list", "tuple", "dict", "set", "frozenset"}
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator


def first_abstract(path: Path = FIXTURE) -> tuple[str, str]:
    """The header line of the sample corpus and its first abstract."""
    header, _, body = path.read_text(encoding="utf-8").partition("\n")
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    return header.strip(), paragraphs[0]


# -------------------------------------------------------------------- the scan

class Scanner:
    """Finds the mention's text in an object: the type paths from the object down to each str
    that is the text (see :func:`definition`)."""

    def __init__(self, text: str, depth: int = DEPTH):
        self.key = text.casefold()
        self.length = len(text)
        self.depth = depth

    def matches(self, value: str) -> bool:
        return len(value) <= 3 * self.length and value.casefold() == self.key  # casefold may lengthen

    def paths(self, value) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        self._budget = PER_SCAN
        self._seen: set[int] = set()
        self._kept: list = []  # what was visited stays alive, so that no id is reused in one scan
        self._walk(value, (), self.depth, found)
        self._kept = []
        return found

    def _walk(self, value, path: tuple[str, ...], depth: int, found: list) -> None:
        if isinstance(value, str):
            if self.matches(value):
                found.append(path)
            return
        if depth <= 0 or self._budget <= 0 or value is None or isinstance(value, (int, float, bytes, bool)):
            return
        if id(value) in self._seen:
            return
        self._seen.add(id(value))
        self._kept.append(value)  # pyoxigraph's and spaCy's attributes are new objects at each read
        self._budget -= 1
        kind = type(value)
        here = path + (kind.__name__,)
        for child in self._children(value, kind):
            self._walk(child, here, depth - 1, found)
            if self._budget <= 0:
                return

    @staticmethod
    def _children(value, kind):
        if kind in (list, tuple) or isinstance(value, (list, tuple)):
            return value[:PER_CONTAINER]
        if isinstance(value, dict):
            items = []
            for i, (k, v) in enumerate(value.items()):
                if i >= PER_CONTAINER:
                    break
                items += (k, v)
            return items
        if isinstance(value, (set, frozenset)):
            return [v for _, v in zip(range(PER_CONTAINER), value)]
        if inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value) \
                or isinstance(value, functools.partial) or hasattr(value, "__next__"):
            return ()  # generators and iterators included: their items are not read ahead
        module = getattr(kind, "__module__", "") or ""
        if module.startswith("spacy"):
            text = getattr(value, "text", None)
            return (text,) if isinstance(text, str) else ()
        if module.startswith("pyoxigraph"):
            return [getattr(value, name) for name in ("value", "subject", "predicate", "object")
                    if hasattr(value, name)]
        if dataclasses.is_dataclass(value):
            return [getattr(value, f.name, None) for f in dataclasses.fields(value)]
        children = []
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict):
            children += list(attributes.values())[:PER_CONTAINER]
        for cls in kind.__mro__:
            slots = cls.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if hasattr(value, name):
                    children.append(getattr(value, name))
        return children


# -------------------------------------------------------------------- the trace

@dataclasses.dataclass
class Hop:
    seq: int
    stage: str
    file: str
    name: str
    event: str  # "call" or "return" (or "yield"), where it was first seen
    shapes: list[str]  # type paths, e.g. "list>Mention>Span", in first-seen order

    def add(self, paths) -> None:
        for path in paths:
            label = ">".join(path) or "str"
            if label not in self.shapes:
                self.shapes.append(label)


class Tracer:
    """The profile function: records each kg function's first event carrying the mention, by stage."""

    def __init__(self, scanner: Scanner, roots: list[tuple[str, str]]):
        self.scanner = scanner
        self.roots = roots  # (real folder, shown as) of kg/ and viz/
        self.codes: dict = {}  # code -> (file shown, qualname) or None
        self.seq = 0
        self.hops: dict[tuple[str, str, str], Hop] = {}
        self.inside = {RDF_STAGE: 0, PAGE_STAGE: 0, "side": 0}
        self.rdf_started = False
        self.cutoff = {"rdf": None, "page": None}  # the seq ending each walk
        self.tables = None  # what graph_tables returned at the end of walk (b)
        self.started_generators: dict[int, object] = {}

    def where(self, code):
        known = self.codes.get(code, False)
        if known is not False:
            return known
        found = None
        real = os.path.realpath(code.co_filename)
        for folder, shown in self.roots:
            if real.startswith(folder + os.sep) and real.endswith(".py"):  # not a compiled template
                found = (shown + real[len(folder):], getattr(code, "co_qualname", code.co_name))
                break
        self.codes[code] = found
        return found

    def stage(self) -> str:
        if self.inside[PAGE_STAGE]:
            return "page"
        if self.inside[RDF_STAGE]:
            return "rdf"
        if self.inside["side"]:
            return "side"
        return "common" if not self.rdf_started else "after"

    def __call__(self, frame, event, arg):
        if event != "call" and event != "return":
            return
        code = frame.f_code
        place = self.where(code)
        if place is None:
            return
        name = code.co_name
        generator = code.co_flags & _GENERATOR_FLAGS
        fresh = True
        if generator and event == "call":
            fresh = id(frame) not in self.started_generators
            self.started_generators[id(frame)] = frame
        marker = fresh and not generator and (name in (RDF_STAGE, PAGE_STAGE) or name in SIDE)
        if event == "call" and marker:
            self.inside["side" if name in SIDE else name] += 1
            if name == RDF_STAGE:
                self.rdf_started = True
        self.seq += 1
        if not name.startswith("<"):
            if event == "call":
                values = [frame.f_locals.get(v) for v in self._arguments(code)] if fresh else []
            else:
                values = [arg]
            paths = [p for value in values for p in self.scanner.paths(value)]
            if paths:
                self.record(place, event if not generator or event == "call" else "yield", paths)
                # The page's tables that hold the node (the page first measures itself around empty ones).
                if event == "return" and name == TABLES and self.stage() == "page" and self.cutoff["page"] is None:
                    self.cutoff["page"] = self.seq
                    self.tables = arg
        if event == "return" and marker:
            self.inside["side" if name in SIDE else name] -= 1

    @staticmethod
    def _arguments(code) -> tuple[str, ...]:
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        return code.co_varnames[:count]

    def record(self, place: tuple[str, str], event: str, paths) -> None:
        stage = self.stage()
        if stage in ("side", "after") or (stage in self.cutoff and self.cutoff[stage] is not None):
            return
        key = (stage, *place)
        hop = self.hops.get(key)
        if hop is None:
            hop = self.hops[key] = Hop(self.seq, stage, place[0], place[1], event, [])
        hop.add(paths)
        if stage == "rdf" and any("Quad" in path or "Triple" in path for path in paths):
            self.cutoff["rdf"] = self.seq

    def walk(self, stage: str) -> list[Hop]:
        """The hops of walk (a) (``stage`` "rdf") or (b) ("page"): the common ones, then the stage's,
        each function once."""
        chosen, names = [], set()
        for hop in sorted(self.hops.values(), key=lambda h: h.seq):
            if hop.stage in ("common", stage) and (hop.file, hop.name) not in names:
                chosen.append(hop)
                names.add((hop.file, hop.name))
        return chosen


# -------------------------------------------------------------------- one measurement

def choose_mention(corpus: Path) -> str:
    """The abstract's first proposed method, read in a separate process (see the module's docstring)."""
    program = """
import json, sys
from kg.ingest import read_papers
from kg.extract import extract_papers
[ex] = list(extract_papers(list(read_papers([sys.argv[1]]))))
roles = ({r.mention: r.role for r in ex.roles} if hasattr(ex, 'roles')  # revisions with a separate Role
         else {i: m.role for i, m in enumerate(ex.mentions)})
mentions = [m for i, m in enumerate(ex.mentions) if roles.get(i) == "proposes" and m.label in ("Method", "Model")]
first = mentions[0] if mentions else next(m for m in ex.mentions if m.label == "Method")
short = {long: short for short, long in ex.acronyms.items()}
print(json.dumps(short.get(first.text, first.text)))
"""
    done = subprocess.run([sys.executable, "-c", program, str(corpus)], check=True, capture_output=True,
                          text=True, env=os.environ)
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(mention: str | None, depth: int) -> dict:
    import kg
    import kg.build
    import kg.viz

    tree = Path(kg.__file__).resolve().parent.parent
    roots = [(os.path.realpath(Path(kg.__file__).parent), "kg"), (os.path.realpath(list(kg.viz.__path__)[0]), "viz")]
    header, abstract = first_abstract()
    with tempfile.TemporaryDirectory(prefix="kg-walk-") as folder:
        corpus = Path(folder) / "one.txt"
        corpus.write_text(f"{header}\n\n{abstract}\n", encoding="utf-8")
        text = mention or choose_mention(corpus)
        parameters = inspect.signature(kg.build.build).parameters
        options = {"cache": None}
        if "processes" in parameters:
            options["processes"] = 1
        elif "executor" in parameters:
            from kg.extract import serially
            options["executor"] = serially
        tracer = Tracer(Scanner(text, depth), roots)
        sys.setprofile(tracer)
        try:
            result = kg.build.build([corpus], Path(folder) / "out" / "graph", **options)
        finally:
            sys.setprofile(None)
        nt = Path(result.outputs["nt"]).read_text(encoding="utf-8")
        literal = json.dumps(text, ensure_ascii=False)
        lines = [line for line in nt.splitlines() if f" {literal} ." in line or f" {literal}@" in line]
    node = None
    if isinstance(tracer.tables, dict) and text in tracer.tables.get("label", []):
        i = tracer.tables["label"].index(text)
        node = {"row": i, "label": text, "id": tracer.tables["id"][i],
                "kind": tracer.tables["kinds"][tracer.tables["kind"][i]]}
    walks = {}
    for name, stage in (("a", "rdf"), ("b", "page")):
        hops = tracer.walk(stage)
        shapes = []
        for hop in hops:
            for path in hop.shapes:
                for part in path.split(">"):
                    if part != "str" and part not in shapes:
                        shapes.append(part)
        walks[name] = {"hops": [dataclasses.asdict(h) for h in hops],
                       "files": list(dict.fromkeys(h.file for h in hops)),
                       "shapes": shapes, "named_shapes": [s for s in shapes if s not in _CONTAINERS],
                       "reached": tracer.cutoff[stage] is not None}
    options_shown = ", ".join(f"{k}={'serially' if k == 'executor' else v!r}" for k, v in options.items())
    return {"tree": str(tree), "mention": text, "build": f"kg.build.build(..., {options_shown})",
            "triple_lines": lines, "node": node, "walks": walks}


def report(found: dict, label: str = "") -> None:
    print(f"\n=== {label or found['tree']}: the mention {found['mention']!r}; {found['build']}")
    for name, title in (("a", "to its N-Triples line"), ("b", "to its node in the page's tables")):
        walk = found["walks"][name]
        print(f"\n({name}) {title}: {len(walk['hops'])} hops over {len(walk['files'])} files, "
              f"{len(walk['shapes'])} shapes ({len(walk['named_shapes'])} named)"
              + ("" if walk["reached"] else "  [the walk's end was not reached]"))
        stage = None
        for i, hop in enumerate(walk["hops"], 1):
            if hop["stage"] != stage:
                stage = hop["stage"]
                print(f"  -- {stage} --")
            shape = hop["shapes"][0] + (f" (+{len(hop['shapes']) - 1})" if len(hop["shapes"]) > 1 else "")
            print(f"  {i:3} {hop['file']:<28} {hop['name']:<40} {hop['event']:<6} {shape}")
        print(f"  shapes: {', '.join(walk['shapes'])}")
    for line in found["triple_lines"]:
        print(f"\nthe triple: {line}")
    if found["node"]:
        print(f"the node: {found['node']}")


# -------------------------------------------------------------------- revisions

def checkout(revision: str, folder: Path) -> Path:
    """A worktree of ``revision`` in ``folder`` that imports as ``kg`` from PYTHONPATH (as in
    bench/side_by_side.py: kg.viz and kg.ontology linked where Python looks)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(folder), revision], check=True)
    for package, source in (("viz", "viz"), ("ontology", "ontology")):
        if not (folder / "kg" / package).exists():
            (folder / "kg" / package).symlink_to(folder / source, target_is_directory=True)
    return folder


def run_revision(revision: str, args) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="kg-walk-tree-"))
    tree = scratch / "tree"
    try:
        checkout(revision, tree)
        commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        out = scratch / "walk.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--json", str(out), "--depth", str(args.depth)]
        if args.mention:
            command += ["--mention", args.mention]
        environment = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run(command, check=True, env=environment, cwd=scratch, stdout=subprocess.DEVNULL)
        found = json.loads(out.read_text(encoding="utf-8"))
        found["revision"] = f"{revision} ({commit})"
        return found
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
        subprocess.run(["rm", "-rf", str(scratch)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--revision", action="append", default=[],
                        help="measure this revision from a temporary git worktree (repeatable: side by side)")
    parser.add_argument("--mention", help="the mention's text (default: the abstract's first proposed method)")
    parser.add_argument("--depth", type=int, default=DEPTH, help=f"how deep the scan goes (default {DEPTH})")
    parser.add_argument("--json", type=Path, help="also write the measurement here as JSON")
    args = parser.parse_args()
    print(definition(args.depth))
    if not args.revision:
        found = measure(args.mention, args.depth)
        if args.json:
            args.json.write_text(json.dumps(found), encoding="utf-8")
        report(found)
        return
    results = [run_revision(revision, args) for revision in args.revision]
    for found in results:
        report(found, found["revision"])
    if args.json:
        args.json.write_text(json.dumps(results), encoding="utf-8")
    print(f"\n{'revision':<24}{'walk':<8}{'hops':>6}{'files':>7}{'shapes':>8}{'named':>7}")
    for found in results:
        for name in ("a", "b"):
            walk = found["walks"][name]
            print(f"{found['revision']:<24}{name:<8}{len(walk['hops']):>6}{len(walk['files']):>7}"
                  f"{len(walk['shapes']):>8}{len(walk['named_shapes']):>7}")


if __name__ == "__main__":
    main()
