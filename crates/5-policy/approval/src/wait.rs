//! A call waiting for the person after its client opened the console's link (an approval, a
//! secret to set): until the person acted (in the console or with the CLI), the tool changed,
//! the console stopped, or the wait passed (`TOOLSMITH_APPROVAL_WAIT`). Meanwhile the client
//! hears why the call takes long: a log line when the wait starts and progress notifications
//! every few seconds (a task's status message too), which also keep waiting the clients that
//! reset their request timeout on progress. A client that cancels the call ends the wait with
//! it.

use crate::call::host::Host;
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

/// How often the wait looks for the person's answer.
const POLL: Duration = Duration::from_millis(250);
/// How often the client hears that the call still waits.
const NOTE_EVERY: Duration = Duration::from_secs(2);
/// How often the wait checks that the console still runs.
const CONSOLE_EVERY: Duration = Duration::from_secs(1);

/// Why a wait ended without the person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    TimedOut,
    ConsoleStopped,
    Changed,
}

impl Ended {
    fn describe(self, wait: Duration) -> String {
        match self {
            Ended::TimedOut => format!(
                "no decision within {} s (TOOLSMITH_APPROVAL_WAIT)",
                wait.as_secs()
            ),
            Ended::ConsoleStopped => "the toolsmith console stopped".into(),
            Ended::Changed => "the tool changed while it waited".into(),
        }
    }
}

/// What waits and for whom.
pub struct Waiting<'a> {
    pub host: &'a dyn Host,
    pub personal: &'a Path,
    pub wait: Duration,
    /// What the person is to do, for the notes ("approve or deny fetch_issues").
    pub what: String,
}

impl Waiting<'_> {
    /// Until `done` has the answer, or `changed` says it no longer matters.
    pub async fn until<T>(
        &self,
        mut done: impl FnMut() -> Option<T>,
        changed: impl Fn() -> bool,
    ) -> Result<T, Ended> {
        let start = Instant::now();
        let deadline = start + self.wait;
        let total = self.wait.as_secs_f64();
        self.host.log(
            "info",
            &format!(
                "toolsmith: waiting up to {} s for the person to {} in the toolsmith console",
                self.wait.as_secs(),
                self.what
            ),
        );
        let mut next_note = start;
        let mut next_console = start + CONSOLE_EVERY;
        let ended = loop {
            if let Some(answer) = done() {
                return Ok(answer);
            }
            let now = Instant::now();
            if now >= deadline {
                break Ended::TimedOut;
            }
            if changed() {
                break Ended::Changed;
            }
            if now >= next_console {
                if crate::personal::console_address(self.personal).is_none() {
                    break Ended::ConsoleStopped;
                }
                next_console = now + CONSOLE_EVERY;
            }
            if now >= next_note {
                let waited = (now - start).as_secs_f64();
                self.host.progress(
                    waited.floor(),
                    Some(total),
                    Some(format!(
                        "waiting for the person to {} in the toolsmith console ({} s left)",
                        self.what,
                        (total - waited).ceil() as u64
                    )),
                );
                next_note = now + NOTE_EVERY;
            }
            tokio::time::sleep(POLL.min(deadline - now)).await;
        };
        self.host.log(
            "info",
            &format!(
                "toolsmith: stopped waiting for the person to {}: {}",
                self.what,
                ended.describe(self.wait)
            ),
        );
        Err(ended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Client {
        notes: Mutex<Vec<String>>,
    }

    impl Host for Client {
        fn log(&self, _: &str, message: &str) {
            self.notes.lock().unwrap().push(format!("log {message}"));
        }
        fn progress(&self, p: f64, total: Option<f64>, message: Option<String>) {
            self.notes.lock().unwrap().push(format!(
                "progress {p}/{} {}",
                total.unwrap_or(0.0),
                message.unwrap_or_default()
            ));
        }
    }

    #[tokio::test]
    async fn the_client_hears_why_the_call_waits_and_the_wait_ends_when_it_no_longer_matters() {
        let tmp = tempfile::tempdir().unwrap();
        // A console that answers on its port.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        crate::personal::record_console(tmp.path(), &url).unwrap();
        let client = Client::default();
        let w = Waiting {
            host: &client,
            personal: tmp.path(),
            wait: Duration::from_secs(30),
            what: "approve or deny t".into(),
        };
        // Answered after a few polls.
        let mut polls = 0;
        let r = w
            .until(
                || {
                    polls += 1;
                    (polls == 4).then_some("approved")
                },
                || false,
            )
            .await;
        assert_eq!(r, Ok("approved"));
        let notes = client.notes.lock().unwrap().clone();
        assert!(
            notes[0].starts_with("log toolsmith: waiting up to 30 s"),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("progress 0/30 waiting for the person to approve or deny t"),
            "{notes:?}"
        );
        // The tool changed: no use waiting.
        let r: Result<(), Ended> = w.until(|| None, || true).await;
        assert_eq!(r, Err(Ended::Changed));
        // The console stopped: nobody can answer there.
        drop(listener);
        let r: Result<(), Ended> = w.until(|| None, || false).await;
        assert_eq!(r, Err(Ended::ConsoleStopped));
        let last = client.notes.lock().unwrap().last().cloned().unwrap();
        assert!(last.contains("the toolsmith console stopped"), "{last}");
        // A short wait passes.
        crate::personal::record_console(tmp.path(), &url).unwrap();
        let quick = Waiting {
            wait: Duration::from_millis(300),
            ..w
        };
        let r: Result<(), Ended> = quick.until(|| None, || false).await;
        assert_eq!(r, Err(Ended::TimedOut));
    }
}
