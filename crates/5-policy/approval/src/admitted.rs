//! An admitted call's after-care: a host that redacts what the tool reports, then the result
//! redacted, the audit entry written, the refusal or the reduced grants said.

use crate::audit;
use crate::call::CallOutput;
use crate::call::host::Host;
use crate::secrets::{self, Redactor};
use crate::{GateError, Redacting};
use std::time::Instant;

/// An admitted call: the tool as it runs (effective grants, secrets), and what `finish` needs.
pub struct Call {
    pub(crate) redactor: Redactor,
    /// The tool called.
    pub(crate) tool: String,
    pub(crate) grants: Vec<String>,
    pub(crate) started: Instant,
    pub(crate) bytes_in: usize,
    /// Stored calls are audited (a build's work directory is not).
    pub(crate) audit: Option<(audit::Log, audit::Entry)>,
    pub(crate) warnings: Vec<String>,
    /// Added to an error when the call ran with fewer grants than requested.
    pub(crate) note: Option<String>,
}

impl Call {
    /// A host that redacts what the tool logs or reports before it reaches `inner`.
    pub fn host<'a>(&'a self, inner: &'a dyn Host) -> Redacting<'a> {
        Redacting::new(inner, &self.redactor, &self.tool)
    }

    pub(crate) fn record_refusal(&mut self, e: &GateError) {
        if let Some((log, mut entry)) = self.audit.take() {
            entry.outcome = "pending".into();
            entry.bytes_in = self.bytes_in as u64;
            entry.error = Some(self.redactor.text(&e.to_string()));
            log.append(&entry);
        }
    }

    /// After the call: redact secret values from the result or the error (an error holding one,
    /// or of a call with fewer grants than requested, becomes `GateError::Rewritten`), add the
    /// gate's warnings, and audit the call.
    pub fn finish<E: From<GateError>>(
        self,
        out: Result<CallOutput, E>,
        describe: impl Fn(&E) -> (String, Option<String>),
    ) -> Result<CallOutput, E> {
        let r = &self.redactor;
        let out = match out {
            Ok(mut o) => {
                r.result(&mut o.text, o.structured.as_mut());
                for c in &mut o.content {
                    r.json(c);
                }
                // Lines as a whole: a value split across them is found too.
                let mut logs = secrets::lines::Window::new(r.clone());
                let mut lines: Vec<String> = Vec::with_capacity(o.logs.len());
                for l in &o.logs {
                    lines.extend(logs.push((), l).into_iter().map(|(_, l)| l));
                }
                lines.extend(logs.flush().into_iter().map(|(_, l)| l));
                o.logs = lines;
                o.warnings.iter_mut().for_each(|l| {
                    r.in_place(l);
                });
                o.warnings.extend(self.warnings.iter().cloned());
                Ok(o)
            }
            Err(e) => {
                let (message, hint) = describe(&e);
                if r.finds(&message)
                    || hint.as_deref().is_some_and(|h| r.finds(h))
                    || self.note.is_some()
                {
                    let note = self.note.as_deref().map(|n| format!(" ({n})"));
                    Err(E::from(GateError::Rewritten {
                        message: r.text(&message) + note.as_deref().unwrap_or(""),
                        hint: hint.map(|h| r.text(&h)),
                    }))
                } else {
                    Err(e)
                }
            }
        };
        if let Some((log, mut entry)) = self.audit {
            entry.ms = self.started.elapsed().as_millis() as u64;
            entry.bytes_in = self.bytes_in as u64;
            entry.grants = self.grants;
            match &out {
                Ok(o) => {
                    entry.outcome = "ok".into();
                    entry.bytes_out = o.text.len() as u64;
                    entry.process = o.process.map(|p| p.as_str().to_string());
                    if let Some(seen) = &o.network {
                        // A host name can carry a value too (`<hex>.example.com`).
                        entry.hosts_reached = seen.allowed.iter().map(|h| r.text(h)).collect();
                        entry.hosts_refused = seen.denied.iter().map(|h| r.text(h)).collect();
                    }
                }
                Err(e) => {
                    let (message, _) = describe(e);
                    entry.outcome = "error".into();
                    entry.error = Some(r.text(&message).chars().take(300).collect());
                }
            }
            log.append(&entry);
        }
        out
    }
}
