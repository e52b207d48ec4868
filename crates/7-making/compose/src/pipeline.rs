//! Creating pipelines: a spec becomes a `kind = "pipeline"` tool.toml, validated against the
//! index (unknown tools, unknown step references, cycles — each error names the step), then
//! committed like any other tool.

use crate::app::pipeline::{step_refs, uses_prev};
use crate::index::Index;
use crate::manifest::{self, Kind, Manifest, Step};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Problems with a pipeline, each naming its step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the pipeline is not valid: {}", .problems.join("; "))]
pub struct PipelineError {
    /// Each problem, naming its step.
    pub problems: Vec<String>,
}

fn step_label(i: usize, s: &Step) -> String {
    match &s.name {
        Some(n) => format!("step {} ({n})", i + 1),
        None => format!("step {}", i + 1),
    }
}

/// Check a pipeline manifest against the tools in the index.
pub fn validate(m: &Manifest, index: &Index) -> Result<(), PipelineError> {
    let mut problems = Vec::new();
    if m.steps.is_empty() {
        problems.push("a pipeline needs at least one step".to_string());
    }
    let mut seen_names: BTreeSet<&str> = BTreeSet::new();
    for (i, s) in m.steps.iter().enumerate() {
        let label = step_label(i, s);
        if s.tool == m.name {
            problems.push(format!("{label} calls the pipeline itself"));
        } else if index.tool(&s.tool).is_none() {
            let why = if index.get(&s.tool).is_some() {
                "is broken"
            } else {
                "does not exist"
            };
            problems.push(format!("{label}: tool {:?} {why}", s.tool));
        }
        let mut refs = step_refs(&s.args);
        if let Some(w) = &s.when {
            refs.extend(step_refs(&Value::String(w.clone())));
        }
        for r in refs {
            if !seen_names.contains(r.as_str()) {
                problems.push(format!(
                    "{label} refers to $steps.{r}, but no earlier step is named {r:?}"
                ));
            }
        }
        if i == 0 && (uses_prev(&s.args) || s.when.as_deref().is_some_and(|w| w.contains("$prev")))
        {
            problems.push(format!("{label} refers to $prev, but it is the first step"));
        }
        if let Some(n) = s.name.as_deref()
            && !seen_names.insert(n)
        {
            problems.push(format!("{label}: the step name {n:?} is used twice"));
        }
    }
    if let Some(cycle) = find_cycle(m, index) {
        problems.push(format!(
            "the pipelines call each other in a cycle: {}",
            cycle.join(" → ")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PipelineError { problems })
    }
}

/// A cycle through pipelines reachable from `m` (with `m` as it would be stored).
fn find_cycle(m: &Manifest, index: &Index) -> Option<Vec<String>> {
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in index.tools().filter(|t| t.manifest.kind == Kind::Pipeline) {
        graph.insert(
            t.manifest.name.clone(),
            t.manifest.steps.iter().map(|s| s.tool.clone()).collect(),
        );
    }
    graph.insert(
        m.name.clone(),
        m.steps.iter().map(|s| s.tool.clone()).collect(),
    );
    fn dfs(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(pos) = path.iter().position(|p| p == node) {
            let mut cycle = path[pos..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        let next = graph.get(node)?;
        path.push(node.to_string());
        for n in next {
            if let Some(c) = dfs(n, graph, path) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    dfs(&m.name, &graph, &mut Vec::new())
}

/// What a caller gives to create a pipeline.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct PipelineSpec {
    /// The pipeline's tool name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its steps, in order (`[[steps]]`).
    pub steps: Vec<Step>,
    /// Its input schema (default: any object).
    #[serde(default)]
    pub input_schema: Option<Map<String, Value>>,
    /// Its output schema, if it promises one.
    #[serde(default)]
    pub output_schema: Option<Map<String, Value>>,
    /// Its tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Examples, run before the pipeline is committed.
    #[serde(default)]
    pub examples: Vec<manifest::Example>,
    /// Its MCP annotations.
    #[serde(default)]
    pub annotations: Option<manifest::Annotations>,
}

/// The manifest a spec describes (not yet validated against the index).
pub fn manifest_of(spec: &PipelineSpec) -> Manifest {
    Manifest {
        format: manifest::FORMAT_VERSION,
        name: spec.name.clone(),
        description: spec.description.clone(),
        kind: Kind::Pipeline,
        version: None,
        tags: spec.tags.clone(),
        pinned: false,
        run: Default::default(),
        input_schema: Some(std::sync::Arc::new(
            spec.input_schema.clone().unwrap_or_else(|| {
                let mut m = Map::new();
                m.insert("type".into(), Value::String("object".into()));
                m
            }),
        )),
        input_schema_file: None,
        output_schema: spec.output_schema.clone().map(std::sync::Arc::new),
        output_schema_file: None,
        annotations: spec.annotations.clone().unwrap_or_default(),
        dependencies: Default::default(),
        limits: Default::default(),
        capabilities: Default::default(),
        secrets: Default::default(),
        examples: spec.examples.clone(),
        hashes: Default::default(),
        origin: None,
        mcp: None,
        steps: spec.steps.clone(),
    }
}

/// Why a pipeline could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// Its steps do not fit together (or name tools that do not exist).
    #[error(transparent)]
    Invalid(#[from] PipelineError),
    /// The manifest it makes does not validate.
    #[error("the pipeline's manifest is not valid: {0}")]
    Manifest(String),
    /// Its examples gave other results than they promise.
    #[error("the pipeline's examples failed: {}", .0.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("; "))]
    Examples(Vec<crate::examples::ExampleFailure>),
    /// Writing it (the commit) failed.
    #[error(transparent)]
    Toolbox(#[from] crate::toolbox::ToolboxError),
}

impl crate::error::Hint for CreateError {
    fn hint(&self) -> Option<String> {
        match self {
            CreateError::Invalid(_) => Some("steps call stored tools by name; references are $input.<path>, $prev.<path> and $steps.<earlier step name>.<path>".into()),
            CreateError::Manifest(_) => Some("a pipeline needs name, description and steps [{tool, args}] (toolsmith://guide)".into()),
            CreateError::Examples(_) => Some("fix the steps or the expected outputs, or pass commit_anyway".into()),
            CreateError::Toolbox(e) => e.hint(),
        }
    }
}

/// Validate a pipeline spec, run its examples, and commit it as `tools/<name>/tool.toml`.
pub async fn create(
    app: &crate::app::App,
    spec: &PipelineSpec,
    actor: &crate::toolbox::Actor,
    host: &dyn crate::runner::script::Host,
    commit_anyway: bool,
) -> Result<crate::toolbox::WriteOutcome, CreateError> {
    let m = manifest_of(spec);
    let text = m
        .to_toml()
        .map_err(|e| CreateError::Manifest(e.to_string()))?;
    // The same checks as a hand-written tool.toml, then the pipeline-specific ones.
    let parsed = manifest::parse(std::path::Path::new("tool.toml"), Some(&spec.name), &text)
        .map_err(|d| {
            CreateError::Manifest(
                d.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
    validate(&parsed.manifest, &app.index())?;
    let tool = crate::index::Tool {
        input_schema: parsed.manifest.input_schema.clone().unwrap_or_default(),
        output_schema: parsed.manifest.output_schema.clone(),
        manifest: parsed.manifest,
        warnings: vec![],
        validator: Default::default(),
        upstream: None,
    };
    let dir = app.toolbox.tools_dir();
    let failures = crate::examples::check(app, &dir, &tool, host).await;
    if !failures.is_empty() && !commit_anyway {
        return Err(CreateError::Examples(failures));
    }
    let files = vec![crate::toolbox::FileSpec::new(manifest::FILE_NAME, text)];
    let tb = app.toolbox.clone();
    let name = spec.name.clone();
    let actor = actor.clone();
    let out = crate::platform::blocking(move || tb.write_tool(&name, &files, actor))
        .await
        .map_err(|e| CreateError::Manifest(e.to_string()))??;
    app.refresh();
    Ok(out)
}
