"""A model reference -> a local path the weights formats read (albert.weights.formats): the first step of the one
flow resolve -> detect the format once -> load through that format's name table.

A reference is one of (in the order they are tried):
    a local path            a model directory or weights file, as it is; an archive (.tar.gz / .tgz / .tar)
                            unpacked once into the cache
    hf://org/name[@rev]     a Hugging Face repo (huggingface_hub, its own cache; HF_ENDPOINT, HF_TOKEN)
    kaggle://owner/model/framework/variation/version
                            a Kaggle model (keras-hub presets): its archive from Kaggle's model download API
    http(s)://... .tar.gz   a tarball (the release's albert_models/*.tar.gz, Model Garden's)
    http(s)://...           a TF Hub handle (tfhub.dev/google/albert_base/3, tfhub.dev/tensorflow/albert_en_base/3,
                            the Kaggle Models URLs they redirect to): `?tf-hub-format=compressed`, as tensorflow_hub
    a name                  albert.hub.names (albert_base_v2, albert_en_base, albert_base_en_uncased, ...)
    org/name[@rev]          a Hugging Face repo id
Anything else is an AlbertError naming the closest known names.
"""

import fnmatch
import os
import re
import urllib.parse

from albert.ground.errors import AlbertError
from albert.hub import archives, cache, download, endpoints, huggingface_files, names, network
from albert.ground.paths import is_remote

HF_FILES, HF_WEIGHTS = huggingface_files.download_patterns()
_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")


def resolve(reference: str) -> str:
    """The local path of a model reference (see the module's docstring), downloaded and cached if need be."""
    reference = shown = str(reference)
    if not _local(reference) and reference in names.NAMES:  # a name stands for its hub reference
        reference, shown = names.NAMES[reference], f"{reference} ({names.NAMES[reference]})"
    if _local(reference):
        return cache.unpacked(reference) if os.path.isfile(reference) and archives.is_archive(reference) \
            else reference
    if reference.startswith("hf://"):
        return huggingface(reference[len("hf://"):], shown)
    if reference.startswith("kaggle://"):
        return kaggle(reference[len("kaggle://"):], shown)
    if reference.startswith(("http://", "https://")):
        url = endpoints.address(reference)
        if archives.is_archive(urllib.parse.urlsplit(url).path):
            target = os.path.join(cache.root(), "urls", cache.key(reference))
            return cache.fetched(reference, url, target, shown=shown)
        return tfhub(reference, shown)
    if is_remote(reference):  # gs://, hdfs://, ...: TensorFlow's file systems read these where they are
        return reference
    if _HF_ID.match(reference):
        return huggingface(reference)
    if os.sep in reference or reference.startswith((".", "~")):
        return reference  # a local path that is not there: the reader says so, naming the flag
    close = names.closest(reference)
    hint = f"closest known names: {', '.join(close)}" if close else "known names: docs/weights.md"
    raise AlbertError(f"{reference}: not a file or directory, and not a known model name ({hint}); or pass a "
                      "Hugging Face id org/name, a TF Hub handle or a URL")


def _local(reference: str) -> bool:
    """A path here: a file or directory, or a checkpoint prefix (`out/model.ckpt-100`)."""
    return os.path.exists(reference) or os.path.exists(reference + ".index")


def tfhub(handle: str, shown: str | None = None) -> str:
    """A TF Hub handle's module, fetched as tensorflow_hub does: `<handle>?tf-hub-format=compressed`. `shown`: the
    reference as the user wrote it (a name), for the messages."""
    url = endpoints.address(handle.rstrip("/"))
    query = "&" if "?" in url else "?"
    return cache.fetched(handle, f"{url}{query}tf-hub-format=compressed", cache.tfhub_entry(handle),
                         check=lambda folder: _check_module(handle, folder), descriptor=True, shown=shown)


def _check_module(handle: str, folder: str):
    if not os.path.isfile(os.path.join(folder, "saved_model.pb")):
        raise AlbertError(f"{handle}: serves no TF Hub module (its archive has no saved_model.pb); pass the handle "
                          "of a model, e.g. https://tfhub.dev/google/albert_base/3")


def kaggle(handle: str, shown: str | None = None) -> str:
    """owner/model/framework/variation/version -> the model's files, from Kaggle's model download API."""
    parts = handle.strip("/").split("/")
    if len(parts) != 5 or not parts[4].isdigit():
        raise AlbertError(f"kaggle://{handle}: a Kaggle model handle is kaggle://owner/model/framework/variation/"
                          "version, e.g. kaggle://keras/albert/keras/albert_base_en_uncased/5")
    url = f"{endpoints.kaggle()}/api/v1/models/{'/'.join(parts)}/download"
    target = os.path.join(cache.root(), "kaggle", *parts)
    return cache.fetched(f"kaggle://{handle}", url, target, endpoints.kaggle_headers(), shown=shown)


def huggingface(repo: str, shown: str | None = None) -> str:
    """A Hugging Face repo's config, weights and SentencePiece model, through huggingface_hub (its cache)."""
    from huggingface_hub import HfApi, snapshot_download  # noqa: PLC0415 -- not the package's own module
    from huggingface_hub import errors as hf_errors  # noqa: PLC0415
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars  # noqa: PLC0415

    repo_id, _, revision = repo.partition("@")
    endpoint, shown = endpoints.huggingface(), shown or repo
    (enable_progress_bars if download.progress_wanted() else disable_progress_bars)()
    token, offline = os.environ.get("HF_TOKEN") or None, endpoints.offline()
    everything = HF_FILES + [p for group in HF_WEIGHTS for p in group]  # offline: whichever is cached

    def snapshot(patterns, local_only):
        return snapshot_download(repo_id, revision=revision or None, allow_patterns=patterns, endpoint=endpoint,
                                 cache_dir=endpoints.huggingface_cache(), local_files_only=local_only, token=token,
                                 etag_timeout=network.timeout())

    def unreachable(why):
        try:
            cached = bool(snapshot(everything, True))
        except (hf_errors.LocalEntryNotFoundError, OSError, ValueError):
            cached = False
        where = f"the Hugging Face cache ({endpoints.huggingface_cache()})"
        return network.unreachable(shown, endpoint, why, where, cached)

    try:
        patterns = everything
        if not offline:  # one weights format, the first the repo has: safetensors, the PyTorch pickle, tf_model.h5
            files = [s.rfilename for s in HfApi(endpoint=endpoint, token=token).model_info(
                repo_id, revision=revision or None, timeout=network.timeout()).siblings or []]
            has = [any(fnmatch.fnmatch(name, p) for name in files for p in group) for group in HF_WEIGHTS]
            patterns = HF_FILES + HF_WEIGHTS[has.index(True) if True in has else 0]
        return snapshot(patterns, offline)
    except hf_errors.GatedRepoError:
        raise AlbertError(f"{repo_id}: a gated or private Hugging Face repo (HTTP 401/403); accept its terms on the "
                          "Hub and set HF_TOKEN to a token that may read it") from None
    except hf_errors.RepositoryNotFoundError:
        raise AlbertError(f"{repo_id}: no such Hugging Face repo at {endpoint} (HTTP 404), or it is private (set "
                          "HF_TOKEN), and no such local path; check the organisation and name") from None
    except hf_errors.RevisionNotFoundError:
        raise AlbertError(f"{repo}: the repo has no revision {revision!r}; pass a branch, tag or commit") from None
    except hf_errors.LocalEntryNotFoundError as e:
        if offline:
            raise AlbertError(f"{shown}: {endpoints.not_cached_offline('the Hugging Face cache')}") from None
        raise unreachable(network.reason(e) or "no answer") from None  # huggingface_hub's word for no network
    except Exception as e:  # the transport's own errors (httpx, ...), an HTTP status, the file system's
        why = network.reason(e)
        if why is not None:
            raise unreachable(why) from None
        if isinstance(e, hf_errors.HfHubHTTPError):
            raise AlbertError(f"{repo_id}: the Hugging Face Hub answered {str(e).splitlines()[0][:160]}") from None
        if isinstance(e, OSError):
            raise AlbertError(f"{repo_id}: could not be downloaded ({str(e).splitlines()[0][:160]}); free disk "
                              "space or set HF_HUB_CACHE elsewhere") from None
        raise
