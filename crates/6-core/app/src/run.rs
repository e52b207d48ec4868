//! The call path of a stored tool: look it up, check its arguments, verify its files against
//! git, the trust policy, the person's approval, then dispatch to its runner (WASM, script,
//! upstream MCP server) or run its pipeline's steps.

use super::{App, CallError, MAX_PIPELINE_DEPTH, check_arguments};
use crate::error::Hint;
use crate::error::{HostCode, HostError};
use crate::index::{Callee, Origin, Tool};
use crate::manifest::{Kind, OnError};
use crate::pipeline;
use crate::runner::host::Host;
use crate::runner::{CallOutput, RunError};
use futures::future::BoxFuture;
use serde_json::Value;

impl App {
    /// Answer a script's `tools/call` request (`ToolRequest::CallTool`) with the JSON-RPC
    /// shape the script protocol expects: the tool's structured result (or its text), or an
    /// error (code, message). `host` serves the called tool's own requests.
    pub async fn call_for_script(
        &self,
        name: &str,
        args: Value,
        host: &dyn Host,
    ) -> Result<Value, HostError> {
        match self.call(name, args, host).await {
            Ok(out) => Ok(out.structured.unwrap_or(Value::String(out.text))),
            // The tool is told what to do too: a refusal it passes on keeps its hint.
            Err(e) => Err(HostError::new(
                HostCode::Refused,
                match e.hint() {
                    Some(h) => format!("{e}\nhint: {h}"),
                    None => e.to_string(),
                },
            )),
        }
    }

    /// Call a stored tool by name.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        host: &dyn Host,
    ) -> Result<CallOutput, CallError> {
        let _running = self.running();
        self.call_at(name, args, host, 0).await
    }

    fn call_at<'a>(
        &'a self,
        name: &'a str,
        args: Value,
        host: &'a dyn Host,
        depth: usize,
    ) -> BoxFuture<'a, Result<CallOutput, CallError>> {
        Box::pin(self.call_inner(name, args, host, depth))
    }

    async fn call_inner(
        &self,
        name: &str,
        args: Value,
        host: &dyn Host,
        depth: usize,
    ) -> Result<CallOutput, CallError> {
        let callee = Callee::stored(&self.toolbox.tools_dir(), self.tool(name)?);
        // Every call of a stored tool by name counts for ranking, whatever its entry point
        // (MCP, `call_tool`, the CLI, a pipeline's step, a tool's nested call).
        self.usage().record(name);
        self.run_callee(callee, args, host, depth).await
    }

    /// Run what `callee` says: a stored tool (as the index read it), a staged candidate
    /// (a build or registration checking its examples before the commit, an MCP entry's
    /// staged copy) or scratch code. The gates read its origin, never its directory's path.
    pub async fn run(
        &self,
        callee: Callee,
        args: Value,
        host: &dyn Host,
    ) -> Result<CallOutput, CallError> {
        self.run_callee(callee, args, host, 0).await
    }

    /// The gates in order — files against git, trust, arguments, approval — then the run and
    /// its after-care (redaction, audit).
    async fn run_callee(
        &self,
        callee: Callee,
        args: Value,
        host: &dyn Host,
        depth: usize,
    ) -> Result<CallOutput, CallError> {
        let Callee { tool, dir, origin } = callee;
        let name = tool.manifest.name.clone();
        let name = name.as_str();
        let t0 = std::time::Instant::now();
        // A tool of an MCP entry's server runs as its entry: the entry's files are verified,
        // its version trusted and its grants approved (the tool itself has no files).
        let upstream = tool.upstream.clone();
        let (tool, called) = match &upstream {
            Some(u) => (self.tool(&u.entry)?, Some(tool)),
            None => (tool, None),
        };
        let warning = self.verify_stored(origin, &tool)?;
        let t_verify = t0.elapsed();
        crate::trust::require_trusted(&self.toolbox, origin, &tool)?;
        let t_trust = t0.elapsed();
        // Only then the arguments: a held tool's schema is not told, not even by a refusal.
        crate::telemetry::stage("argument check").enter_checked(
            || check_arguments(called.as_ref().unwrap_or(&tool), &args),
            CallError::kind,
        )?;
        let t_args = t0.elapsed();
        if let Some(w) = &warning {
            tracing::warn!("{w}");
            host.log("warning", w);
        }
        let (tool, call) = crate::telemetry::stage("approval wait")
            .run_checked(
                crate::approval::admit(&self.gate(), origin, &dir, tool, &args, host),
                |_| "refused",
            )
            .await?;
        let t_admit = t0.elapsed();
        let run = crate::telemetry::stage("tool run");
        if run.is_recording() {
            run.attr("gen_ai.tool.name", name.to_string());
            run.attr("toolsmith.tool.kind", tool.manifest.kind.to_string());
        }
        let work = async {
            match &upstream {
                Some(u) => match self.upstream_or_err(name) {
                    Ok(up) => up
                        .call(&dir, &tool, &u.tool, args, &call.host(host))
                        .await
                        .map_err(CallError::from),
                    Err(e) => Err(e.into()),
                },
                None => (self.dispatch(name, dir, tool, args, &call.host(host), depth)).await,
            }
        };
        let out = run.run_checked(work, CallError::kind).await;
        let t_run = t0.elapsed();
        let out = crate::telemetry::stage("redaction")
            .enter(|| call.finish(out, |e: &CallError| (e.to_string(), e.hint())));
        tracing::debug!(
            tool = %name,
            verified = ?t_verify,
            trust = ?t_trust,
            arguments = ?t_args,
            admitted = ?t_admit,
            ran = ?t_run,
            audited = ?t0.elapsed(),
            "call phases (elapsed at the end of each)"
        );
        out.map(|mut o| {
            o.warnings.extend(warning);
            o
        })
    }

    /// For a stored tool (not a staged candidate nor scratch code): refuse or flag a tool
    /// whose files differ from HEAD or from the source hash its tool.toml records.
    pub(super) fn verify_stored(
        &self,
        origin: Origin,
        tool: &Tool,
    ) -> Result<Option<String>, CallError> {
        let name = &tool.manifest.name;
        if tool.manifest.kind == Kind::Pipeline || !origin.is_stored() {
            return Ok(None);
        }
        let details = match self.toolbox.drift(name, &tool.manifest) {
            Ok(d) if d.is_clean() => return Ok(None),
            Ok(d) => d.describe(name),
            // Fail closed under "refuse"; say so under "warn".
            Err(e) => format!("tool {name} runs unverified: it cannot be compared with git ({e})"),
        };
        match self.toolbox.uncommitted_policy() {
            crate::toolbox::UncommittedPolicy::Refuse => Err(CallError::Uncommitted {
                name: name.clone(),
                details,
            }),
            crate::toolbox::UncommittedPolicy::Warn => Ok(Some(details)),
        }
    }

    async fn dispatch(
        &self,
        name: &str,
        dir: std::path::PathBuf,
        tool: crate::runner::Granted,
        args: Value,
        host: &dyn Host,
        depth: usize,
    ) -> Result<CallOutput, CallError> {
        match tool.manifest.kind {
            Kind::Wasm => {
                let runner = self.wasm()?.clone();
                let out = crate::platform::blocking_here(move || runner.call(&dir, &tool, &args))
                    .await
                    .map_err(|e| RunError::Trap {
                        tool: name.to_string(),
                        message: e.to_string(),
                    })??;
                for l in &out.logs {
                    host.log("info", l);
                }
                Ok(out)
            }
            Kind::Script => Ok(self.scripts.call(&dir, &tool, &args, host).await?),
            Kind::Pipeline => self.run_pipeline(&tool, args, host, depth).await,
            // The entry itself: its server asked for its tools now (the listing refreshed).
            Kind::Mcp => {
                let names = self.upstream_or_err(name)?.list(&dir, &tool).await?;
                let tools: Vec<String> = names
                    .iter()
                    .map(|t| crate::index::upstream::tool_name(name, t))
                    .collect();
                Ok(CallOutput::from_value(
                    serde_json::json!({"entry": name, "tools": tools}),
                    Vec::new(),
                ))
            }
        }
    }

    /// Run a pipeline's steps in order; its result is the last step's output.
    async fn run_pipeline(
        &self,
        tool: &Tool,
        args: Value,
        host: &dyn Host,
        depth: usize,
    ) -> Result<CallOutput, CallError> {
        let name = tool.manifest.name.clone();
        if depth >= MAX_PIPELINE_DEPTH {
            return Err(CallError::TooDeep {
                name,
                max: MAX_PIPELINE_DEPTH,
            });
        }
        let mut scope = pipeline::Scope {
            input: args,
            ..Default::default()
        };
        let mut last = CallOutput::from_value(Value::Null, Vec::new());
        let mut logs = Vec::new();
        for (i, step) in tool.manifest.steps.iter().enumerate() {
            let label = step.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            let step_err = |message: String, hint: Option<String>| CallError::Step {
                pipeline: name.clone(),
                step: label.clone(),
                tool: step.tool.clone(),
                message,
                hint,
            };
            if let Some(cond) = &step.when {
                let v = pipeline::resolve(&Value::String(cond.clone()), &scope)
                    .map_err(|e| step_err(e.to_string(), Some("fix the step's `when`".into())))?;
                if !pipeline::truthy(&v) {
                    continue;
                }
            }
            let step_args = pipeline::resolve(&step.args, &scope).map_err(|e| {
                step_err(
                    e.to_string(),
                    Some(
                        "references are $input, $prev and $steps.<name>, with dotted paths".into(),
                    ),
                )
            })?;
            let result = match self.call_at(&step.tool, step_args, host, depth + 1).await {
                Ok(out) => out
                    .structured
                    .clone()
                    .unwrap_or(Value::String(out.text.clone())),
                Err(e) if step.on_error == Some(OnError::Continue) => {
                    host.log(
                        "warning",
                        &format!("pipeline {name}: step {label} failed and was skipped: {e}"),
                    );
                    serde_json::json!({"error": e.to_string()})
                }
                Err(e) => return Err(step_err(e.to_string(), e.hint())),
            };
            logs.push(format!("step {label}: {} done", step.tool));
            if let Some(n) = &step.name {
                scope.steps.insert(n.clone(), result.clone());
            }
            scope.prev = result.clone();
            last = CallOutput::from_value(result, Vec::new());
        }
        last.logs = logs;
        Ok(last)
    }
}
