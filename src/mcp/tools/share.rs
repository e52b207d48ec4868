//! Sharing meta-tools: `import_tool`, `update_tool`, `export_tool` — their MCP definitions and
//! what they do (through `crate::share`).

use super::Ctx;
use super::args::{define, hints, parse};
use super::history::blocking;
use super::result::{error_result, json_result};
use crate::error::Hint;
use crate::share::{self, ImportRequest, ShareError};
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// Names of these meta-tools, in listing order.
pub const NAMES: &[&str] = &["import_tool", "update_tool", "export_tool"];

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

/// The MCP definitions.
pub fn definitions() -> Vec<Tool> {
    vec![
        define::<ImportArgs>(
            "import_tool",
            "Import tools or Agent Skills from git, a Gist or oci:// (never run).",
            &["tools", "skills", "refused", "commit"],
            hints(false, false, false, true),
        ),
        define::<UpdateArgs>(
            "update_tool",
            "Review, then apply, changes at an imported tool's origin.",
            &["diff", "applied"],
            hints(false, true, true, true),
        ),
        define::<ExportArgs>(
            "export_tool",
            "Push tools to a git remote, or one as a Gist or OCI artifact.",
            &["commit", "files"],
            hints(false, false, true, true),
        ),
    ]
}

fn to_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Run one of these meta-tools. Returns None when `name` is not one of them.
pub async fn call(name: &str, args: JsonObject, ctx: Ctx) -> Option<CallToolResult> {
    let r = match name {
        "import_tool" => match parse(name, args) {
            Ok(a) => import(&ctx, a).await,
            Err(e) => Err(e),
        },
        "update_tool" => match parse(name, args) {
            Ok(a) => update(&ctx, a).await,
            Err(e) => Err(e),
        },
        "export_tool" => match parse(name, args) {
            Ok(a) => export(&ctx, a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    };
    Some(r.unwrap_or_else(|e| e))
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
    let out = blocking(
        move || share::import_tool(&tb, &req, &actor),
        ShareError::hint,
    )
    .await?;
    ctx.changed();
    Ok(json_result(to_json(out)))
}

async fn update(ctx: &Ctx, a: UpdateArgs) -> Result<CallToolResult, CallToolResult> {
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
