"""Packages for tests/it/direct_references.rs, made locally (no registry): in OUT,

    links/minibackend-1.0-py3-none-any.whl   a tiny PEP 517 backend (a build requirement)
    links/sdonly-1.0.tar.gz                  a package with no wheel, only a source archive
    refpkg/                                  a source tree (a pip direct reference)
    npmx-1.0.0.tgz                           an npm package with a postinstall script
    served/urlpkg-1.0-py3-none-any.whl       a wheel served over HTTP (a URL direct reference)
    served-v2/urlpkg-1.0-py3-none-any.whl    the same name with other content (a swapped file)

The source packages build with an in-tree backend that first tries what a hostile build would
(read KEY, connect to 127.0.0.1:PORT, write into HOME and into HOOKS) and records each attempt
in the package (`<name>/report.py`), then builds the wheel with minibackend. The npm package's
postinstall (in Node) does the same into `report.json`.

Usage: make_packages.py OUT KEY PORT HOME HOOKS
"""
import base64
import hashlib
import io
import json
import os
import sys
import tarfile
import zipfile

out, key, port, home, hooks = sys.argv[1:6]

MINIBACKEND = '''
import base64, hashlib, os, re, zipfile

def _meta():
    text = open("pyproject.toml").read()
    name = re.search(r'^name\\s*=\\s*"([^"]+)"', text, re.M).group(1)
    version = re.search(r'^version\\s*=\\s*"([^"]+)"', text, re.M).group(1)
    return name, version

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _meta()
    fn = "%s-%s-py3-none-any.whl" % (name, version)
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, fn), "w") as z:
        def add(arc, data):
            z.writestr(arc, data)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append("%s,sha256=%s,%d" % (arc, h, len(data)))
        for root, _, files in os.walk(name):
            for f in sorted(files):
                if not f.endswith(".pyc"):
                    p = os.path.join(root, f)
                    add(p, open(p, "rb").read())
        di = "%s-%s.dist-info" % (name, version)
        add(di + "/METADATA", ("Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n" % (name, version)).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\\nGenerator: minibackend\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        records.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\\n".join(records) + "\\n")
    return fn
'''

ATTEMPTS = '''
def attempts():
    import os, socket
    r = {}
    try:
        r["key"] = open(%(key)r).read()
    except OSError as e:
        r["key"] = "denied: %%s" %% type(e).__name__
    try:
        s = socket.create_connection(("127.0.0.1", %(port)s), timeout=3)
        s.sendall(b"escaped")
        r["net"] = "connected"
    except OSError as e:
        r["net"] = "denied: %%s" %% type(e).__name__
    for k, p in (("home", %(home)r + "/planted"), ("hook", %(hooks)r + "/pre-commit")):
        try:
            open(p, "w").write("planted")
            r[k] = "written"
        except OSError as e:
            r[k] = "denied: %%s" %% type(e).__name__
    r["env"] = sorted(os.environ)
    return r
''' % {"key": key, "port": port, "home": home, "hooks": hooks}


def backend(name):
    return ATTEMPTS + '''
import minibackend

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    with open("%s/report.py", "w") as f:
        f.write("REPORT = %%r\\n" %% (attempts(),))
    return minibackend.build_wheel(wheel_directory, config_settings, metadata_directory)
''' % name


def pyproject(name):
    return ('[build-system]\nrequires = ["minibackend==1.0"]\nbuild-backend = "hostile_backend"\n'
            'backend-path = ["."]\n[project]\nname = "%s"\nversion = "1.0"\n' % name)


def wheel(dest, name, version, files):
    fn = "%s-%s-py3-none-any.whl" % (name, version)
    records = []
    with zipfile.ZipFile(os.path.join(dest, fn), "w") as z:
        def add(arc, data):
            z.writestr(arc, data)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append("%s,sha256=%s,%d" % (arc, h, len(data)))
        for arc, data in files.items():
            add(arc, data)
        di = "%s-%s.dist-info" % (name, version)
        add(di + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        records.append(di + "/RECORD,,")
        z.writestr(di + "/RECORD", "\n".join(records) + "\n")


def source_files(name):
    return {
        "pyproject.toml": pyproject(name),
        "hostile_backend.py": backend(name),
        "PKG-INFO": "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name,
        "%s/__init__.py" % name: "ANSWER = 42\n",
    }


def tar_add(t, arc, text, mode=0o644):
    data = text.encode() if isinstance(text, str) else text
    info = tarfile.TarInfo(arc)
    info.size, info.mode = len(data), mode
    t.addfile(info, io.BytesIO(data))


links = os.path.join(out, "links")
os.makedirs(links, exist_ok=True)
wheel(links, "minibackend", "1.0", {"minibackend/__init__.py": MINIBACKEND.encode()})

with tarfile.open(os.path.join(links, "sdonly-1.0.tar.gz"), "w:gz") as t:
    for path, text in source_files("sdonly").items():
        tar_add(t, "sdonly-1.0/" + path, text)

for d, answer in (("served", 1), ("served-v2", 2)):
    os.makedirs(os.path.join(out, d), exist_ok=True)
    wheel(os.path.join(out, d), "urlpkg", "1.0", {"urlpkg/__init__.py": b"ANSWER = %d\n" % answer})

tree = os.path.join(out, "refpkg")
for path, text in source_files("refpkg").items():
    p = os.path.join(tree, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write(text)

postinstall = """
const fs = require('fs'), net = require('net');
const r = {};
try { r.key = fs.readFileSync(%(key)s, 'utf8'); } catch (e) { r.key = 'denied: ' + e.code; }
for (const [k, p] of [['home', %(home)s + '/planted'], ['hook', %(hooks)s + '/pre-commit']]) {
  try { fs.writeFileSync(p, 'planted'); r[k] = 'written'; } catch (e) { r[k] = 'denied: ' + e.code; }
}
r.env = Object.keys(process.env).sort();
const done = (v) => { r.net = v; fs.writeFileSync('report.json', JSON.stringify(r)); process.exit(0); };
const s = net.connect(%(port)s, '127.0.0.1');
s.on('connect', () => { s.write('escaped'); done('connected'); });
s.on('error', (e) => done('denied: ' + e.code));
setTimeout(() => done('denied: timeout'), 3000);
""" % {"key": json.dumps(key), "home": json.dumps(home), "hooks": json.dumps(hooks), "port": int(port)}
package_json = json.dumps({"name": "npmx", "version": "1.0.0", "main": "index.js",
                           "scripts": {"postinstall": "node postinstall.js"}})
with tarfile.open(os.path.join(out, "npmx-1.0.0.tgz"), "w:gz") as t:
    tar_add(t, "package/package.json", package_json)
    tar_add(t, "package/index.js", "module.exports = require('./report.json');\n")
    tar_add(t, "package/postinstall.js", postinstall)
print(json.dumps({"ok": True}))
