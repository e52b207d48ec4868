//! A manifest's `[capabilities]` (what a tool may reach: network, files, environment) and
//! `[secrets]` (what it is given once a person approved it).

use super::{Annotations, Limits};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What a tool may reach. Everything is denied by default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Capabilities {
    /// true: every host; or only the listed domains ("*.x.com": subdomains), via a proxy.
    #[serde(default, skip_serializing_if = "Network::is_none")]
    pub network: Network,
    /// Environment variables passed through from the host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Paths the tool may read (inside the allowed roots).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Paths the tool may write (inside the allowed roots).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
}

/// `capabilities.network`: none, any host, or only the listed domains.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Network {
    /// `true`: any host; `false`: none.
    Any(bool),
    /// Only these hosts, through the filtering proxy (an empty list is none).
    Domains(Vec<String>),
}

/// A boolean or a list of domains, in the short form (the meta-tools' schemas count).
impl JsonSchema for Network {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Network".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["boolean", "array"], "items": {"type": "string"}})
    }
}

impl Default for Network {
    fn default() -> Self {
        Network::Any(false)
    }
}

impl Network {
    /// No network at all.
    pub fn is_none(&self) -> bool {
        matches!(self, Network::Any(false)) || matches!(self, Network::Domains(d) if d.is_empty())
    }
    /// Any host, directly.
    pub fn is_any(&self) -> bool {
        matches!(self, Network::Any(true))
    }
    /// The listed domains, when network is limited to them.
    pub fn domains(&self) -> Option<&[String]> {
        match self {
            Network::Domains(d) if !d.is_empty() => Some(d),
            _ => None,
        }
    }
}

/// What a registration (`register_script`) or a build (`build_tool`) may declare of a tool
/// beside its code, one definition for both: its schemas, annotations, limits and capabilities.
/// Each left out is the default (or, for an existing tool's build, what it had).
// No doc comments on the fields: they would become the JSON Schema's descriptions, sent to
// the model in every meta-tool definition that takes this type (names say enough).
#[allow(missing_docs)]
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Declared {
    #[serde(default)]
    pub input_schema: Option<Map<String, Value>>,
    #[serde(default)]
    pub output_schema: Option<Map<String, Value>>,
    #[serde(default)]
    pub annotations: Option<Annotations>,
    #[serde(default)]
    pub limits: Option<Limits>,
    #[serde(default)]
    pub capabilities: Option<Capabilities>,
    // Secrets the tool needs: names, or NAME -> what it is for; never values (a person sets
    // those outside the client). No doc comment: every meta-tool definition, descriptions
    // included, is sent to the model.
    #[serde(default)]
    pub secrets: Option<SecretsSpec>,
}

// The secrets a registration or build declares: NAME (an environment variable name) → what
// it is for, or only the names. (Not a doc comment: it would be the schema's description,
// sent to the model with every meta-tool definition.)
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum SecretsSpec {
    /// `{"GITHUB_TOKEN": "read access to the repositories"}`
    Purposes(BTreeMap<String, String>),
    /// `["GITHUB_TOKEN"]`
    Names(Vec<String>),
}

/// Names or NAME → purpose, in the short form (the meta-tools' schemas count): `items`
/// applies to an array, `additionalProperties` to an object.
impl JsonSchema for SecretsSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SecretsSpec".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["object", "array"],
            "items": {"type": "string"},
            "additionalProperties": {"type": "string"}
        })
    }
}

impl SecretsSpec {
    /// The `[secrets]` table: names only get an empty purpose.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        match self {
            SecretsSpec::Purposes(m) => m.clone(),
            SecretsSpec::Names(n) => n.iter().map(|n| (n.clone(), String::new())).collect(),
        }
    }
}

impl Declared {
    /// Whether anything is declared.
    pub fn any(&self) -> bool {
        self.secrets.is_some()
            || self.input_schema.is_some()
            || self.output_schema.is_some()
            || self.annotations.is_some()
            || self.limits.is_some()
            || self.capabilities.is_some()
    }
}
