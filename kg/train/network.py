"""The span model as PyTorch trains it: the encoder under an entity head and a relation head
(laid out as :class:`kg.extract.spans.SpanModel` reads them), its batches and its loss."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..extract.spans import MAX_WIDTH, Labels, between_pieces
from .examples import Target
from .recipe import SCHEMAS


def head(inputs: int, classes: int, settings: dict):
    """A head: one hidden layer with dropout, laid out as ``SpanModel`` reads it (``0`` and ``3`` are linear)."""
    from torch import nn

    return nn.Sequential(nn.Linear(inputs, settings["hidden"]), nn.ReLU(), nn.Dropout(settings["dropout"]),
                         nn.Linear(settings["hidden"], classes))


def build_model(encoder_dir: str, settings: dict, labels: Labels = SCHEMAS["scierc"]):
    import torch
    from torch import nn
    from transformers import AutoModel

    class Spans(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = AutoModel.from_pretrained(encoder_dir)
            size = self.encoder.config.hidden_size
            self.width = nn.Embedding(MAX_WIDTH + 1, settings["width_dim"])
            self.label = nn.Embedding(len(labels.entity), settings["label_dim"])
            self.entity = head(2 * size + settings["width_dim"], len(labels.entity) + 1, settings)
            self.relation = head(5 * size + 2 * settings["label_dim"], len(labels.relation) + 1, settings)
            # Start from the classes' rough priors (2% of candidate spans are entities, 20% of entity
            # pairs related): the first epoch then learns features, not frequencies.
            with torch.no_grad():
                for layer, none in ((self.entity[3], 0.98), (self.relation[3], 0.8)):
                    others = layer.bias.shape[0] - 1
                    layer.bias.copy_(torch.log(torch.tensor([none] + [(1 - none) / others] * others)))

        def forward(self, batch):
            states = self.encoder(input_ids=batch["ids"], attention_mask=batch["mask"]).last_hidden_state
            b, first, last, width = batch["span"].T
            entity = self.entity(torch.cat([states[b, first], states[b, last], self.width(width)], dim=1))
            if not len(batch["pair"]):
                return entity, None
            pb, af, al, bf, bl, la, lb, gs, ge = batch["pair"].T
            positions = torch.arange(states.shape[1], device=states.device)
            inside = (positions[None, :] >= gs[:, None]) & (positions[None, :] < ge[:, None])
            gap = states[pb].masked_fill(~inside[:, :, None], -1e4).max(dim=1).values
            gap = torch.where(inside.any(dim=1, keepdim=True), gap, torch.zeros_like(gap))
            features = torch.cat([states[pb, af], states[pb, al], states[pb, bf], states[pb, bl],
                                  self.label(la), self.label(lb), gap], dim=1)
            return entity, self.relation(features)

    return Spans()


def collate(batch: Sequence[Target], weights: dict[str, float] | None = None):
    """A batch as tensors; ``weights`` gives a corpus's spans and pairs a weight in the loss (1 where unnamed)."""
    import torch

    width = max(len(t.chunk.ids) for t in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    spans, span_allowed, pairs, pair_labels, span_weight, pair_weight = [], [], [], [], [], []
    for row, t in enumerate(batch):
        c = t.chunk
        weight = (weights or {}).get(t.corpus, 1.0)
        span_weight.extend([weight] * len(t.spans))
        pair_weight.extend([weight] * len(t.pairs))
        ids[row, : len(c.ids)] = torch.tensor(c.ids)
        mask[row, : len(c.ids)] = 1
        for s, e in t.spans.tolist():
            spans.append((row, c.first[s], c.last[e - 1], e - s))
        span_allowed.append(t.span_allowed)
        for (a, b), (la, lb), label in zip(t.pairs, t.pair_entity_labels, t.pair_labels):
            gs, ge = between_pieces(c, a, b)
            pairs.append((row, c.first[a[0]], c.last[a[1] - 1], c.first[b[0]], c.last[b[1] - 1], la, lb, gs, ge))
            pair_labels.append(label)
    return {"ids": ids, "mask": mask, "span": torch.tensor(spans, dtype=torch.long).reshape(-1, 4),
            "span_allowed": torch.from_numpy(np.concatenate(span_allowed)),
            "pair": torch.tensor(pairs, dtype=torch.long).reshape(-1, 9),
            "pair_labels": torch.tensor(pair_labels, dtype=torch.long),
            "span_weight": torch.tensor(span_weight, dtype=torch.float32),
            "pair_weight": torch.tensor(pair_weight, dtype=torch.float32)}


def heads_of(model) -> dict[str, np.ndarray]:
    """The heads' weights as numpy arrays, named as ``SpanModel`` reads them."""
    return {name: value.detach().cpu().numpy() for name, value in model.state_dict().items()
            if not name.startswith("encoder.")}


def torch_encoder(model, device: str = "cpu") -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    import torch

    def encode(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model.encoder(input_ids=torch.from_numpy(ids).to(device),
                                 attention_mask=torch.from_numpy(mask).to(device)).last_hidden_state.float().cpu().numpy()
    return encode


def allowed_loss(logits, allowed, weight=None):
    """``-log`` of the total probability of each row's allowed classes, summed (each row times its
    ``weight``); rows allowing every class add 0."""
    import torch

    rows = -(torch.logsumexp(logits.masked_fill(~allowed, float("-inf")), dim=1) - torch.logsumexp(logits, dim=1))
    return (rows if weight is None else rows * weight).sum()
