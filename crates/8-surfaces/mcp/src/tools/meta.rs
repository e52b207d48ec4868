//! The one interface of a meta-tool: a type whose `Args` (typed, `JsonSchema` + `Deserialize`)
//! are its input schema and its parse, with its name, purpose, result keys, annotations and
//! guide details declared once beside what it does. The registry (`super::ALL`) lists each
//! once; `tools/list`, the guide, `is_meta` and the reserved names' test derive from it.

use super::Ctx;
use super::args::{as_sent, parse, schema_of};
use rmcp::model::{CallToolResponse, CallToolResult, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a meta-tool tells clients about its effects (MCP tool annotations), by name.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    /// It changes nothing.
    pub read_only: bool,
    /// A change it makes may remove or overwrite something.
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
    /// It reaches beyond the toolbox (tools' own effects, the network).
    pub open_world: bool,
}

impl Hints {
    /// Reads the toolbox only.
    pub const READ: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// Changes the toolbox: not destructive, not idempotent, closed world until said otherwise.
    pub const WRITE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };

    /// A change it makes may remove or overwrite something.
    pub const fn destructive(self) -> Hints {
        Hints {
            destructive: true,
            ..self
        }
    }

    /// Calling it again with the same arguments changes nothing more.
    pub const fn idempotent(self) -> Hints {
        Hints {
            idempotent: true,
            ..self
        }
    }

    /// It reaches beyond the toolbox.
    pub const fn open_world(self) -> Hints {
        Hints {
            open_world: true,
            ..self
        }
    }

    /// The annotations sent: hints equal to MCP's defaults (not read-only, destructive, not
    /// idempotent, open world) are left out.
    pub fn annotations(self) -> ToolAnnotations {
        let mut a = ToolAnnotations::new();
        if self.read_only {
            a = a.read_only(true);
        } else if !self.destructive {
            a = a.destructive(false);
        }
        // Idempotence only means something for a tool that changes things.
        if self.idempotent && !self.read_only {
            a = a.idempotent(true);
        }
        if !self.open_world {
            a = a.open_world(false);
        }
        a
    }
}

/// The JSON type a meta-tool's output schema gives one key of its result: true of that key on
/// every successful path (a key a path leaves out is fine: no key is `required`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string.
    Str,
    /// An integer.
    Int,
    /// `true` or `false`.
    Bool,
    /// An array.
    Arr,
    /// An object.
    Obj,
    /// An array on one path, an integer on another (`memory`'s `keys`: listed, or counted).
    ArrOrInt,
    /// Any JSON value, `null` included (a tool's or a stored value's own).
    Any,
}

impl Ty {
    /// Its JSON Schema.
    pub fn schema(self) -> Value {
        match self {
            Ty::Str => json!({"type": "string"}),
            Ty::Int => json!({"type": "integer"}),
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Arr => json!({"type": "array"}),
            Ty::Obj => json!({"type": "object"}),
            Ty::ArrOrInt => json!({"type": ["array", "integer"]}),
            Ty::Any => json!({}),
        }
    }
}

/// What a meta-tool's call ends with: a result, or an error result (`isError`).
pub type Reply = Result<CallToolResult, CallToolResult>;

/// One meta-tool.
pub trait MetaTool: 'static {
    /// Its MCP name (a stored tool may never take it: `names::META_TOOL_NAMES`).
    const NAME: &'static str;
    /// What it is for, in one line (the details are in the guide).
    const DESCRIPTION: &'static str;
    /// What its description leaves to the guide.
    const DETAILS: &'static str = "";
    /// The main keys of its result, told in the guide.
    const RESULT: &'static [&'static str];
    /// The keys of `RESULT` its output schema types, with their types. Every meta-tool's
    /// definitions share a 12,000-byte budget as sent, so the most-read results are typed
    /// first; the others' output schema says only "an object".
    const OUTPUT: &'static [(&'static str, Ty)] = &[];
    /// Its effects.
    const HINTS: Hints;
    /// Its arguments: the input schema, and what a call's arguments are parsed into once they
    /// passed that schema.
    type Args: DeserializeOwned + JsonSchema + Send;

    /// Whether a call with these (raw) arguments may run as an MCP task: the long ones.
    fn runs_as_task(_args: &JsonObject) -> bool {
        false
    }

    /// Do it.
    fn call(args: Self::Args, ctx: Ctx) -> impl Future<Output = Reply> + Send;
}

type Running = Pin<Box<dyn Future<Output = CallToolResponse> + Send>>;

/// A meta-tool as the registry holds it.
pub struct Entry {
    /// Its name (`MetaTool::NAME`).
    pub name: &'static str,
    /// Its guide details (`MetaTool::DETAILS`).
    pub details: &'static str,
    /// The main keys of its result (`MetaTool::RESULT`).
    pub result: &'static [&'static str],
    definition: fn() -> Tool,
    checked: fn() -> Arc<JsonObject>,
    run: fn(JsonObject, Ctx) -> Running,
    /// `MetaTool::runs_as_task`.
    pub runs_as_task: fn(&JsonObject) -> bool,
}

impl Entry {
    /// The registry entry of `T`.
    pub const fn of<T: MetaTool>() -> Entry {
        Entry {
            name: T::NAME,
            details: T::DETAILS,
            result: T::RESULT,
            definition: definition::<T>,
            checked: schema_of::<T::Args>,
            run: run::<T>,
            runs_as_task: T::runs_as_task,
        }
    }

    /// Its MCP definition: typed input schema, typed output schema, annotations. (No
    /// `title`: the names say it, and the default tools/list stays small.)
    pub fn definition(&self) -> Tool {
        (self.definition)()
    }

    /// The input schema its arguments are checked against: the one sent, closed
    /// (`additionalProperties: false` wherever an object lists its properties), so that an
    /// unknown key is refused with a "did you mean".
    pub fn checked_schema(&self) -> Arc<JsonObject> {
        (self.checked)()
    }

    /// Run it with arguments already checked against its schema.
    pub fn run(&self, args: JsonObject, ctx: Ctx) -> Running {
        (self.run)(args, ctx)
    }
}

fn definition<T: MetaTool>() -> Tool {
    Tool::new(T::NAME, T::DESCRIPTION, as_sent(&schema_of::<T::Args>()))
        .with_raw_output_schema(Arc::new(output_schema(T::OUTPUT)))
        .with_annotations(T::HINTS.annotations())
}

/// An output schema: an object, with the types of the keys given.
pub fn output_schema(keys: &[(&str, Ty)]) -> JsonObject {
    let mut object = JsonObject::new();
    object.insert("type".into(), json!("object"));
    if !keys.is_empty() {
        let properties: serde_json::Map<String, Value> = keys
            .iter()
            .map(|(k, t)| ((*k).to_string(), t.schema()))
            .collect();
        object.insert("properties".into(), Value::Object(properties));
    }
    object
}

fn run<T: MetaTool>(args: JsonObject, ctx: Ctx) -> Running {
    Box::pin(async move {
        let outcome = match parse::<T::Args>(T::NAME, args) {
            Ok(a) => T::call(a, ctx).await,
            Err(e) => Err(e),
        };
        outcome.unwrap_or_else(|e| e).into()
    })
}
