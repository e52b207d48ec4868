# toolsmith spare (Python): started inside the tool's sandbox before any call, it has imported
# nothing of the tool's. It writes "r" on its channel (descriptor 9, moved out of the tool's
# way and not inherited) once up, reads one line on stdin (the call's entry path), writes "g"
# and runs the entry as __main__ in a fresh namespace, as `python3 -u ENTRY` would; its exit
# status goes on the channel too ("x<status>"). The call's input may follow the line at once:
# only the line is read.
import sys, os
_toolsmith_channel = os.dup(9)
os.close(9)
def _toolsmith_spare():
    import json  # the stdlib module every tool's helper imports: loaded while waiting
    os.write(_toolsmith_channel, b"r")
    # Forked ahead of its call by a fork server (stubs/fork.py), which then names the tool's
    # entry: its code is compiled while waiting (compiling runs none of it), and used at the
    # call only if the file then holds the same bytes. In a freshly forked process a compile
    # cost 1.3-1.7 ms of a 4-5 ms call.
    pre = None
    hint = globals().pop("_toolsmith_hint", None)
    if hint:
        try:
            with __import__("io").open_code(hint) as f:
                src = f.read()
            pre = (hint, src, compile(src, hint, "exec", dont_inherit=True))
        except Exception:
            pass  # compiled again at the call, where its error is the tool's
    got = b""
    while not got.endswith(b"\n"):
        chunk = os.read(0, 1)  # byte by byte: the call's input may follow the line
        if not chunk:
            os._exit(0)  # the server went away
        got += chunk
    os.write(_toolsmith_channel, b"g")
    # Forked from a fork server (stubs/fork.py): the site set-up it left for the call.
    if "_toolsmith_site" in globals():
        globals().pop("_toolsmith_site")()
    entry = os.fsdecode(got[:-1])
    here = os.path.dirname(entry)
    # A tool with its own json module must get it, as it would in a cold start.
    for own in ("json",):
        if os.path.exists(os.path.join(here, own + ".py")) or os.path.isdir(os.path.join(here, own)):
            for m in [m for m in sys.modules if m == own or m.startswith(own + ".")]:
                del sys.modules[m]
    sys.argv[:] = [entry]
    sys.path[0] = here
    return entry, pre
_toolsmith_entry, _toolsmith_pre = _toolsmith_spare()
del _toolsmith_spare
def _toolsmith_exit(code):
    # What interpreter shutdown does that a script can observe — wait for its threads, run its
    # atexit functions, flush its output — then exit without tearing every module down.
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    __import__("atexit")._run_exitfuncs()
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    # The tool is over: its stdout ends here, then its status.
    try:
        os.close(1)
        os.write(_toolsmith_channel, b"x%d\n" % code)
    except OSError:
        pass
    os._exit(code)
if not os.path.isfile(_toolsmith_entry):
    print(f"{sys.executable}: can't open file {_toolsmith_entry!r}: [Errno 2] No such file or directory", file=sys.stderr)
    _toolsmith_exit(2)
def _toolsmith_run(entry, pre):
    # As `python3 ENTRY` runs a file (and runpy.run_path, for a file, minus its asking pkgutil
    # whether the path is a zip or a directory: about 0.4 ms a call): its code compiled under
    # its own name, run as a fresh __main__ module that stays in sys.modules (pickle and
    # `import __main__` find it).
    with __import__("io").open_code(entry) as f:
        src = f.read()
    if pre is not None and pre[0] == entry and pre[1] == src:
        code = pre[2]
    else:
        code = compile(src, entry, "exec", dont_inherit=True)
    main = type(sys)("__main__")
    main.__dict__.update(__file__=entry, __cached__=None, __loader__=None, __package__=None, __spec__=None)
    sys.modules["__main__"] = main
    exec(code, main.__dict__)
try:
    _toolsmith_run(_toolsmith_entry, _toolsmith_pre)
except SystemExit as e:
    c = e.code
    if c is None:
        _toolsmith_exit(0)
    if isinstance(c, int):
        _toolsmith_exit(c & 0xFF)
    print(c, file=sys.stderr)
    _toolsmith_exit(1)
except BaseException as e:
    import traceback
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != _toolsmith_entry:
        tb = tb.tb_next
    traceback.print_exception(type(e), e, tb or e.__traceback__)
    _toolsmith_exit(1)
_toolsmith_exit(0)
