"""A model hub on 127.0.0.1 for the tests: the protocols the resolver speaks, served from files the tests give.

- Hugging Face Hub (what huggingface_hub asks): `GET /api/models/{repo}[/revision/{rev}]` (the commit and its file
  list), `GET /api/models/{repo}/tree/{rev}`, `HEAD` / `GET /{repo}/resolve/{rev}/{file}` with `X-Repo-Commit`,
  `ETag`, `Content-Length`; 404 with `X-Error-Code: RepoNotFound` / `EntryNotFound` / `RevisionNotFound`, 401 with
  `X-Error-Code: GatedRepo` for a gated repo.
- TF Hub: `GET /{handle}?tf-hub-format=compressed` -> the module's tar.gz, or a 302 to where it lives (tfhub.dev
  sends its handles to Kaggle Models).
- Plain files (release tarballs): `GET /{path}`, with `Range` requests answered 206.
- Kaggle: `GET /api/v1/models/{owner}/{model}/{framework}/{variation}/{version}/download` -> the archive.

Every request is logged (`server.log`: method, path). `slow` paths are sent in small pieces with pauses (to kill
a client half-way); `cut` paths promise the whole length and stop half-way. The server runs in a daemon thread and
shuts itself down after `lifetime` seconds whatever happens.

For network failures: `refusing_port()` (nothing listens), `Failing("reset")` (every connection reset) and
`Failing("silent")` (never an answer).
"""

import hashlib
import http.server
import io
import json
import os
import socket
import struct
import tarfile
import threading
import time
import urllib.parse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def tar_gz(directory: str, top: str | None = None) -> bytes:
    """A directory's files as a tar.gz: under `top/` (the release tarballs) or at the root as `./...` (TF Hub)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(directory, arcname=top or ".")
    return buffer.getvalue()


def tar_gz_member(name: str, data: bytes = b"", link: str | None = None) -> bytes:
    """A tar.gz of one member: a file of `data`, or a symbolic link to `link` (archives the resolver must refuse)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        if link is None:
            info.size = len(data)
        else:
            info.type, info.linkname = tarfile.SYMTYPE, link
        tar.addfile(info, io.BytesIO(data) if link is None else None)
    return buffer.getvalue()


class Hub:
    def __init__(self, lifetime: float = 600):
        self.hf = {}  # repo id -> {file name: bytes}
        self.gated = set()
        self.files = {}  # path (with query) -> bytes
        self.slow, self.cut = set(), set()
        self.redirects = {}  # path (with query) -> where a 302 sends it (tfhub.dev's handles go to Kaggle)
        self.log = []
        self.range_log = []  # (path, Range header) of each ranged request
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                hub.handle(self, head=True)

            def do_GET(self):
                hub.handle(self, head=False)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()

    def stop(self):
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()

    def count(self, path_part: str, method: str = "GET") -> int:
        return sum(1 for m, p in self.log if m == method and path_part in p)

    # ------------------------------------------------------------------------------------------------ answers
    def handle(self, request, head: bool):
        self.log.append((request.command, request.path))
        split = urllib.parse.urlsplit(request.path)
        path = urllib.parse.unquote(split.path)
        if path.startswith("/api/models/") and "/revision/" in path:
            repo, _, revision = path[len("/api/models/"):].partition("/revision/")
            return self._repo_info(request, repo, revision)
        if path.startswith("/api/models/") and path.count("/") == 4:  # /api/models/{org}/{name}: the main branch
            return self._repo_info(request, path[len("/api/models/"):], "main")
        if path.startswith("/api/models/") and "/tree/" in path:
            repo = path[len("/api/models/"):].partition("/tree/")[0]
            return self._tree(request, repo)
        if "/resolve/" in path:
            repo, _, rest = path[1:].partition("/resolve/")
            return self._hf_file(request, repo, rest.partition("/")[2], head)
        key = path + (f"?{split.query}" if split.query else "")
        if key in self.redirects:
            request.send_response(302)
            request.send_header("Location", self.redirects[key])
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        if key in self.files:
            return self._send(request, self.files[key], head, key)
        return self._error(request, 404, "EntryNotFound")

    def _repo(self, request, repo):
        if repo in self.gated:
            self._error(request, 401, "GatedRepo", f"Access to model {repo} is restricted.")
            return None
        if repo not in self.hf:
            self._error(request, 404, "RepoNotFound", "Repository not found")
            return None
        return self.hf[repo]

    def _repo_info(self, request, repo, revision):
        files = self._repo(request, repo)
        if files is None:
            return
        if revision not in ("main", COMMIT):
            return self._error(request, 404, "RevisionNotFound", f"Invalid rev id: {revision}")
        body = {"id": repo, "modelId": repo, "sha": COMMIT, "private": False, "gated": False,
                "siblings": [{"rfilename": name} for name in sorted(files)]}
        self._send(request, json.dumps(body).encode(), False, None, "application/json")

    def _tree(self, request, repo):
        files = self._repo(request, repo)
        if files is None:
            return
        body = [{"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                for name, data in sorted(files.items())]
        self._send(request, json.dumps(body).encode(), False, None, "application/json")

    def _hf_file(self, request, repo, name, head):
        files = self._repo(request, repo)
        if files is None:
            return
        if name not in files:
            return self._error(request, 404, "EntryNotFound", f"{name} does not exist")
        data = files[name]
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}
        self._send(request, data, head, f"/{repo}/{name}", "application/octet-stream", headers)

    def _error(self, request, code, error_code, message="not found"):
        body = json.dumps({"error": message}).encode()
        request.send_response(code)
        request.send_header("X-Error-Code", error_code)
        request.send_header("X-Error-Message", message)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        if request.command != "HEAD":
            request.wfile.write(body)

    def _send(self, request, data, head, key, kind="application/octet-stream", headers=None):
        start = 0
        wanted = request.headers.get("Range")
        if wanted and key is not None:
            self.range_log.append((key, wanted))
        if wanted and wanted.startswith("bytes=") and key is not None:
            start = int(wanted[len("bytes="):].split("-")[0])
        request.send_response(206 if start else 200)
        for name, value in (headers or {}).items():
            request.send_header(name, value)
        request.send_header("Content-Type", kind)
        request.send_header("Accept-Ranges", "bytes")
        if start:
            request.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        request.send_header("Content-Length", str(len(data) - start))
        request.end_headers()
        if head:
            return
        body = data[start:]
        try:
            if key in self.cut:
                request.wfile.write(body[:len(body) // 2])
                request.wfile.flush()
                request.close_connection = True
                return
            if key in self.slow:
                for at in range(0, len(body), 4096):
                    request.wfile.write(body[at:at + 4096])
                    request.wfile.flush()
                    time.sleep(0.05)
                return
            request.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ------------------------------------------------------------------------------------------- what it holds
    def add_hf(self, repo: str, directory: str):
        self.hf[repo] = {name: open(os.path.join(directory, name), "rb").read() for name in os.listdir(directory)
                         if os.path.isfile(os.path.join(directory, name))}

    def add_file(self, path: str, data: bytes) -> str:
        self.files[path] = data
        return self.url + path


# ------------------------------------------------------------------------------------- servers that fail, on purpose
def refusing_port() -> int:
    """A port of 127.0.0.1 where nothing listens: a connection to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Failing:
    """A server on 127.0.0.1 that fails every connection one way: `reset` reads the request and resets the
    connection (RST, no answer); `silent` accepts and never answers (the client's timeout ends it)."""

    def __init__(self, kind: str):
        assert kind in ("reset", "silent"), kind
        self.kind, self.held, self.connections = kind, [], 0
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:  # closed by stop()
                return
            self.connections += 1
            if self.kind == "silent":
                self.held.append(connection)
                continue
            connection.settimeout(5)
            try:
                connection.recv(65536)
            except OSError:
                pass
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            connection.close()

    def stop(self):
        self.socket.close()
        for connection in self.held:
            connection.close()
