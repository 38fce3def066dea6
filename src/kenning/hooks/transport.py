"""The hook's way to the daemon: where it is (read cheaply) and one POST under one deadline.

Every prompt and tool step of an agent starts a hook process, so this module keeps to what
Python has loaded anyway plus the C socket module (`_socket`: `socket.py` and its selectors and
enums cost a hook ~2.5 ms of CPU, issue 36; TLS loads `socket` and `ssl` when a URL asks for it):
no urllib.request / http.client (they pull in the email parser), no PyYAML unless config.yaml
uses YAML beyond plain `key: value` lines, no pydantic, and JSON on the C codec (hooks/jsonc.py). The whole request — connect, send, every byte of the answer — shares one
wall-clock deadline, so a daemon that trickles its answer cannot hold the agent longer than
the hook timeout.
"""

from __future__ import annotations

import _socket
import os
import time

from kenning.hooks.jsonc import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a few ms of every hook's start; annotations are strings here
    from collections.abc import Mapping

DEFAULT_PORT = 3850
DEFAULT_TIMEOUT_S = 2.0
MAX_ANSWER_BYTES = 8 * 1024 * 1024
# each hook request names its session here, so a balancer in front of several daemons on one
# PostgreSQL can keep a session on one daemon (docs/teams.md: the observer's step scratchpad then stays whole)
SESSION_HEADER = "X-Kenning-Session"
_YAML_SPECIAL = tuple("{[&*!|>%@`")


# -- where is the daemon -----------------------------------------------------------------------
def _scalar(raw: str) -> str | None:
    """A plain YAML scalar (`value`, 'value', "value", trailing `# comment`); None if it is more."""
    raw = raw.strip()
    if not raw:
        return ""
    if raw[0] in "'\"":
        quote = raw[0]
        end = raw.find(quote, 1)
        if end < 0 or "\\" in raw[1:end] or raw[end + 1:].strip()[:1] not in ("", "#"):
            return None
        return raw[1:end]
    if raw.startswith(_YAML_SPECIAL):
        return None
    return raw.split(" #", 1)[0].rstrip()


def _simple_config(text: str) -> dict[str, object] | None:
    """host, port, auth_token, sessions.hook_timeout_s and sessions.transcript_roots from plain
    `key: value` YAML; None if unsure."""
    found: dict[str, object] = {}
    sessions: dict[str, str] = {}  # found["sessions"] once it has a key
    section: str | None = None
    child_indent: int | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or (stripped == "---" and not line[0].isspace()):
            continue
        indent = len(line) - len(line.lstrip())
        if "\t" in line[:indent]:
            return None
        key, sep, value = stripped.partition(":")
        simple_key = bool(sep) and key.replace("_", "").replace("-", "").isalnum()
        if not indent:
            if not simple_key or value.strip().startswith(_YAML_SPECIAL):
                return None
            section, child_indent = (key if not value.strip() else None), None
            if key in ("host", "port", "auth_token"):
                parsed = _scalar(value)
                if parsed is None:
                    return None
                found[key] = parsed
            continue
        if section != "sessions":
            continue  # some other section's content: not ours
        child_indent = indent if child_indent is None else child_indent
        if indent == child_indent and simple_key and key == "transcript_roots":
            parsed = _scalar(value)  # one os.pathsep-separated string; a YAML list goes to PyYAML
            if not parsed:
                return None
            found.setdefault("sessions", sessions)
            sessions[key] = parsed
        if indent == child_indent and simple_key and key == "hook_timeout_s":
            parsed = _scalar(value)
            if parsed is None:
                return None
            found.setdefault("sessions", sessions)
            sessions[key] = parsed
    return found


def read_config(home: str) -> dict[str, object]:
    """The daemon-related keys of `$KENNING_HOME/config.yaml` ({} when absent or unreadable). A
    YAML config is the user's file: any shape, read with isinstance checks."""
    try:
        with open(os.path.join(home, "config.yaml"), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, ValueError):
        return {}
    simple = _simple_config(text)
    if simple is not None:
        return simple
    try:
        import yaml  # only for configs beyond plain `key: value` lines

        loaded = yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - a broken config must not break the agent
        return {}
    return loaded if isinstance(loaded, dict) else {}


def home_dir(environ: Mapping[str, str] | None = None) -> str:
    """kenning's home folder: `KENNING_HOME`, else ~/.kenning."""
    env = os.environ if environ is None else environ
    return os.path.expanduser(env.get("KENNING_HOME") or os.path.join("~", ".kenning"))


def daemon_endpoint(environ: dict[str, str] | None = None,
                    config: Mapping[str, object] | None = None) -> tuple[str, str | None, float]:
    """(base_url, bearer token, timeout seconds) from the environment and config.yaml (`config`:
    what `read_config` already read of it).

    A light reading of the same sources `core.config.load_settings` uses (KENNING_URL,
    KENNING_HOST/PORT/TOKEN, $KENNING_HOME/config.yaml) without importing pydantic.
    """
    env = os.environ if environ is None else environ
    data = read_config(home_dir(env)) if config is None else config
    host = str(env.get("KENNING_HOST") or data.get("host") or "127.0.0.1")
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    port = env.get("KENNING_PORT") or data.get("port") or DEFAULT_PORT
    token = env.get("KENNING_TOKEN") or data.get("auth_token") or None
    given = data.get("sessions")
    sessions = given if isinstance(given, dict) else {}
    try:
        timeout = float(env.get("KENNING_HOOK_TIMEOUT") or sessions.get("hook_timeout_s") or DEFAULT_TIMEOUT_S)
    except (TypeError, ValueError):
        timeout = DEFAULT_TIMEOUT_S
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    url = env.get("KENNING_URL") or f"http://{host}:{port}"
    return url.rstrip("/"), (str(token) if token else None), timeout


# -- one POST ------------------------------------------------------------------------------------
def split_url(base_url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path prefix) of an http(s) URL; ValueError when it is not one."""
    scheme, sep, rest = base_url.partition("://")
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {base_url!r}")
    netloc, _, prefix = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        host, _, after = netloc[1:].partition("]")
        port_text = after[1:] if after.startswith(":") else ""
    else:
        host, _, port_text = netloc.partition(":")
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    return scheme, host, port, ("/" + prefix).rstrip("/")


def session_header(body: Mapping[str, object]) -> str | None:
    """The request's session key for SESSION_HEADER: printable ASCII up to 200 characters, else
    None (a header carries no other text safely; the body has the key either way)."""
    key = body.get("session_key")
    if isinstance(key, str) and 0 < len(key) <= 200 and key.isascii() and key.isprintable():
        return key.strip() or None
    return None


class Deadline:
    """One wall-clock budget shared by every socket operation of a hook."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left; raises TimeoutError when none are."""
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("hook deadline passed")
        return remaining


def _connect(host: str, port: int, deadline: Deadline) -> _socket.socket:
    """A TCP connection to `host`: socket.create_connection's loop over the addresses, on `_socket`."""
    # an ASCII host as bytes: getaddrinfo then skips the idna codec (and its unicodedata) on every hook
    address = host.encode("ascii") if host.isascii() else host
    error: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, where in _socket.getaddrinfo(address, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(deadline.left())
            sock.connect(where)
            return sock
        except OSError as exc:  # TimeoutError and ConnectionRefusedError are OSErrors
            sock.close()
            error = exc
    raise error


def _connect_tls(host: str, port: int, deadline: Deadline) -> _socket.socket:
    """A TLS connection (a daemon behind a TLS proxy): the only path that loads `socket` and `ssl`."""
    import socket
    import ssl

    sock = socket.create_connection((host, port), timeout=deadline.left())
    try:
        return ssl.create_default_context().wrap_socket(sock, server_hostname=host)
    except BaseException:
        sock.close()
        raise


def _read_answer(sock: _socket.socket, deadline: Deadline) -> bytes:
    data = bytearray()
    while True:
        sock.settimeout(deadline.left())
        chunk = sock.recv(65536)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > MAX_ANSWER_BYTES:
            raise ValueError("answer too large")
        head, sep, body = bytes(data).partition(b"\r\n\r\n")
        if sep:
            length = _content_length(head)
            if length is not None and len(body) >= length:
                return bytes(data)


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return None


def _dechunk(body: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, sep, rest = body.partition(b"\r\n")
        if not sep:
            raise ValueError("truncated chunked answer")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            return bytes(out)
        out += rest[:size]
        body = rest[size + 2:]


def parse_answer(raw: bytes) -> object:
    """The JSON body of a 2xx HTTP/1.x answer; ValueError for anything else."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if not sep or len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1.") or not status_line[1].startswith(b"2"):
        raise ValueError("not a 2xx HTTP answer")
    headers = head.lower()
    if b"transfer-encoding: chunked" in headers:
        body = _dechunk(body)
    else:
        length = _content_length(head)
        if length is not None:
            if len(body) < length:
                raise ValueError("truncated answer")
            body = body[:length]
    return loads(body.decode("utf-8") or "null")


def post(base_url: str, path: str, body: Mapping[str, object], *, token: str | None, timeout: float,
         deadline: Deadline | None = None, failure: list[str] | None = None) -> dict[str, object] | None:
    """POST JSON within `deadline` (default: `timeout` from now); the decoded answer, or None on any
    failure. `failure`, when given, gets 'unreachable' (no daemon answered within the deadline: the
    caller may spool the event), then 'not-listening' when the connection was refused (no daemon runs
    there), or 'refused' (a non-2xx or unreadable answer), then 'http-<status>' when the answer had one."""
    deadline = deadline or Deadline(timeout)
    try:
        scheme, host, port, prefix = split_url(base_url)
        payload = dumps(body, default=str).encode("utf-8")
        netloc = f"[{host}]" if ":" in host else host
        default_port = 443 if scheme == "https" else 80
        lines = [
            f"POST {prefix}{path} HTTP/1.1",
            f"Host: {netloc}" + ("" if port == default_port else f":{port}"),
            "Content-Type: application/json",
            "Accept: application/json",
            f"Content-Length: {len(payload)}",
            "Connection: close",
        ]
        if token:
            lines.append(f"Authorization: Bearer {token}")
        affinity = session_header(body)
        if affinity:
            lines.append(f"{SESSION_HEADER}: {affinity}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload
        conn = _connect_tls(host, port, deadline) if scheme == "https" else _connect(host, port, deadline)
        try:
            conn.settimeout(deadline.left())
            conn.sendall(request)
            raw = _read_answer(conn, deadline)
        finally:
            conn.close()
    except (OSError, ValueError, UnicodeError) as exc:  # TimeoutError is an OSError
        if failure is not None:
            failure.append("unreachable")
            if isinstance(exc, ConnectionRefusedError):  # nothing listens there: no daemon runs (a slow one times out)
                failure.append("not-listening")
        return None
    try:
        answer = parse_answer(raw)
    except (ValueError, UnicodeError):
        if failure is not None:
            failure.append("refused")
            status = raw.split(b"\r\n", 1)[0].split()[1:2]
            if status and status[0].isdigit():
                failure.append(f"http-{status[0].decode()}")  # e.g. http-400: the daemon refused the event itself
        return None
    return answer if isinstance(answer, dict) else None
