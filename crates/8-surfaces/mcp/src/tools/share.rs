//! Sharing meta-tools: `import_tool`, `update_tool`, `export_tool` — their MCP definitions and
//! what they do (through `crate::share`).

use super::Ctx;
use super::history::blocking;
use super::meta::{Hints, MetaTool, Reply, Ty};
use super::result::{error_result, json_result};
use crate::error::Hint;
use crate::share::{self, ImportRequest, ShareError};
use rmcp::model::{CallToolResult, JsonObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// `import_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportArgs {
    /// Git URL/path, Gist or oci://REF
    pub source: String,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub path: Option<String>,
    pub name: Option<String>,
}

/// `update_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    pub name: String,
    pub apply: Option<bool>,
    pub commit: Option<String>,
}

/// `export_tool` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    pub names: Option<Vec<String>>,
    pub remote: Option<String>,
    pub branch: Option<String>,
    pub gist: Option<bool>,
    pub oci: Option<String>,
}

/// `import_tool`.
pub struct ImportTool;
impl MetaTool for ImportTool {
    const NAME: &'static str = "import_tool";
    const DESCRIPTION: &'static str =
        "Import tools or Agent Skills from git, a Gist or oci:// (never run).";
    const DETAILS: &'static str = "Validated, never run; the result lists what it refused. `source`: a git URL or path, a Gist or oci://REF; `path`: a directory in it.";
    const RESULT: &'static [&'static str] = &["tools", "refused", "commit", "similar"];
    const OUTPUT: &'static [(&'static str, Ty)] = &[("tools", Ty::Arr), ("refused", Ty::Arr)];
    const HINTS: Hints = Hints::WRITE.open_world();
    type Args = ImportArgs;
    fn runs_as_task(_: &JsonObject) -> bool {
        true
    }
    async fn call(a: ImportArgs, ctx: Ctx) -> Reply {
        import(&ctx, a).await
    }
}

/// `update_tool`.
pub struct UpdateTool;
impl MetaTool for UpdateTool {
    const NAME: &'static str = "update_tool";
    const DESCRIPTION: &'static str = "Review, then apply, changes at an imported tool's origin.";
    const DETAILS: &'static str =
        "`commit`: the reviewed origin commit or digest (refused if the origin moved on).";
    const RESULT: &'static [&'static str] = &["diff", "applied"];
    const HINTS: Hints = Hints::WRITE.destructive().idempotent().open_world();
    type Args = UpdateArgs;
    async fn call(a: UpdateArgs, ctx: Ctx) -> Reply {
        update(&ctx, a).await
    }
}

/// `export_tool`.
pub struct ExportTool;
impl MetaTool for ExportTool {
    const NAME: &'static str = "export_tool";
    const DESCRIPTION: &'static str =
        "Push tools to a git remote, or one as a Gist or OCI artifact.";
    const DETAILS: &'static str = "`oci`: REGISTRY/REPO:TAG.";
    const RESULT: &'static [&'static str] = &["commit", "files"];
    const HINTS: Hints = Hints::WRITE.idempotent().open_world();
    type Args = ExportArgs;
    async fn call(a: ExportArgs, ctx: Ctx) -> Reply {
        export(&ctx, a).await
    }
}

fn to_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

async fn import(ctx: &Ctx, a: ImportArgs) -> Result<CallToolResult, CallToolResult> {
    let req = ImportRequest {
        source: a.source,
        reference: a.reference,
        path: a.path,
        name: a.name,
        gist_base: ctx.shared.app.config().gist_base.clone(),
    };
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let carried = crate::telemetry::Carried::here();
    let import = move || {
        carried.enter(|| {
            crate::telemetry::stage("import").enter(|| {
                let mut out = share::import_tool(&tb, &req, &actor)?;
                // What came from elsewhere is held: its words are not shown until a person
                // trusts it (fail closed when that cannot be judged).
                for t in &mut out.tools {
                    let held = match crate::trust::standing(&tb, &t.name) {
                        Ok(crate::trust::Standing::Trusted(_)) => continue,
                        Ok(crate::trust::Standing::Held(h)) => h,
                        Err(e) => crate::trust::Held::unjudged(&t.name, &e.to_string()),
                    };
                    t.description = held.withheld().note();
                    t.inferred_manifest = None;
                }
                Ok(out)
            })
        })
    };
    let out = blocking(import, ShareError::hint).await?;
    ctx.changed();
    let mut v = to_json(&out);
    // Per imported tool, the tools already here that look like it.
    let mut similar = serde_json::Map::new();
    for t in &out.tools {
        if let Some(list) = crate::report::similar(&ctx.shared, &t.name).await {
            similar.insert(t.name.clone(), list);
        }
    }
    if !similar.is_empty() {
        v["similar"] = Value::Object(similar);
        v["similar_note"] = Value::String("tools already here look like imported ones: if one does the same job, keep one of them (update_tool, or delete the other)".into());
    }
    Ok(json_result(v))
}

async fn update(ctx: &Ctx, a: UpdateArgs) -> Result<CallToolResult, CallToolResult> {
    // A held tool's content (the diff's old side) is not shown, nor is it updated past a
    // person's review.
    if let Some(crate::trust::Shown::Held(w)) = ctx.shared.app.view().get(&a.name) {
        return Err(error_result(
            format!("tool {}: {}", w.name(), w.note()),
            w.held().hint(),
        ));
    }
    let apply = a.apply.unwrap_or(false);
    let tb = ctx.shared.app.toolbox.clone();
    let actor = ctx.actor.clone();
    let gist_base = ctx.shared.app.config().gist_base.clone();
    let out = blocking(
        move || {
            share::update_tool(
                &tb,
                &a.name,
                apply,
                a.commit.as_deref(),
                &actor,
                gist_base.as_deref(),
            )
        },
        ShareError::hint,
    )
    .await?;
    if out.applied {
        ctx.changed();
    }
    Ok(json_result(to_json(out)))
}

async fn export(ctx: &Ctx, a: ExportArgs) -> Result<CallToolResult, CallToolResult> {
    let names = a.names.unwrap_or_default();
    let tb = ctx.shared.app.toolbox.clone();
    if let Some(target) = a.oci {
        let [name] = names.as_slice() else {
            return Err(error_result(
                "an OCI export takes exactly one tool in `names`",
                Some("pass names: [\"TOOL\"], oci: \"REGISTRY/REPO:TAG\"".into()),
            ));
        };
        let name = name.clone();
        let out = blocking(
            move || share::export_oci(&tb, &name, &target),
            ShareError::hint,
        )
        .await?;
        return Ok(json_result(to_json(out)));
    }
    if a.gist.unwrap_or(false) {
        let [name] = names.as_slice() else {
            return Err(error_result(
                "a Gist export takes exactly one tool in `names`",
                Some("pass names: [\"TOOL\"]".into()),
            ));
        };
        let name = name.clone();
        let v = blocking(move || share::gist_json(&tb, &name), ShareError::hint).await?;
        return Ok(json_result(v));
    }
    let Some(remote) = a.remote else {
        return Err(error_result(
            "export_tool needs a `remote` (or `gist: true` with one name)",
            Some("pass remote: a bare repository path or URL".into()),
        ));
    };
    let branch = a.branch.unwrap_or_else(|| "main".into());
    let out = blocking(
        move || share::export_tools(&tb, &names, &remote, &branch),
        ShareError::hint,
    )
    .await?;
    Ok(json_result(to_json(out)))
}
