"""The problems of the real-functions bench (benches/functions/run.py): which ones, what an AI
would send for each (a script's wrapper, the input schema it would infer) and how each of the
problem's own `assert`s becomes calls through MCP.

The set is MBPP, "Mostly Basic Python Problems" (Austin et al. 2021, "Program Synthesis with
Large Language Models", arXiv:2108.07732), its hand-verified split `sanitized-mbpp.json` from
the google-research repository (mbpp/), CC BY 4.0. The file is read unchanged; the bench takes
every 7th problem in task-id order (index 0, 7, 14, ...: 61 of 427), the fixed rule `select`
applies.
"""
import ast
import json
import math
import os

EVERY = 7
DATA_NAME = "sanitized-mbpp.json"


def find_data(given=None):
    """The data file: --data, $TOOLSMITH_MBPP, benches/data/, or shared/fixtures/mbpp/ beside the
    repository (looked for upwards, as CI copies shared/ next to its clone)."""
    if given:
        return given
    if os.environ.get("TOOLSMITH_MBPP"):
        return os.environ["TOOLSMITH_MBPP"]
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "..", "data", DATA_NAME)]
    d = here
    for _ in range(8):
        candidates.append(os.path.join(d, "shared", "fixtures", "mbpp", DATA_NAME))
        d = os.path.dirname(d)
    for c in candidates:
        if os.path.isfile(c):
            return os.path.normpath(c)
    raise SystemExit(
        f"the MBPP data is missing: no {DATA_NAME} in benches/data/ nor in shared/fixtures/mbpp/ "
        f"beside the repository (looked upwards from {here})\n"
        "hint: put the unchanged sanitized-mbpp.json of google-research's mbpp/ (CC BY 4.0) at "
        "shared/fixtures/mbpp/, or name it with --data FILE or TOOLSMITH_MBPP")


def select(problems, every=EVERY):
    """The fixed rule: sorted by task id, every `every`-th problem from the first."""
    return sorted(problems, key=lambda p: p["task_id"])[::every]


def entry_name(p):
    """The function the tests call: the name called first in the first assert."""
    tree = ast.parse(p["test_list"][0])
    defined = {n.name for n in ast.walk(ast.parse(p["code"])) if isinstance(n, ast.FunctionDef)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defined:
            return n.func.id
    raise ValueError(f"task {p['task_id']}: the first test calls none of the solution's functions")


def signature(code, entry):
    """(parameter names, how many have no default, annotations, constant defaults) of the entry
    function."""
    for n in ast.parse(code).body:
        if isinstance(n, ast.FunctionDef) and n.name == entry:
            a = n.args
            if a.vararg or a.kwarg or a.kwonlyargs:
                raise ValueError(f"{entry} takes *args/**kwargs/keyword-only parameters")
            names = [x.arg for x in a.posonlyargs + a.args]
            annotations = {x.arg: ast.unparse(x.annotation) for x in a.posonlyargs + a.args if x.annotation}
            defaults = {x.arg: d.value for x, d in zip((a.posonlyargs + a.args)[len(names) - len(a.defaults):], a.defaults)
                        if isinstance(d, ast.Constant) and d.value is not None}
            return names, len(names) - len(a.defaults), annotations, defaults
    raise ValueError(f"no top-level function {entry}")


def namespace(p):
    """What the tests see besides the function: the problem's test imports."""
    ns = {}
    for line in p["test_imports"]:
        exec(line, ns)
    return ns


class _Calls(ast.NodeTransformer):
    """Replaces each call of the entry function with `__results[i]`, keeping the call."""

    def __init__(self, entry):
        self.entry = entry
        self.calls = []

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == self.entry:
            self.calls.append(node)
            i = len(self.calls) - 1
            return ast.Subscript(ast.Name("__results", ast.Load()), ast.Constant(i), ast.Load())
        return node


class Test:
    """One `assert` of a problem: the calls it makes and the condition over their results."""

    def __init__(self, source, entry, params):
        node = ast.parse(source).body[0]
        if not isinstance(node, ast.Assert):
            raise ValueError(f"not an assert: {source}")
        self.source = source
        t = _Calls(entry)
        self.test = ast.fix_missing_locations(t.visit(node.test))
        self.calls = t.calls
        self.params = params

    def arguments(self, i, ns, results):
        """The arguments of call i as a dict by parameter name (Python values)."""
        c = self.calls[i]
        env = dict(ns, __results=results)
        ev = lambda e: eval(compile(ast.Expression(e), "<test>", "eval"), env)
        if any(isinstance(a, ast.Starred) for a in c.args):
            raise ValueError("a test call with *args")
        args = {self.params[k]: ev(a) for k, a in enumerate(c.args)}
        args.update({k.arg: ev(k.value) for k in c.keywords})
        return args

    def holds(self, ns, results):
        """Whether the assert's condition is true with these results."""
        return bool(eval(compile(ast.Expression(self.test), "<test>", "eval"), dict(ns, __results=results)))

    def holds_as_json(self, ns, results):
        """For `assert X == Y`: whether X and Y are equal once both are what JSON makes of them
        (tuples and sets as lists, dict keys as strings). None for other forms."""
        t = self.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
            return None
        env = dict(ns, __results=results)
        ev = lambda e: eval(compile(ast.Expression(e), "<test>", "eval"), env)
        try:
            return as_json(ev(t.left)) == as_json(ev(t.comparators[0]))
        except TypeError:
            return None

    def expected(self, ns, results):
        """The right side of `assert X == Y`, or None."""
        t = self.test
        if isinstance(t, ast.Compare) and len(t.ops) == 1:
            try:
                return eval(compile(ast.Expression(t.comparators[0]), "<test>", "eval"), dict(ns, __results=results))
            except Exception:  # noqa: BLE001 - the expected side may use the result
                return None
        return None


def as_json(v):
    """What a Python value becomes through JSON, without failing where JSON would."""
    if isinstance(v, (list, tuple)):
        return [as_json(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((as_json(x) for x in v), key=repr)
    if isinstance(v, dict):
        return {str(k) if not isinstance(k, str) else k: as_json(x) for k, x in v.items()}
    return v


def to_json(v):
    """A Python value as a JSON value an AI would send (tuples and sets as arrays)."""
    return json.loads(json.dumps(v, default=list))


def json_loses(v):
    """What JSON cannot carry in v (beyond a tuple becoming a list), or None."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return None
    if isinstance(v, int):
        return "an integer beyond 64 bits" if not -(2**63) <= v < 2**64 else None
    if isinstance(v, float):
        return "a non-finite float" if not math.isfinite(v) else None
    if isinstance(v, (set, frozenset)):
        return "a set"
    if isinstance(v, (list, tuple)):
        return next((r for r in map(json_loses, v) if r), None)
    if isinstance(v, dict):
        if any(not isinstance(k, str) for k in v):
            return "a dict with non-string keys"
        return next((r for r in map(json_loses, v.values()) if r), None)
    return f"a {type(v).__name__}"


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, tuple):
        return "tuple"
    if isinstance(v, (list, set, frozenset)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "other"


def schema_of(values):
    """The JSON Schema an AI would write for a parameter seen with these values."""
    kinds = {}
    for v in values:
        kinds.setdefault(_kind(v), []).append(v)
    if "integer" in kinds and "number" in kinds:
        kinds["number"] += kinds.pop("integer")
    if "tuple" in kinds and "array" in kinds:
        kinds["array"] += kinds.pop("tuple")
    alts = [_schema_kind(k, vs) for k, vs in kinds.items()]
    if not alts:
        return {}
    if len(alts) == 1:
        return alts[0]
    return {"anyOf": alts}


def _schema_kind(kind, vs):
    if kind in ("null", "boolean", "integer", "number", "string"):
        return {"type": kind}
    if kind == "tuple":
        # A tuple: a fixed shape (the same length every time, elements of different kinds) is
        # a `prefixItems` tuple; otherwise an array of one kind.
        lens = {len(v) for v in vs}
        if len(lens) == 1 and next(iter(lens)) > 0:
            n = next(iter(lens))
            cols = [schema_of([v[i] for v in vs]) for i in range(n)]
            if any(c != cols[0] for c in cols):
                return {"type": "array", "prefixItems": cols, "minItems": n, "maxItems": n}
    if kind in ("array", "tuple"):
        items = schema_of([x for v in vs for x in v])
        s = {"type": "array"}
        if items:
            s["items"] = items
        if all(isinstance(v, (set, frozenset)) for v in vs):
            s["uniqueItems"] = True
        return s
    if kind == "object":
        if all(all(isinstance(k, str) for k in v) for v in vs):
            inner = schema_of([x for v in vs for x in v.values()])
            return {"type": "object", "additionalProperties": inner or True}
        return {"type": "object"}
    return {}


def input_schema(params, required, samples, defaults):
    """The tool's input schema: one property per parameter, typed from the test calls'
    arguments (MBPP's solutions carry no annotations) or else from a constant default, the ones
    without a default required."""
    props = {}
    for name in params:
        seen = [s[name] for s in samples if name in s] or ([defaults[name]] if name in defaults else [])
        props[name] = schema_of(seen)
    return {"type": "object", "properties": props, "required": params[:required]}


WRAPPER = '''import json
import sys

{code}


def _tuple(v):
    return tuple(_tuple(x) if isinstance(x, list) else x for x in v)


if __name__ == "__main__":
    args = json.load(sys.stdin)
{conversions}    print(json.dumps({entry}(**args), default=list))
'''


def script_source(code, entry, tuple_params):
    """The script an AI would register: the solution, then JSON on stdin → the function → JSON
    on stdout (sets as arrays); parameters the tests give as tuples made tuples again."""
    conv = "".join(f'    args["{p}"] = _tuple(args["{p}"])\n' for p in tuple_params)
    return WRAPPER.format(code=code.rstrip(), entry=entry, conversions=conv)


class Problem:
    """One MBPP problem made ready for the bench."""

    def __init__(self, p):
        self.raw = p
        self.task_id = p["task_id"]
        self.prompt = p["prompt"]
        self.code = p["code"]
        self.entry = entry_name(p)
        self.tool = self.entry.lower()
        self.params, self.required, self.annotations, self.defaults = signature(self.code, self.entry)
        self.tests = [Test(s, self.entry, self.params) for s in p["test_list"]]
        self.ns = namespace(p)
        self.samples = self.local_samples()
        self.schema = input_schema(self.params, self.required, self.samples, self.defaults)
        self.tuple_params = [n for n in self.params
                             if self.samples and all(isinstance(s.get(n), tuple) for s in self.samples)]

    def local_samples(self):
        """The arguments of every test call, computed with the solution run here (so a nested
        call's arguments are known)."""
        fn = self.local_function()
        out = []
        for t in self.tests:
            results = []
            for i in range(len(t.calls)):
                a = t.arguments(i, self.ns, results)
                out.append(a)
                results.append(fn(**a))
        return out

    def local_function(self):
        ns = {}
        exec(compile(self.code, f"<mbpp {self.task_id}>", "exec"), ns)
        return ns[self.entry]

    def local_pass(self):
        """Whether the solution passes its own tests run here (the data's own check)."""
        fn = self.local_function()
        for t in self.tests:
            results = []
            for i in range(len(t.calls)):
                results.append(fn(**t.arguments(i, self.ns, results)))
            if not t.holds(self.ns, results):
                return False
        return True

    def description(self):
        return self.prompt.strip()
