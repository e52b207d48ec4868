//! The host a call's tool talks to (`Redacting`, made by `Call::host`): what the tool sends
//! out — log lines, progress, questions to the person, prompts, other tools' arguments,
//! memory writes — has secret values replaced by their names, and its questions, log lines
//! and progress messages are labelled as its own (`Host::tool_question`, `Host::tool_log`,
//! `tool NAME: …`).

use crate::call::host::{Ask, Host, ToolRequest};
use crate::error::HostError;
use crate::secrets::{Redactor, lines::Window};
use serde_json::Value;
use std::sync::Mutex;

/// The host a call's tool talks to, with secret values redacted from its logs and progress.
/// Log lines a value could be split across are held back until it is known (`lines::Window`);
/// what is still held when the call ends is sent as the host is dropped, before the result.
pub struct Redacting<'a> {
    inner: &'a dyn Host,
    redactor: &'a Redactor,
    /// The tool whose call this is: its questions to the person are shown as its own.
    tool: &'a str,
    logs: Mutex<Window<String>>,
}

impl<'a> Redacting<'a> {
    pub(super) fn new(inner: &'a dyn Host, redactor: &'a Redactor, tool: &'a str) -> Self {
        Redacting {
            inner,
            redactor,
            tool,
            logs: Mutex::new(Window::new(redactor.clone())),
        }
    }

    fn send_logs(&self, lines: Vec<(String, String)>) {
        for (level, line) in lines {
            self.inner.tool_log(self.tool, &level, &line);
        }
    }
}

impl Drop for Redacting<'_> {
    fn drop(&mut self) {
        let held = self.logs.get_mut().map(|w| w.flush()).unwrap_or_default();
        self.send_logs(held);
    }
}

impl Host for Redacting<'_> {
    fn log(&self, level: &str, message: &str) {
        let ready = self
            .logs
            .lock()
            .map(|mut w| w.push(level.to_string(), message))
            .unwrap_or_default();
        self.send_logs(ready);
    }
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        // The tool's words (a script's, an MCP entry's server's), labelled as its own.
        let message = message.map(|m| format!("tool {}: {}", self.tool, self.redactor.text(&m)));
        self.inner.progress(progress, total, message);
    }
    fn request(
        &self,
        mut request: ToolRequest,
    ) -> futures::future::BoxFuture<'_, Result<Value, HostError>> {
        // What a tool sends out (a question to the person, a prompt, another tool's name and
        // arguments: a secret reaches only the tools that declare it) is redacted too.
        request.redact_with(&mut |v| {
            self.redactor.json(v);
        });
        match request {
            ToolRequest::Question(params) => self.inner.tool_question(self.tool, params),
            request => self.inner.request(request),
        }
    }
    fn tool_question<'a>(
        &'a self,
        tool: &'a str,
        mut params: Value,
    ) -> futures::future::BoxFuture<'a, Result<Value, HostError>> {
        self.redactor.json(&mut params);
        self.inner.tool_question(tool, params)
    }
    fn redact(&self, value: &mut Value) {
        self.redactor.json(value);
        self.inner.redact(value);
    }
    fn actor(&self) -> Option<(String, Option<String>)> {
        self.inner.actor()
    }
    fn ask_person<'a>(
        &'a self,
        question: Ask,
    ) -> futures::future::BoxFuture<'a, Result<Value, HostError>> {
        self.inner.ask_person(question)
    }
    fn elicitation_complete(&self, elicitation_id: &str) {
        self.inner.elicitation_complete(elicitation_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::future::BoxFuture;
    use std::collections::BTreeMap;

    const VALUE: &str = "tok-7f3a9c1e5b2d4680";

    /// Records what reaches the client.
    #[derive(Default)]
    struct Client {
        seen: Mutex<Vec<String>>,
    }

    impl Host for Client {
        fn log(&self, _: &str, message: &str) {
            self.seen.lock().unwrap().push(message.to_string());
        }
        fn progress(&self, _: f64, _: Option<f64>, message: Option<String>) {
            self.seen.lock().unwrap().extend(message);
        }
        fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
            self.seen.lock().unwrap().push(format!("{request:?}"));
            Box::pin(async { Ok(Value::Null) })
        }
    }

    fn redactor() -> Redactor {
        Redactor::new(&BTreeMap::from([("T".to_string(), VALUE.to_string())]))
    }

    #[test]
    fn a_value_split_across_log_lines_reaches_the_client_as_its_name() {
        let client = Client::default();
        let r = redactor();
        {
            let host = Redacting::new(&client, &r, "t");
            host.log("info", "starting.");
            host.log("info", "using tok-7f3a9");
            host.log("info", "c1e5b2d4680 now");
            host.log("info", "tok-");
        }
        let seen = client.seen.lock().unwrap().clone();
        let all = seen.concat();
        assert!(
            !all.contains("c1e5b2d4680") && !all.contains("7f3a9"),
            "{seen:?}"
        );
        assert_eq!(
            seen,
            ["starting.", "using [secret T]", " now", "tok-"],
            "in order, the held line sent when the call ends"
        );
    }

    #[test]
    fn a_tools_progress_is_labelled_as_its_own() {
        let client = Client::default();
        let r = redactor();
        let host = Redacting::new(&client, &r, "p");
        host.progress(1.0, None, Some(format!("toolsmith: approved {VALUE}")));
        let seen = client.seen.lock().unwrap().clone();
        assert_eq!(seen, ["tool p: toolsmith: approved [secret T]"]);
    }

    #[test]
    fn another_tools_arguments_carry_no_secret() {
        let client = Client::default();
        let r = redactor();
        let host = Redacting::new(&client, &r, "t");
        let params = serde_json::json!({"name": "other", "arguments": {"token": VALUE}});
        let request = ToolRequest::parse("tools/call", params).unwrap();
        futures::executor::block_on(host.request(request)).unwrap();
        let seen = client.seen.lock().unwrap().clone();
        assert!(!seen.concat().contains(VALUE), "{seen:?}");
        assert!(seen[0].contains("[secret T]"), "{seen:?}");
    }
}
