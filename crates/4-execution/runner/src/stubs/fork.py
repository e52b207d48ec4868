# toolsmith fork server (Python): started once per tool inside the tool's sandbox, with -S and
# with CAP_SYS_ADMIN of the sandbox's own user namespace, it runs no code of the tool's or of
# its environment's packages: the interpreter's own start-up, the standard library, this stub.
# (A venv's site set-up, .pth lines among it, and any sitecustomize run in each call's
# process, after its privileges are gone.) It writes "r" on its stdout once up, then serves
# calls from its control socket (argv[1]; its configuration is the JSON file at argv[2]):
# each message carries the call's stdin, stdout, stderr and channel (and, under the in-process
# sandbox, a Landlock ruleset); its byte is "p" for a process forked ahead of its call that
# compiles the tool's entry (cfg["entry"]) while it waits, else "c". For each, it forks a process that is the init of a pid
# namespace of its own; that process mounts a fresh scratch directory and /dev/shm (and /tmp
# under bubblewrap) and its own /proc in a mount namespace of its own, unshares the IPC (and, for a
# tool without network, the network) namespace, moves the call's descriptors to 0, 1, 2 and 9
# and closes every other one, drops every capability, sets no_new_privs, enters its Landlock
# ruleset, loads the tool's full seccomp programs (under bubblewrap it then forks once more and
# stays as the namespace's init, as bubblewrap's own does), and becomes a spare of this tool: the
# code that follows this stub (python.py) writes "r" on the channel, reads the entry line,
# runs the site set-up left for the call (`_toolsmith_site`) and then the entry. When a call's process is gone, the server writes its status ("x<status>") on its
# channel (the process's own "x" line, when it wrote one, comes first). A failure before the
# tool can start is "e<why>" on the channel.
import sys, os
def _toolsmith_fork_server():
    import array, ctypes, json, select, socket, site
    ctl_fd, cfg_fd = int(sys.argv[1]), int(sys.argv[2])
    with os.fdopen(cfg_fd, "rb") as f:
        cfg = json.loads(f.read())
    venv = sys.prefix != sys.base_prefix
    # The installation's own site set-up (trusted as the interpreter is); a venv's is the
    # call's, and so is any sitecustomize.
    custom = (site.execsitecustomize, site.execusercustomize)
    if not venv:
        site.execsitecustomize = site.execusercustomize = lambda: None
        try:
            site.main()
        finally:
            site.execsitecustomize, site.execusercustomize = custom
    libc = ctypes.CDLL(None, use_errno=True)
    c_ulong, c_char_p = ctypes.c_ulong, ctypes.c_char_p
    libc.prctl.argtypes = [ctypes.c_int, c_ulong, c_ulong, c_ulong, c_ulong]
    libc.mount.argtypes = [c_char_p, c_char_p, c_char_p, c_ulong, c_char_p]
    libc.unshare.argtypes = [ctypes.c_int]
    libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.capset.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    CLONE_NEWPID = 0x20000000
    MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    class Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
    programs = [bytes.fromhex(h) for h in cfg["seccomp"]]
    buffers = [ctypes.create_string_buffer(p, len(p)) for p in programs]
    fprogs = [Fprog(len(p) // 8, ctypes.addressof(b)) for p, b in zip(programs, buffers)]
    scratch = os.fsencode(cfg["scratch"])
    tmp_opts = cfg["tmp_opts"] and cfg["tmp_opts"].encode()
    scratch_opts = cfg["scratch_opts"].encode()
    shm = cfg["shm"] and os.fsencode(cfg["shm"])
    shm_opts = cfg["shm_opts"].encode()
    landlock = cfg["landlock"]
    unshare_flags = cfg["unshare"]
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY)
    # The highest capability this kernel has (dropping one past it is refused anyway).
    try:
        with open("/proc/sys/kernel/cap_last_cap", "rb") as f:
            last_cap = min(int(f.read()), 63)
    except (OSError, ValueError):
        last_cap = 63
    # Descriptors 3 to 9 taken: what arrives lands at 10 or above, clear of 0-2 and 9.
    null = os.open("/dev/null", os.O_RDWR)
    for n in range(3, 10):
        try:
            os.fstat(n)
        except OSError:
            os.dup2(null, n, inheritable=False)
    def syscall(*args):
        # Every argument a long (pointers as addresses): the kernel's calling convention.
        return libc.syscall(*[ctypes.c_long(a) for a in args])
    def path(p):
        # A NUL-terminated copy of p, kept alive by the caller, and its address.
        buf = ctypes.create_string_buffer(p)
        return buf, ctypes.addressof(buf)
    def check(r, what):
        if r != 0:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    def landlock_rule(ruleset, where, access):
        fd = os.open(where, os.O_PATH)
        try:
            attr = Beneath(access, fd)
            check(syscall(445, ruleset, 1, ctypes.addressof(attr), 0), "landlock_add_rule " + os.fsdecode(where))
        finally:
            os.close(fd)
    def unescape(field):
        # mountinfo writes space, tab, newline and backslash as \ooo.
        out, i = bytearray(), 0
        while i < len(field):
            if field[i:i + 1] == b"\\" and field[i + 1:i + 4].isdigit():
                out.append(int(field[i + 1:i + 4], 8))
                i += 4
            else:
                out += field[i:i + 1]
                i += 1
        return bytes(out)
    def tmp_binds():
        # What the sandbox bound beneath bubblewrap's /tmp (the tool's directory when it lives
        # there, declared paths): read once, as the server's mounts never change (each call
        # mounts in a namespace of its own).
        with open("/proc/self/mountinfo", "rb") as f:
            rows = [l.split(b" ") for l in f.read().splitlines()]
        tmp_ids = [r[0] for r in rows if unescape(r[4]) == b"/tmp"]
        binds = []
        for r in rows:
            at = unescape(r[4])
            if tmp_ids and r[1] == tmp_ids[-1] and not (at == scratch or at.startswith(scratch + b"/")):
                binds.append((at, os.path.isdir(at)))
        return binds
    binds = tmp_binds() if tmp_opts else []
    def fresh_tmp():
        # A fresh /tmp (bubblewrap's is the server's), with what the sandbox bound beneath
        # the old one moved in: each of those mounts is cloned first (open_tree), then
        # attached (move_mount).
        kept = []
        for at, is_dir in binds:
            buf, addr = path(at)
            # open_tree(AT_FDCWD, at, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE)
            fd = syscall(428, -100, addr, 1 | 0o2000000 | 0x8000)
            if fd < 0:
                check(-1, "open_tree " + os.fsdecode(at))
            kept.append((at, fd, is_dir))
        check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, tmp_opts), "mounting /tmp")
        for at, fd, is_dir in kept:
            if is_dir:
                os.makedirs(at, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(at), 0o755, exist_ok=True)
                os.close(os.open(at, os.O_WRONLY | os.O_CREAT, 0o644))
            empty, e = path(b"")
            to, t = path(at)
            # move_mount(fd, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH)
            check(syscall(429, fd, e, -100, t, 4), "move_mount " + os.fsdecode(at))
            os.close(fd)
        os.makedirs(scratch, 0o700, exist_ok=True)
    def call(ctl, stdin, stdout, stderr, chan, ruleset):
        # The call's process: the init of its own pid namespace.
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        check(libc.unshare(unshare_flags), "unshare")
        check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
        if tmp_opts:
            fresh_tmp()
        check(libc.mount(b"tmpfs", scratch, b"tmpfs", MS_NOSUID | MS_NODEV, scratch_opts), "mounting the scratch directory")
        if shm:
            # Its own /dev/shm: the server's (bubblewrap's) is shared by every call.
            check(libc.mount(b"tmpfs", shm, b"tmpfs", MS_NOSUID | MS_NODEV, shm_opts), "mounting /dev/shm")
        proc = libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0
        if landlock is None and not proc:
            # Under bubblewrap the /proc underneath shows the server and the other calls.
            check(-1, "mounting /proc")
        if landlock is not None:
            landlock_rule(ruleset, scratch, landlock["scratch"])
            if shm:
                landlock_rule(ruleset, shm, landlock["scratch"])
            if proc:
                landlock_rule(ruleset, b"/proc", landlock["proc"])
        os.chdir(scratch)
        for fd, at in ((stdin, 0), (stdout, 1), (stderr, 2), (chan, 9)):
            os.dup2(fd, at)
        # No capability, for good: the bounding set, the ambient set, then every set.
        for cap in range(last_cap + 1):
            libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
        libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        check(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
        check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")  # PR_SET_NO_NEW_PRIVS
        if ruleset >= 0:
            check(syscall(446, ruleset, 0), "landlock_restrict_self")
        ctl.detach()
        os.closerange(3, 9)
        os.closerange(10, 1 << 20)
        for p in fprogs:
            check(libc.prctl(22, 2, ctypes.addressof(p), 0, 0), "seccomp")  # PR_SET_SECCOMP, FILTER
        if cfg["init"]:
            # As under bubblewrap's own init: the tool is not the namespace's init (which the
            # kernel spares signals it has no handler for); this process waits for it, holding
            # nothing of the call's, and ends with its status (the namespace with it).
            tool = os.fork()
            if tool != 0:
                os.closerange(0, 1 << 20)
                while True:
                    try:
                        _, st = os.waitpid(tool, 0)
                        break
                    except ChildProcessError:
                        os._exit(127)
                    except InterruptedError:
                        continue
                code = os.waitstatus_to_exitcode(st)
                os._exit(code if code >= 0 else 128 - code)
    ctl = socket.socket(fileno=ctl_fd)
    poll = select.poll()
    poll.register(ctl_fd, select.POLLIN)
    live = {}
    space = socket.CMSG_SPACE(8 * array.array("i").itemsize)
    os.write(1, b"r")
    while True:
        for fd, _ in poll.poll():
            if fd != ctl_fd:
                pid, chan = live.pop(fd)
                poll.unregister(fd)
                os.close(fd)
                try:
                    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                except ChildProcessError:
                    code = -9
                try:
                    os.write(chan, b"x%d\n" % (code if code >= 0 else 128 - code))
                except OSError:
                    pass
                os.close(chan)
                continue
            msg, anc, _, _ = ctl.recvmsg(16, space)
            fds = array.array("i")
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            if not msg:
                os._exit(0)  # the server went away
            if len(fds) < 4:
                for f in fds:
                    os.close(f)
                continue
            stdin, stdout, stderr, chan = fds[:4]
            ruleset = fds[4] if len(fds) > 4 else -1
            pid = -1
            try:
                check(libc.unshare(CLONE_NEWPID), "unshare")
                try:
                    pid = os.fork()
                finally:
                    if pid != 0 and libc.setns(own_pid_ns, CLONE_NEWPID) != 0:
                        os._exit(70)  # this server cannot start calls any more
                if pid == 0:
                    try:
                        call(ctl, stdin, stdout, stderr, chan, ruleset)
                        # "p": forked ahead of a call, it compiles the entry while waiting.
                        return venv, (cfg.get("entry") if msg == b"p" else None)
                    except BaseException as e:
                        why = b"e" + str(e).encode(errors="replace")[:400] + b"\n"
                        for c in (chan, 9):
                            try:
                                os.write(c, why)
                                break
                            except OSError:
                                pass
                        os._exit(127)
            except OSError as e:
                try:
                    os.write(chan, b"e" + str(e).encode(errors="replace")[:400] + b"\n")
                except OSError:
                    pass
            for f in fds:
                if f != chan or pid < 0:
                    os.close(f)
            if pid > 0:
                pfd = os.pidfd_open(pid)
                live[pfd] = (pid, chan)
                poll.register(pfd, select.POLLIN)
_toolsmith_venv, _toolsmith_hint = _toolsmith_fork_server()
del _toolsmith_fork_server
def _toolsmith_site():
    # In the call's process, once the entry line has come: a venv's site set-up as the
    # interpreter would have made it (its .pth lines among it), any sitecustomize.
    import site
    if _toolsmith_venv:
        site.main()
    else:
        site.execsitecustomize()
        if site.ENABLE_USER_SITE:
            site.execusercustomize()
