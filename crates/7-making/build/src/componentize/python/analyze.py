# Run by toolsmith on the host's Python (the componentize-py venv's), contained, before a
# Python component is built: reads app.py with `ast` (nothing of it runs) and prints, as JSON,
# its form (a class WitWorld, or a plain function), the function that is the tool (the one
# named after the tool, else `call`, else the only public one), its parameters with the JSON
# Schema their annotations say, and every module it imports (anywhere, with its line).
# Usage: python -I -S analyze.py TOOL  (in the directory holding app.py)
import ast
import json
import os
import sys

SCALARS = {"int": "integer", "float": "number", "str": "string", "bool": "boolean"}
ARRAYS = {"list", "List", "Sequence", "MutableSequence", "Iterable", "Collection", "set",
          "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet", "deque", "Deque"}
OBJECTS = {"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict",
           "DefaultDict", "Counter"}
FREE = {"Any", "object", "Json", "JSON"}
# Modules of the component's CPython (3.14) that the host's may not know.
NEWER = {"annotationlib", "compression", "_colorize", "_pyrepl", "tomllib", "string"}
# What componentize-py provides beside the standard library.
BINDINGS = {"wit_world", "componentize_py_types", "componentize_py_async_support", "poll_loop"}


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base + "." + node.attr if base else None
    return None


def args_of(node):
    s = node.slice
    if isinstance(s, ast.Index):  # Python 3.8
        s = s.value
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def union(branches):
    flat = []
    for b in branches:
        flat.extend(b["anyOf"] if set(b) == {"anyOf"} else [b])
    if any(b == {} for b in flat):
        return {}
    null = {"type": "null"}
    rest = [b for b in flat if b != null]
    if len(rest) == len(flat):
        return rest[0] if len(rest) == 1 else {"anyOf": rest}
    return {"anyOf": rest + [null]}


def schema(node):
    """The JSON Schema an annotation says ({} for any value)."""
    if node is None:
        return {}
    if isinstance(node, ast.Constant):
        if node.value is None:
            return {"type": "null"}
        if isinstance(node.value, str):
            try:
                return schema(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return {}
        return {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([schema(node.left), schema(node.right)])
    name = dotted(node)
    if name is not None:
        last = name.split(".")[-1]
        if last in SCALARS:
            return {"type": SCALARS[last]}
        if last in ARRAYS or last in ("tuple", "Tuple"):
            return {"type": "array"}
        if last in OBJECTS:
            return {"type": "object"}
        if last == "None":
            return {"type": "null"}
        return {}
    if isinstance(node, ast.Subscript):
        base = (dotted(node.value) or "").split(".")[-1]
        args = args_of(node)
        if base in ARRAYS:
            return {"type": "array", "items": schema(args[0])}
        if base in ("tuple", "Tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return {"type": "array", "items": schema(args[0])}
            items = [schema(a) for a in args if not (isinstance(a, ast.Tuple) and not a.elts)]
            if not items:
                return {"type": "array", "maxItems": 0}
            n = len(items)
            return {"type": "array", "prefixItems": items, "items": False, "minItems": n, "maxItems": n}
        if base in OBJECTS:
            value = schema(args[1]) if len(args) > 1 else (
                {"type": "integer"} if base == "Counter" else {})
            return {"type": "object", "additionalProperties": value} if value else {"type": "object"}
        if base == "Optional":
            return union([schema(args[0]), {"type": "null"}])
        if base == "Union":
            return union([schema(a) for a in args])
        if base == "Literal":
            values = [a.value for a in args if isinstance(a, ast.Constant)]
            return {"enum": values} if values and len(values) == len(args) else {}
        if base in ("Annotated", "Final", "ClassVar", "Required", "NotRequired"):
            return schema(args[0])
    return {}


def literal(node):
    """A default value as JSON, when it is a literal JSON can carry."""
    try:
        v = ast.literal_eval(node)
        json.dumps(v, allow_nan=False)
        return {"value": [list(v) if isinstance(v, tuple) else v]}
    except Exception:
        return {}


def params(f):
    a = f.args
    out = []
    positional = list(getattr(a, "posonlyargs", [])) + list(a.args)
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults):
        out.append((arg, d, "positional"))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg, d, "keyword"))
    result = []
    for arg, d, kind in out:
        p = {"name": arg.arg, "kind": kind, "schema": schema(arg.annotation),
             "default": d is not None, "line": arg.lineno}
        if d is not None:
            p.update(literal(d))
        result.append(p)
    return result, (a.vararg.arg if a.vararg else None), (a.kwarg.arg if a.kwarg else None)


def imports(tree):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append({"name": alias.name, "line": node.lineno, "optional": False})
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append({"name": node.module, "line": node.lineno, "optional": False})
            for alias in node.names:
                if alias.name != "*":
                    found.append({"name": node.module + "." + alias.name, "line": node.lineno,
                                  "optional": True})
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) \
                and (dotted(node.func) or "").split(".")[-1] in ("__import__", "import_module"):
            found.append({"name": node.args[0].value, "line": node.lineno, "optional": False})
    local = {n[:-3] for n in os.listdir(".") if n.endswith(".py")} | {
        n for n in os.listdir(".") if os.path.isfile(os.path.join(n, "__init__.py"))}
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | NEWER
    for i in found:
        top = i["name"].split(".")[0]
        i["origin"] = ("local" if top in local else "stdlib" if top in stdlib
                       else "bindings" if top in BINDINGS else "other")
    return found


def main():
    tool = sys.argv[1].replace("-", "_")
    out = {"form": None, "function": None, "functions": [], "params": [], "imports": [],
           "error": None, "async": False, "varargs": None, "kwargs": None}
    try:
        with open("app.py", encoding="utf-8") as f:
            tree = ast.parse(f.read(), "app.py")
    except (SyntaxError, ValueError) as e:
        out["error"] = "%s: %s (app.py, line %s)" % (type(e).__name__, getattr(e, "msg", e),
                                                   getattr(e, "lineno", "?"))
        print(json.dumps(out))
        return
    out["imports"] = imports(tree)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    out["functions"] = [f.name for f in funcs]
    if "WitWorld" in classes:
        out["form"] = "class"
    else:
        by_name = {f.name: f for f in funcs}
        public = [f for f in funcs if not f.name.startswith("_")]
        f = by_name.get(tool) or by_name.get("call") or (public[0] if len(public) == 1 else None)
        if f is not None:
            out["form"] = "function"
            out["function"] = f.name
            out["async"] = isinstance(f, ast.AsyncFunctionDef)
            out["params"], out["varargs"], out["kwargs"] = params(f)
    print(json.dumps(out))


main()
