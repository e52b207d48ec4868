"""toolsmith's own helper for Python source packages (run contained, never package code).

    sdist REQ DEST     find the source distribution of requirement REQ on the configured
                       index and links (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS,
                       PIP_NO_INDEX) and download it into DEST
    fetch URL DEST     download one file into DEST
    requires PATH      the build requirements of a source distribution or tree (its
                       pyproject.toml [build-system], read as text: nothing of it runs)

Prints one JSON object on stdout; an error is one line on stderr and exit status 1. Only the
standard library and pip's vendored `packaging` are used.
"""
import base64
import hashlib
import html.parser
import json
import os
import platform
import re
import shutil
import ssl
import sys
import tarfile
import urllib.parse
import urllib.request
import zipfile

from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.specifiers import SpecifierSet
from pip._vendor.packaging.utils import canonicalize_name
from pip._vendor.packaging.version import InvalidVersion, Version

MAX_BYTES = 512 * 1024 * 1024
SDIST = (".tar.gz", ".zip")
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def fail(msg):
    sys.stderr.write(msg.replace("\n", " ") + "\n")
    sys.exit(1)


def context():
    cafile = os.environ.get("PIP_CERT") or None
    return ssl.create_default_context(cafile=cafile)


def request(url, accept=None):
    parts = urllib.parse.urlsplit(url)
    headers = {"User-Agent": "toolsmith-pyfetch"}
    if accept:
        headers["Accept"] = accept
    if parts.username is not None:
        cred = "%s:%s" % (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
        headers["Authorization"] = "Basic " + base64.b64encode(cred.encode()).decode()
        netloc = parts.hostname + (":%d" % parts.port if parts.port else "")
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    req = urllib.request.Request(url, headers=headers)
    try:
        return urllib.request.urlopen(req, timeout=120, context=context())
    except Exception as e:  # noqa: BLE001 - every failure is reported the same way
        fail("cannot fetch %s: %s" % (url, e))


def read_bounded(stream, out):
    h = hashlib.sha256()
    total = 0
    while True:
        chunk = stream.read(1 << 16)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_BYTES:
            fail("the file is larger than %d MiB" % (MAX_BYTES >> 20))
        h.update(chunk)
        out.write(chunk)
    return "sha256:" + h.hexdigest()


def save(src, dest_dir, name, want_sha256=None):
    """Copy a local path or download a URL into dest_dir/name; its sha256."""
    if not FILE_NAME.match(name):
        fail("%r is not a plain file name" % name)
    dest = os.path.join(dest_dir, name)
    with open(dest, "wb") as out:
        if src.startswith(("http://", "https://")):
            with request(src) as r:
                digest = read_bounded(r, out)
        else:
            with open(src, "rb") as f:
                digest = read_bounded(f, out)
    if want_sha256 and digest != "sha256:" + want_sha256.lower():
        os.unlink(dest)
        fail("%s does not have the sha256 its index gives (%s, got %s)" % (name, want_sha256, digest))
    return dest, digest


class Links(html.parser.HTMLParser):
    """The <a href> links of a simple-index or find-links page."""

    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            a = dict(attrs)
            if a.get("href"):
                self.links.append(a)


def split_hash(url):
    base, _, frag = url.partition("#")
    m = re.match(r"sha256=([0-9a-fA-F]{64})$", frag)
    return base, (m.group(1) if m else None)


def page_files(url):
    """(file name, url, sha256, requires-python, yanked) of an index page."""
    accept = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
    with request(url, accept) as r:
        body = r.read(32 * 1024 * 1024)
        kind = r.headers.get("Content-Type", "")
        base = r.geturl()
    out = []
    if "json" in kind:
        data = json.loads(body)
        for f in data.get("files", []):
            out.append((f["filename"], urllib.parse.urljoin(base, f["url"]),
                        f.get("hashes", {}).get("sha256"), f.get("requires-python"),
                        bool(f.get("yanked"))))
        return out
    p = Links()
    p.feed(body.decode("utf-8", "replace"))
    for a in p.links:
        href, sha = split_hash(urllib.parse.urljoin(base, a["href"]))
        name = urllib.parse.unquote(href.rsplit("/", 1)[-1])
        out.append((name, href, sha, a.get("data-requires-python"), "data-yanked" in a))
    return out


def sources():
    """Every (file name, location, sha256, requires-python, yanked) the configuration offers."""
    env = os.environ
    no_index = env.get("PIP_NO_INDEX", "").lower() not in ("", "0", "false", "no")
    indexes = [] if no_index else [env.get("PIP_INDEX_URL") or "https://pypi.org/simple"]
    if not no_index:
        indexes += env.get("PIP_EXTRA_INDEX_URL", "").split()
    links = env.get("PIP_FIND_LINKS", "").split()
    return indexes, links


def candidates(name):
    indexes, links = sources()
    found = []
    for idx in indexes:
        found += page_files(idx.rstrip("/") + "/" + canonicalize_name(name) + "/")
    for link in links:
        if link.startswith(("http://", "https://")):
            found += page_files(link)
            continue
        d = link[len("file:"):] if link.startswith("file:") else link
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                found.append((f, os.path.join(d, f), None, None, False))
    return found


def sdist_version(filename, name):
    """The version of an sdist file of `name`, or None."""
    for ext in SDIST:
        if filename.lower().endswith(ext):
            stem = filename[: -len(ext)]
            break
    else:
        return None
    want = canonicalize_name(name)
    for i, c in enumerate(stem):
        if c == "-" and canonicalize_name(stem[:i]) == want:
            try:
                return Version(stem[i + 1:])
            except InvalidVersion:
                return None
    return None


def find_sdist(req_text, dest):
    try:
        req = Requirement(req_text)
    except Exception as e:  # noqa: BLE001
        fail("%r is not a requirement: %s" % (req_text, e))
    if req.url:
        fail("%r is a direct reference" % req_text)
    here = platform.python_version()
    best = None
    for filename, loc, sha, requires_python, yanked in candidates(req.name):
        v = sdist_version(filename, req.name)
        if v is None or not req.specifier.contains(v, prereleases=None):
            continue
        if yanked and not any(s.operator in ("==", "===") for s in req.specifier):
            continue
        if requires_python:
            try:
                if not SpecifierSet(requires_python).contains(here, prereleases=True):
                    continue
            except Exception:  # noqa: BLE001 - an unreadable constraint: skip the file
                continue
        key = (v, filename.lower().endswith(".tar.gz"))
        if best is None or key > best[0]:
            best = (key, filename, loc, sha)
    if best is None:
        fail("no source distribution of %s matches %r on the configured index or links" % (req.name, req_text))
    _, filename, loc, sha = best
    path, digest = save(loc, dest, filename, sha)
    print(json.dumps({"file": path, "name": canonicalize_name(req.name), "version": str(best[0][0]), "sha256": digest}))


def fetch(url, dest):
    base, sha = split_hash(url)
    name = urllib.parse.unquote(urllib.parse.urlsplit(base).path.rsplit("/", 1)[-1])
    path, digest = save(base, dest, name, sha)
    print(json.dumps({"file": path, "sha256": digest}))


def load_toml(text):
    try:
        import tomllib
    except ImportError:
        from pip._vendor import tomli as tomllib
    return tomllib.loads(text)


def pyproject_of(path):
    """The text of pyproject.toml at the top of a source tree or distribution, or None."""
    if os.path.isdir(path):
        p = os.path.join(path, "pyproject.toml")
        return open(p, encoding="utf-8").read() if os.path.isfile(p) else None
    low = path.lower()
    if low.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                parts = m.name.strip("/").split("/")
                if len(parts) == 2 and parts[1] == "pyproject.toml" and m.isfile():
                    return t.extractfile(m).read(1 << 20).decode("utf-8")
        return None
    if low.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for n in z.namelist():
                parts = n.strip("/").split("/")
                if len(parts) == 2 and parts[1] == "pyproject.toml":
                    return z.read(n)[: 1 << 20].decode("utf-8")
        return None
    fail("%s is not a source distribution (.tar.gz, .zip) or a directory" % path)


def requires(path):
    text = pyproject_of(path)
    data = load_toml(text) if text else {}
    system = data.get("build-system")
    if not isinstance(system, dict) or "requires" not in system:
        reqs, backend = ["setuptools>=40.8.0", "wheel"], None
    else:
        reqs, backend = system.get("requires"), system.get("build-backend")
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        fail("[build-system] requires is not a list of requirements")
    for r in reqs:
        try:
            parsed = Requirement(r)
        except Exception as e:  # noqa: BLE001
            fail("the build requirement %r is not a requirement: %s" % (r, e))
        if parsed.url:
            fail("the build requirement %r is a direct reference, which is not fetched" % r)
    print(json.dumps({"requires": reqs, "backend": backend if isinstance(backend, str) else None}))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "sdist":
        find_sdist(a[1], a[2])
    elif len(a) == 3 and a[0] == "fetch":
        fetch(a[1], a[2])
    elif len(a) == 2 and a[0] == "requires":
        requires(a[1])
    else:
        fail("usage: sdist REQ DEST | fetch URL DEST | requires PATH")


main()
