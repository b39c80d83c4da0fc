"""Word lists the mention rules read: head nouns that decide a type, words that are never names.

Lemmas, lower case. One list per fact, so a newcomer can see what the rules
know and add to it.
"""
import re

#: Head nouns of a noun phrase naming a dataset or benchmark ("the CIFAR image benchmark").
DATASET_HEADS = frozenset("""
benchmark dataset data-set corpus corpora suite testbed leaderboard collection database
""".split())

#: Head nouns of a phrase naming a task ("visual question answering", "video generation").
TASK_HEADS = frozenset("""
classification detection segmentation generation translation answering summarization retrieval
recognition prediction estimation clustering grounding completion planning forecasting editing
captioning synthesis tracking parsing localization reconstruction understanding reasoning
alignment search verification navigation manipulation control discovery design modeling modelling
imputation denoising restoration super-resolution inpainting ranking recommendation
extraction tagging labeling labelling annotation identification attribution auditing evaluation
routing merging pruning compression unlearning coding
""".split())

#: Head nouns of a phrase naming a method, architecture or family of models.
METHOD_HEADS = frozenset("""
learning optimization optimisation network model algorithm mechanism attention transformer
regression descent distillation fine-tuning finetuning quantization sampling decoding augmentation
embedding encoder decoder autoencoder gan diffusion policy architecture method approach framework
technique strategy scheme module layer head estimator optimizer classifier regularization
tuning training prompting inference matching flow process kernel encoding
""".split())

#: Heads too vague to name anything on their own: "our method", "the framework".
GENERIC_HEADS = frozenset("""
method approach framework model system algorithm technique strategy scheme module mechanism
architecture pipeline solution tool work paper study analysis experiment result performance task
problem data dataset benchmark baseline setting setup variant version component design process
procedure way idea insight finding contribution improvement advance challenge issue limitation
question application domain field area aspect property capability ability quality effect impact
evaluation training inference learning network layer head policy objective loss function metric
score efficiency effectiveness robustness generalization state-of-the-art sota art
information knowledge signal feature representation output input sample example instance case
number set range level type kind family class form scale size amount degree rate step stage state
""".split())

#: Last words that say what kind of thing a name is: "Penn Treebank dataset" is Penn Treebank,
#: "batch normalization layer" batch normalization, "classification task" classification
#: (``kg.resolve.entities.head_variants``, where the shorter name has the same type). Not "process": a
#: Gaussian process is no Gaussian.
KIND_WORDS = frozenset("""
dataset benchmark corpus layer mechanism module paradigm model architecture method algorithm
technique framework approach scheme procedure optimizer optimiser task problem domain setting
application system pipeline strategy component
""".split())

#: Last words that describe what a name is, not which: "the dropout algorithm" is dropout,
#: "the EM algorithm" is EM. ("model" and "network" are not here: a language model is not a language;
#: nor "task" and "problem": an optimization problem is no optimization algorithm. A task written with
#: its kind word joins the task where the types agree: :func:`kg.resolve.entities.head_variants`.)
NAME_DESCRIPTORS = frozenset("""
algorithm method technique approach framework scheme strategy procedure
""".split())

#: First words of idioms that are no names: "much attention", "considerable interest".
IDIOM_STARTS = frozenset("""
much considerable great little growing increasing tremendous huge enormous broad wide widespread
""".split())

#: Adjectives and determiners dropped from the front of a phrase: they evaluate, not name.
#: Endings of words that describe rather than name: "convolutional", "generative", "supervised".
ADJECTIVE_ENDINGS = ("al", "ic", "ive", "ous", "ary", "ed", "ful", "less", "able", "ible", "ian")

#: Nouns an "of" passes through to what they name: "the concept of X", "a family of models called X".
TRANSPARENT_HEADS = frozenset("concept notion idea class family kind type form set suite collection".split())

#: Words that place a thing in the paper, not name it: "our novel encoder" is the encoder.
PAPER_RELATIVE = frozenset("novel new proposed existing previous prior current recent".split())

EVALUATIVE = frozenset("""
a an the this that these those our their its his her my your we novel new proposed existing
various diverse different many several multiple numerous some any each every other such same
simple effective efficient powerful strong robust challenging complex comprehensive unified
systematic extensive thorough significant substantial remarkable superior state-of-the-art
previous prior current recent popular standard conventional traditional typical common general
key important critical main core principal first second third two three four five ten well-known
widely-used widely used large-scale small-scale practical theoretical empirical rigorous
lightweight scalable interpretable flexible generic specific particular certain given whole
fundamental promising competitive improved better best higher lower modern classical classic
right wrong additional single original resulting corresponding respective individual overall
existing prevailing underlying desired resultant accurate limited inadequate shallow high low complete
consistent correct enhanced intermediate subsequent rational next real-world worst-case
art sophisticated well-known well known termed called so-called record
""".split())

def _plural(name: str) -> str:
    """"error rates", "accuracies"; a name in capitals or already plural stays as it is."""
    if not name[-1].islower() or name.endswith("s"):
        return name
    return name[:-1] + "ies" if name.endswith("y") else name + "s"


#: The metrics results are ranked by, each with the names papers give it: one entity each, so
#: that "test error rate" and "classification error" rank together on a leaderboard. Which way
#: is better comes from its words (:data:`LOWER_IS_BETTER`, :data:`HIGHER_IS_BETTER`).
METRIC_VARIANTS = {
    # A classifier's accuracy and error are its top-1 ones: ranked apart, one leaderboard would split in two.
    "accuracy": ("accuracy", "test accuracy", "classification accuracy", "validation accuracy",
                 "prediction accuracy", "recognition accuracy", "top-1 accuracy", "top1 accuracy",
                 "top 1 accuracy", "top-1 test accuracy"),
    "error": ("error", "error rate", "test error", "test error rate", "classification error",
              "classification error rate", "test set error", "top-1 error", "top1 error", "top-1 error rate",
              "top-1 test error", "top 1 error", "top1 error rate"),
    "top-5 accuracy": ("top-5 accuracy", "top5 accuracy", "top 5 accuracy"),
    "top-5 error": ("top-5 error", "top5 error", "top-5 error rate", "top-5 test error", "top 5 error"),
    "perplexity": ("perplexity", "test perplexity", "validation perplexity", "word-level perplexity",
                   "perplexities"),
    "bits per character": ("bits per character", "bits-per-character", "BPC", "bits/character"),
    "BLEU": ("BLEU", "BLEU score", "BLEU scores"),
    "F1": ("F1", "F1 score", "F1-score", "F1 scores", "F-score", "F-measure"),
    "Inception Score": ("Inception Score", "inception scores"),
    "FID": ("FID", "Fréchet Inception Distance", "FID score", "Frechet Inception Distance"),
    "word error rate": ("word error rate", "WER"),
}

#: Names of one thing that no rule of spelling, initials or kind words can tell are one: a name
#: -> the name it is short for or another spelling of. Only names used far beyond any one paper.
KNOWN_ALIASES = {
    "ResNet": "residual network", "ResNets": "residual network", "seq2seq": "sequence-to-sequence",
    "MS-COCO": "COCO", "MS COCO": "COCO", "MSCOCO": "COCO", "ConvNet": "convolutional neural network",
    "ConvNets": "convolutional neural network", "ReLU": "rectified linear unit", "BatchNorm": "batch normalization",
    "LayerNorm": "layer normalization", "BiLSTM": "bidirectional LSTM", "Bi-LSTM": "bidirectional LSTM",
    "BiGRU": "bidirectional GRU", "ConvLSTM": "convolutional LSTM", "kNN": "k-nearest neighbors",
    "k-NN": "k-nearest neighbors", "VGGNet": "VGG", "BPTT": "backpropagation through time",
    "backprop": "backpropagation", "MLP": "multilayer perceptron", "ILSVRC": "ImageNet",
    "ILSVRC 2012": "ImageNet", "ILSVRC-2012": "ImageNet", "ILSVRC2012": "ImageNet", "ImageNet-1k": "ImageNet",
}

#: Measures reported as results. Matched case-insensitively as whole phrases.
METRICS = (
    "accuracy", "top-1 accuracy", "top-5 accuracy", "F1", "F1 score", "F1-score", "macro-F1",
    "micro-F1", "precision", "recall", "BLEU", "ROUGE", "ROUGE-L", "METEOR", "CIDEr", "perplexity",
    "FID", "Fréchet Inception Distance", "Inception Score", "AUC", "AUROC", "AUPRC", "ROC-AUC",
    "success rate", "success rates", "win rate", "win rates", "pass@1", "pass@k", "exact match", "mAP",
    "IoU", "mIoU", "PSNR", "SSIM", "LPIPS", "WER", "word error rate", "CER", "MSE", "MAE", "RMSE",
    "mean squared error", "mean absolute error", "CLIP score", "CLIPScore", "Spearman correlation",
    "Pearson correlation", "NDCG", "MRR", "hit rate", "recall@k", "BERTScore", "Elo", "throughput",
    "latency", "calibration error", "ECE", "attack success rate", "FVD", "KID", "mean reciprocal rank",
    "false positive rate", "UAS", "LAS", "negative log-likelihood",
    *(form for names in METRIC_VARIANTS.values() for name in names for form in (name, _plural(name))),
)

#: Organisms a paper studies are its subject matter, not one of kg's kinds: "HIV-1", "SARS-CoV-2",
#: "influenza A", "E. coli", "Zika virus".
ORGANISMS = re.compile(r"^(?:HIV(?:-\d)?|SIV|SARS-CoV(?:-\d)?|MERS-CoV|H\d+N\d+|influenza(?: [AB])?|Ebola|Zika|"
                       r"[A-Z]\. ?[a-z]{3,}|.*\b(?:virus|viruses|bacteria|bacterium|phage)s?)$", re.IGNORECASE)

#: Assay readouts (half-maximal concentrations, binding and dissociation constants) are measures: Metrics.
ASSAY_MEASURES = re.compile(r"^(?:p?[IE]C50|[CG][CI]50|LD50|pK[id]|K[idD]|MIC)$")

#: Well-known methods whose names look like plain words, so that no spelling or head noun tells
#: they are names ("dropout", "Adam"). Matched like ``METRICS``.
METHOD_NAMES = (
    "dropout", "zoneout", "DropConnect", "batchnorm", "BatchNorm", "LayerNorm", "Adam", "AdaGrad", "Adagrad",
    "Adadelta", "RMSProp", "RMSprop", "AMSGrad", "word2vec", "GloVe", "fastText", "doc2vec", "REINFORCE",
    "backpropagation", "Q-learning", "SARSA", "skip-gram", "CBOW", "beam search", "weight decay",
    "early stopping", "label smoothing", "mixup", "Cutout", "teacher forcing", "gradient clipping", "momentum",
    # Classes of method that SciER's annotators leave out, so the span model never learned them.
    "flow matching", "large language model", "large language models", "diffusion model", "diffusion models",
    "knowledge distillation", "contrastive learning", "graph neural network", "graph neural networks",
    "mixture of experts", "mixture-of-experts", "low-rank adaptation", "chain-of-thought prompting",
)

#: Families of named pretrained models: a name starting with one of these is a Model.
MODEL_FAMILIES = (
    "GPT", "LLaMA", "Llama", "Qwen", "Mistral", "Mixtral", "Gemma", "Gemini", "Claude", "DeepSeek",
    "Phi", "BERT", "RoBERTa", "DeBERTa", "ALBERT", "ELECTRA", "T5", "Flan", "BART", "OPT", "BLOOM",
    "Falcon", "Vicuna", "Alpaca", "ViT", "DeiT", "Swin", "CLIP", "SigLIP", "BLIP", "LLaVA", "InternVL",
    "ResNet", "VGG", "DenseNet", "EfficientNet", "MobileNet", "ConvNeXt", "YOLO", "SAM", "DINO",
    "DINOv2", "Stable Diffusion", "SDXL", "DALL-E", "Imagen", "Whisper", "wav2vec", "HuBERT",
    "CodeLlama", "StarCoder", "Codex", "o1", "o3", "o4", "Grok", "Kimi", "GLM", "ChatGLM", "Yi",
    "Baichuan", "InternLM", "Evo", "ESM", "AlphaFold", "Sora", "Veo", "Wan", "Hunyuan", "FLUX",
)

#: Well-known datasets and benchmarks whose names carry no "benchmark" cue in most sentences.
KNOWN_DATASETS = (
    "MNIST", "Fashion-MNIST", "CIFAR", "CIFAR-10", "CIFAR-100", "ImageNet", "ImageNet-1K",
    "ImageNet-21K", "COCO", "MS-COCO", "Pascal VOC", "ADE20K", "Cityscapes", "CelebA", "LSUN", "FFHQ",
    "MMLU", "MMLU-Pro", "GSM8K", "MATH", "HumanEval", "MBPP", "SWE-bench", "LiveCodeBench", "AIME",
    "GPQA", "ARC", "HellaSwag", "TruthfulQA", "BIG-bench", "BBH", "SQuAD", "GLUE", "SuperGLUE",
    "WikiText", "WikiText-103", "C4", "The Pile", "RedPajama", "LongBench", "RULER", "HELMET",
    "MT-Bench", "AlpacaEval", "Arena-Hard", "Chatbot Arena", "MMMU", "MathVista", "VQAv2", "GQA",
    "TextVQA", "DocVQA", "ChartQA", "RefCOCO", "AndroidWorld", "WebArena", "Mind2Web", "OSWorld",
    "Kinetics", "UCF101", "LibriSpeech", "Common Voice", "OGB", "Cora", "Citeseer", "PubMed",
    "D4RL", "Atari", "MuJoCo", "Meta-World", "nuScenes", "KITTI", "ShapeNet", "ScanNet", "CUB",
)

#: Verbs with which a paper introduces its own contribution ("we propose X").
PROPOSE_VERBS = frozenset("""
propose introduce present develop design build construct create release curate establish
contribute offer devise formulate unveil compile describe suggest
""".split())

#: Subjects that make a proposing verb the paper's own claim.
SELF_SUBJECTS = frozenset("we work paper study i article".split())

#: Words around a mention that mark a comparison with it.
COMPARE_WORDS = frozenset("""
outperform surpass beat exceed compare than over baseline baselines versus vs. vs rival
""".split())

#: Verbs and nouns that make "on X" an evaluation on a dataset.
EVALUATION_CONTEXT = frozenset("""
evaluate evaluation experiment result achieve attain reach obtain score accuracy performance
perform outperform improve improvement gain test benchmark train fine-tune finetune pretrain
validate state-of-the-art sota rate report demonstrate show
""".split())

#: Nouns that turn "the problem of X" / "X task" into a task mention.
TASK_CUES = frozenset("task problem challenge".split())

#: Generic words that name a metric only right after a value ("5.6% error", "12% errors").
METRICS_AFTER_VALUE = {"error", "errors", "loss"}
#: Short names, as written, that are a metric right after a number ("16.8 AP", "26.8 PQ", "62.1 APbox")
#: and may be anything elsewhere.
METRICS_AFTER_NUMBER = {"AP", "AP50", "AP75", "APbox", "APmask", "AR", "PQ", "mAP50", "NDS", "mAR"}

#: Words of a metric's name that say which way is better ("test error rate": lower).
LOWER_IS_BETTER = frozenset("""
error errors loss perplexity fid wer cer ter mse mae rmse latency distance lpips bpc bpd regret cost time
violation violations divergence kid ece nll mpjpe ade fde epe chamfer absrel forgetting flops nfe nfes ate bits
""".split())
HIGHER_IS_BETTER = frozenset("""
accuracy success f1 precision recall bleu rouge rouge-l meteor cider auc auroc auprc map iou miou psnr ssim
score win pass@1 pass@k match correlation reward return clipscore hit hits ndcg mrr coverage
ap ap50 ap75 apbox apmask map50 nds pq mota hota idf1 spl em dice mcc kappa pearson spearman elo ar ma las uas
fidelity robustness fps
""".split())

#: Two-word idioms whose second word the learned NER takes for a mention ("on average").
IDIOMS = frozenset({("on", "average"), ("in", "general"), ("in", "practice"), ("in", "particular"),
                    ("at", "scale"), ("in", "contrast")})


#: A phrase's last word written for another: "Generative Adversarial Nets" are networks.
HEAD_SYNONYMS = {"net": "network"}


def lower_is_better(metric: str) -> bool | None:
    """Whether a lower value of ``metric`` is better (error, perplexity, FID); None when unknown.

    >>> lower_is_better("test error rate"), lower_is_better("success rates"), lower_is_better("novelty")
    (True, False, None)
    """
    words = set(metric.lower().replace("-", " ").replace("^", " ").replace("_", " ").split())  # "AP^m_all" is an AP
    if words & LOWER_IS_BETTER:
        return True
    if words & HIGHER_IS_BETTER:
        return False
    return None
