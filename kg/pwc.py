"""Papers with Code: task, dataset and metric names, PwC's task hierarchy and research areas.

The lexicon ``kg/data/pwc.json.gz`` is derived once from the Papers with Code
data (CC-BY-SA 4.0, © Papers with Code contributors; derived from the
2025-07-25 dump as published by the World-Snapshot/papers-with-code project)
by ``python -m kg.pwc FOLDER`` and ships with the package under the same
licence. The raw rows hold junk (tasks named "16k", benchmark strings that are
SQL probes), so only names that read like names are kept, and a parent task
only where the child shares its head word ("Lesion Segmentation" under
"Medical Image Segmentation").

Links to Linked Papers With Code use its IRI scheme,
``https://linkedpaperswithcode.com/<kind>/<PwC slug>``, with the slug derived
from the name as PwC derives it (:func:`kg.vocab.lpwc_iri`), not looked up.

>>> lexicon = load()
>>> lexicon.task("document summarization"), lexicon.dataset("penn treebank")
('Document Summarization', 'Penn Treebank')
>>> lexicon.parent["Document Summarization"]
'Text Summarization'
>>> lexicon.area["Image Classification"]
'Computer Vision'
"""
from __future__ import annotations

import csv
import functools
import gzip
import json
import re
import sys
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from .keys import resolution_key

LEXICON_FILE = files("kg") / "data" / "pwc.json.gz"
ATTRIBUTION = ("Papers with Code task, dataset and metric names and task hierarchy, CC-BY-SA 4.0, "
               "derived from the 2025-07-25 Papers with Code dump")

_DOMAIN_AREAS = {"cv": "Computer Vision", "nlp": "Natural Language Processing", "audio": "Audio"}
_PARENTHESES = re.compile(r"\s*\([^)]*\)")


@dataclass
class Lexicon:
    """PwC names by resolution key, each task's parent task and research area."""

    tasks: dict[str, str] = field(default_factory=dict)  # resolution key -> PwC name
    datasets: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)
    parent: dict[str, str] = field(default_factory=dict)  # task name -> parent task name
    area: dict[str, str] = field(default_factory=dict)  # task name -> research area
    areas: list[str] = field(default_factory=list)

    def task(self, key: str) -> str | None:
        return self.tasks.get(key)

    def dataset(self, key: str) -> str | None:
        return self.datasets.get(key)

    def metric(self, key: str) -> str | None:
        return self.metrics.get(key)

    def match(self, type_name: str, key: str) -> str | None:
        """The PwC name of the entity of ``type_name`` with resolution ``key``, or None."""
        table = {"Task": self.tasks, "Dataset": self.datasets, "Metric": self.metrics}.get(type_name)
        return table.get(key) if table is not None else None


@functools.lru_cache(maxsize=1)
def load() -> Lexicon:
    """The shipped lexicon (read once)."""
    with gzip.open(LEXICON_FILE.open("rb"), "rt", encoding="utf-8") as f:
        data = json.load(f)
    lexicon = Lexicon(parent=data["parent"], area=data["area"], areas=data["areas"])
    for kind, table in (("tasks", lexicon.tasks), ("datasets", lexicon.datasets), ("metrics", lexicon.metrics)):
        for name in sorted(data[kind], key=lambda n: (n.isupper(), n)):  # "Accuracy" before "ACCURACY"
            for key in {resolution_key(name, name=True), resolution_key(_PARENTHESES.sub("", name), name=True)}:
                table.setdefault(key, name)
    return lexicon


# ----------------------------------------------------------------------------- derivation


def _name_like(name: str, *, max_words: int, needs_capital: bool) -> bool:
    words = name.split()
    if not name or not 1 <= len(words) <= max_words or len(name) > 60:
        return False
    if re.search(r"[\"'`;=<>{}\[\]\\|*]|--|\.\.\.", name) or not re.search(r"[A-Za-z]{2}", name):
        return False
    return not needs_capital or any(c.isupper() or c.isdigit() for c in name)


def _cells(value: str) -> list[str]:
    return [_PARENTHESES.sub("", v).strip() for v in value.split("; ") if v.strip() and not v.strip().endswith("...")]


def derive(folder: str | Path) -> dict:
    """The lexicon's content from PwC's ``world_snapshot`` folder (``data/all_tasks.txt``, ``results/``)."""
    folder = Path(folder)
    tasks = {line.strip().strip('"') for line in (folder / "data" / "all_tasks.txt").read_text(encoding="utf-8").splitlines()}
    areas = [row["Research Area"] for row in csv.DictReader((folder / "results" / "research_areas.csv").open(encoding="utf-8"))]
    datasets, metrics, area = set(), set(), {}
    for domain in ("cv", "nlp", "audio", "other"):
        for row in csv.DictReader((folder / "results" / domain / f"{domain}_tasks_detailed.csv").open(encoding="utf-8")):
            name = row["Task Name"].strip()
            tasks.add(name)
            categories = [c for c in row.get("Categories", "").split("; ") if c in areas]
            chosen = _DOMAIN_AREAS.get(domain) or (categories[0] if categories else None)
            if chosen:
                area.setdefault(name, chosen)
            datasets.update(_cells(row.get("Common Datasets (Top 10)", "")))
            metrics.update(_cells(row.get("SOTA Metrics", "")))
    tasks = {t for t in tasks if _name_like(t, max_words=6, needs_capital=False) and not re.fullmatch(r"[\d\s\w]{1,3}", t)}
    parent = {}
    for row in csv.DictReader((folder / "results" / "task_hierarchy.csv").open(encoding="utf-8")):
        above = row["Parent Task"].strip()
        head = _PARENTHESES.sub("", above).split()[-1:] if above in tasks else []
        for child in row["Child Tasks"].split("; "):
            child = child.strip()
            if (head and len(above.split()) >= 2 and child in tasks and child != above
                    and _PARENTHESES.sub("", child).split()[-1:] == head):
                parent.setdefault(child, above)
    return {
        "licence": "CC-BY-SA-4.0", "attribution": ATTRIBUTION,
        "tasks": sorted(tasks),
        "datasets": sorted(d for d in datasets if _name_like(d, max_words=4, needs_capital=True)),
        "metrics": sorted(m for m in metrics if _name_like(m, max_words=4, needs_capital=False)),
        "parent": dict(sorted(parent.items())),
        "area": {t: a for t, a in sorted(area.items()) if t in tasks},
        "areas": areas,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m kg.pwc WORLD_SNAPSHOT_FOLDER [OUT]``: write the lexicon (default: the package's)."""
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        raise SystemExit("usage: python -m kg.pwc WORLD_SNAPSHOT_FOLDER [OUT.json.gz]")
    out = Path(args[1]) if len(args) > 1 else Path(str(LEXICON_FILE))
    data = derive(args[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(out, "wb", mtime=0) as f:  # mtime 0: the same data, the same bytes
        f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    print(f"{out}: {len(data['tasks'])} tasks ({len(data['parent'])} with a parent), "
          f"{len(data['datasets'])} datasets, {len(data['metrics'])} metrics, {len(data['areas'])} areas")


if __name__ == "__main__":
    main()
