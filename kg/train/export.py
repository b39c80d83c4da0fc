"""A trained span model written as ``kg build`` runs it: the encoder in ONNX, quantised to int8,
beside the heads, the tokenizer and the recipe's ``config.json``."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .adapt import encoder_path
from .dev import DevScores, score
from .network import heads_of
from .recipe import SCHEMAS
from ..extract.spans import SpanModel


def export(model, tokenizer, dev_examples, output_dir: Path, settings: dict, best: DevScores, best_epoch: int,
           log: Callable[[str], None]) -> DevScores:
    """Write the encoder to ONNX, quantise it to int8 (per channel), and save it with the heads and tokenizer."""
    import shutil
    import tempfile

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ..extract.spans import ENCODER_FILE, HEADS_FILE, TOKENIZER_FILE

    class Encoder(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    staging = Path(tempfile.mkdtemp(prefix="kg-spans-"))
    try:
        float_file = staging / "encoder.float32.onnx"
        example = (torch.ones((2, 16), dtype=torch.long), torch.ones((2, 16), dtype=torch.long))
        torch.onnx.export(Encoder(model.encoder), example, str(float_file), input_names=["input_ids", "attention_mask"],
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={"input_ids": {0: "batch", 1: "pieces"},
                                        "attention_mask": {0: "batch", 1: "pieces"}, "hidden": {0: "batch", 1: "pieces"}})
        int8_file = staging / ENCODER_FILE.name
        quantize_dynamic(str(float_file), str(int8_file), weight_type=QuantType.QInt8, per_channel=True)
        np.savez(staging / HEADS_FILE.name, **heads_of(model))
        shutil.copy(Path(encoder_path()) / "tokenizer.json", staging / TOKENIZER_FILE.name)
        labels = SCHEMAS[settings["schema"]]
        if settings["schema"] != "scierc":  # the labels belong to the model: SpanModel.from_files reads them here
            (staging / "config.json").write_text(json.dumps({"labels": labels.to_json()}) + "\n")
        quantised = score(SpanModel.from_files(staging), dev_examples, settings["schema"])
        log(f"int8 encoder ({int8_file.stat().st_size / 1e6:.1f} MB): dev {quantised.line()}")
        # The int8 encoder ships even where it costs more than half a point: float32 is 90 MB and
        # float16 45 MB, past what the package may carry; the config records what it costs.
        float_file.unlink()
        trained_on = ("SciERC train" if settings["schema"] == "scierc"
                      else "SciER train (GPL-3.0) with SciERC train for Metric")
        if settings["schema"] == "layers":
            trained_on += " and kg's annotated abstracts (both layers)"
        prior = (f"after {settings['adapt_epochs']} epochs of masked-LM training on unlabelled abstracts, "
                 if settings["adapt_epochs"] else "")
        (staging / "config.json").write_text(json.dumps({
            "encoder": f"sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), {prior}fine-tuned on {trained_on}",
            "precision": "int8", "best_epoch": best_epoch, "labels": labels.to_json(), "training": settings,
            "dev": {**quantised.figures(), **{f"float32_{kind}": v for kind, v in best.figures().items()}},
        }, indent=2) + "\n")
        output_dir.mkdir(parents=True, exist_ok=True)
        for file in staging.iterdir():
            file.replace(output_dir / file.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log(f"Saved {output_dir}; dev {quantised.line()}")
    return quantised
