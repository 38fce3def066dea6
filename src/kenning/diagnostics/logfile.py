"""The daemon's structured log file: one JSON object per line under `<home>/logs/`.

`kenning.core.telemetry.log_event` already emits each event as a JSON string on the
`kenning` logger; this handler writes those lines verbatim (other records are wrapped
into the same shape) to a size-rotated file that `jq` and the doctor can read.
"""

from __future__ import annotations

import json
import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from kenning.core.clock import now_iso

LOG_FILE_NAME = "kenning.jsonl"


class JsonLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if message.startswith("{") and message.endswith("}"):
            return message
        entry = {
            "at": now_iso(), "level": record.levelname.lower(), "category": record.name,
            "message": message,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def install_json_log_file(log_dir: Path, max_bytes: int = 10_000_000, level: str = "info") -> RotatingFileHandler:
    """Attach a rotating JSON-lines handler to the `kenning` logger; return it (to remove later)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    handler = RotatingFileHandler(log_dir / LOG_FILE_NAME, maxBytes=max_bytes, backupCount=5, encoding="utf-8")
    handler.setFormatter(JsonLineFormatter())
    handler.setLevel(getattr(logging, level.upper(), logging.INFO))
    logger = logging.getLogger("kenning")
    if logger.level == logging.NOTSET or logger.level > handler.level:
        logger.setLevel(handler.level)
    logger.addHandler(handler)
    return handler


def remove_handler(handler: logging.Handler) -> None:
    logging.getLogger("kenning").removeHandler(handler)
    handler.close()


def read_log_file(log_dir: Path, limit: int = 200) -> list[dict]:
    """The newest `limit` entries of the current log file (for `kenning doctor` offline)."""
    path = log_dir / LOG_FILE_NAME
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-limit:]
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out[::-1]
