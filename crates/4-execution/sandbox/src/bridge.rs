//! The sandbox's end of the filtering proxy: `toolsmith __net-bridge SOCKET -- PROGRAM ARGS…`
//! runs inside a Linux sandbox's own network namespace. It listens on
//! `127.0.0.1:BRIDGE_PORT` there, starts PROGRAM (the script) with everything inherited, and
//! forwards each connection to the proxy's unix SOCKET (bound into the sandbox), the only
//! way out. It exits with the program's status when the program exits. No async runtime and
//! small thread stacks: it runs under the script's memory and task limits.

use super::net::BRIDGE_PORT;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::process::Command;

/// The first argument that makes the binary a bridge.
pub const ARG: &str = "__net-bridge";
/// Before `--`: refuse the program unix sockets (the in-process sandbox, where the host's
/// file system, and so its pathname sockets, stays visible; the bridge itself needs one).
pub const NO_UNIX: &str = "--no-unix";

/// Connections forwarded at once (each takes two small threads).
const MAX_CONNECTIONS: usize = 16;
const STACK: usize = 64 * 1024;

fn fail(code: i32, msg: String) -> ! {
    eprintln!("toolsmith network bridge: {msg}");
    std::process::exit(code)
}

/// Run as the bridge (`args` follow `__net-bridge`); never returns.
pub fn main(args: &[OsString]) -> ! {
    let (socket, no_unix, program) = match args {
        [socket, sep, program @ ..] if sep == "--" && !program.is_empty() => {
            (socket, false, program)
        }
        [socket, flag, sep, program @ ..]
            if flag == NO_UNIX && sep == "--" && !program.is_empty() =>
        {
            (socket, true, program)
        }
        _ => fail(
            125,
            "usage: toolsmith __net-bridge SOCKET [--no-unix] -- PROGRAM [ARGS…]".into(),
        ),
    };
    let listener = TcpListener::bind(("127.0.0.1", BRIDGE_PORT)).unwrap_or_else(|e| {
        fail(
            125,
            format!("cannot listen on 127.0.0.1:{BRIDGE_PORT}: {e}"),
        )
    });
    let mut cmd = Command::new(&program[0]);
    cmd.args(&program[1..]);
    if no_unix {
        refuse_unix(&mut cmd);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| fail(127, format!("cannot run {:?}: {e}", program[0])));
    release_stdio();
    let socket = std::path::PathBuf::from(socket);
    let live = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let _ = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                if live.load(std::sync::atomic::Ordering::SeqCst) >= MAX_CONNECTIONS {
                    drop(conn);
                    continue;
                }
                let Ok(up) = UnixStream::connect(&socket) else {
                    drop(conn);
                    continue;
                };
                live.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let live = live.clone();
                let _ = std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn(move || {
                        forward(conn, up);
                        live.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    });
            }
        });
    let status = child
        .wait()
        .unwrap_or_else(|e| fail(125, format!("waiting for the program: {e}")));
    exit_like(status)
}

/// The program gets the sandbox's seccomp program without unix sockets, on top of the one
/// the bridge runs under (filters only add up).
fn refuse_unix(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let prog = super::linux::seccomp_cached(true, false)
            .unwrap_or_else(|e| fail(125, format!("seccomp: {e}")));
        // SAFETY: the closure makes one prctl on the program prepared before the fork.
        unsafe {
            cmd.pre_exec(move || super::linux::load_seccomp(&prog));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Copy both ways until both sides are done.
fn forward(tcp: TcpStream, unix: UnixStream) {
    let (Ok(tcp2), Ok(unix2)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || pump(tcp2, unix2, |u: &UnixStream| u.shutdown(Shutdown::Write)));
    pump(unix, tcp, |t: &TcpStream| t.shutdown(Shutdown::Write));
    if let Ok(h) = up {
        let _ = h.join();
    }
}

fn pump<R: Read, W: Write>(mut from: R, mut to: W, done: impl Fn(&W) -> std::io::Result<()>) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = done(&to);
}

/// The bridge keeps no copy of the script's stdin and stdout: they end when the script does.
fn release_stdio() {
    // SAFETY: open/dup2/close on descriptors this process owns.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

/// Exit with the program's code, or die of the signal that killed it.
fn exit_like(status: std::process::ExitStatus) -> ! {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        // SAFETY: restoring the default action and raising a signal on this process.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        std::process::exit(128 + sig)
    }
    std::process::exit(status.code().unwrap_or(125))
}
