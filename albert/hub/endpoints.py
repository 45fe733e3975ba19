"""Where each hub is reached, configurable for mirrors and tests: a source URL under a hub's default address is
sent to the address its environment variable gives (read at each call, so tests can set it late).

| hub | default | variable | token |
|---|---|---|---|
| Hugging Face | https://huggingface.co | HF_ENDPOINT (huggingface_hub's own) | HF_TOKEN |
| TF Hub | https://tfhub.dev | ALBERT_TFHUB_ENDPOINT | - |
| the release's tarballs | https://storage.googleapis.com | ALBERT_RELEASE_ENDPOINT | - |
| Kaggle | https://www.kaggle.com | ALBERT_KAGGLE_ENDPOINT | KAGGLE_USERNAME + KAGGLE_KEY |
"""

import base64
import os

HUBS = {  # default address -> variable naming another
    "https://tfhub.dev": "ALBERT_TFHUB_ENDPOINT",
    "https://storage.googleapis.com": "ALBERT_RELEASE_ENDPOINT",
    "https://www.kaggle.com": "ALBERT_KAGGLE_ENDPOINT",
}
KAGGLE = "https://www.kaggle.com"


def address(url: str) -> str:
    """`url` with its hub's default address replaced by the configured one."""
    for default, variable in HUBS.items():
        configured = os.environ.get(variable)
        if configured and (url == default or url.startswith(default + "/")):
            return configured.rstrip("/") + url[len(default):]
    return url


def huggingface() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def user_cache() -> str:
    """The user's cache folder: $XDG_CACHE_HOME, else ~/.cache (this project's cache and huggingface_hub's are in
    it)."""
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def huggingface_cache() -> str:
    """huggingface_hub's cache, as it finds it (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub), read at each
    call: huggingface_hub reads these once, at import."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    return os.path.join(os.environ.get("HF_HOME") or os.path.join(user_cache(), "huggingface"), "hub")


def kaggle() -> str:
    return address(KAGGLE)


def token_variable(url: str) -> str:
    if url.startswith(kaggle()):
        return "KAGGLE_USERNAME and KAGGLE_KEY"
    if url.startswith(huggingface()):
        return "HF_TOKEN"
    return "the hub's token"


def kaggle_headers() -> dict:
    user, key = os.environ.get("KAGGLE_USERNAME"), os.environ.get("KAGGLE_KEY")
    if not (user and key):
        return {}
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{key}".encode()).decode()}


OFFLINE_SWITCH = "ALBERT_OFFLINE=1"


def offline() -> bool:
    """This project's offline switch (ALBERT_OFFLINE=1), or Hugging Face's (HF_HUB_OFFLINE=1) for every hub."""
    return os.environ.get("ALBERT_OFFLINE") == "1" or os.environ.get("HF_HUB_OFFLINE") in ("1", "true", "True")


def not_cached_offline(where: str) -> str:
    """The one message for what offline mode keeps from being downloaded (`where`: the cache it is not in); the
    caller puts the reference before it."""
    return (f"not in {where} and offline mode is on ({OFFLINE_SWITCH} or HF_HUB_OFFLINE=1); run once online to "
            "download it")
