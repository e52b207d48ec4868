//! WebAssembly components (WASI 0.2, `[run] world` in tool.toml): one exported function is
//! the tool. Same engine, limits, verified artifact and compiled-code cache as modules
//! (`wasm`); arguments are converted to the function's WIT types (`wit`) and checked, its
//! result converted back, `result<_, E>`'s `err` a tool error carrying the error value.
//!
//! Deny by default: no preopened directories, no environment, no sockets or name lookup, no
//! arguments; stdin is empty, stdout and stderr are captured (capped, stderr as log lines).
//! The tool's approved `[capabilities]` `read`/`write` become preopened directories and
//! `env`/secrets environment values, as for modules; `network` is the `wasi:http` outgoing
//! handler's host filter (`http`): requests only, to the approved hosts only.

use super::http::{Filter, Reach};
use super::{Limits, MAX_MEMORY_MB, TICK, WasmRunner};
use crate::hashing;
use crate::index::Tool;
use crate::{CallOutput, RunError, lines, wit};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use wasmtime::component::{
    Component, ComponentExportIndex, Linker, ResourceTable, Type, Val, types::ComponentItem,
};
use wasmtime::{Engine, Store, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// A component call's store data.
pub(super) struct ComponentState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    filter: Filter,
    table: ResourceTable,
    limits: Limits,
}

impl WasiHttpView for ComponentState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.filter,
        }
    }
}

impl WasiView for ComponentState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The linker of every component: WASI 0.2 and `wasi:http`'s outgoing handler (their
/// permissions come from each call's context: no sockets ever, requests through `Filter`).
pub(super) fn linker(engine: &Engine) -> wasmtime::Result<Linker<ComponentState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_sync(&mut linker)?;
    Ok(linker)
}

/// A verified, compiled component ready to instantiate, and its tool function.
pub(super) struct Loaded {
    pre: wasmtime::component::InstancePre<ComponentState>,
    /// Instantiating it runs none of its code (no start function anywhere in it).
    pub(super) inert: bool,
    func: ComponentExportIndex,
    /// The function's name as the component exports it (`interface#name` or `name`).
    export: String,
    params: Vec<(String, Type)>,
    result: Option<Type>,
    stamp: super::Stamp,
    sha: String,
}

impl super::Verified for Loaded {
    fn verified(&self) -> (&super::Stamp, &str) {
        (&self.stamp, &self.sha)
    }
    fn code_bytes(&self) -> u64 {
        super::artifact::span(self.pre.component().image_range())
    }
}

/// The MCP schemas a component's function gives a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Schemas {
    /// The function as exported (`name`, or `interface#name`).
    pub export: String,
    /// The input schema (an object of the parameters).
    pub input: Value,
    /// The output schema (None when the function returns nothing).
    pub output: Option<Value>,
}

/// An exported function of a component.
struct Export {
    /// As shown and named in `[run] export`: `name`, or `interface#name`.
    shown: String,
    /// The exported instance holding it, if any.
    instance: Option<String>,
    name: String,
    ty: wasmtime::component::types::ComponentFunc,
}

/// The tool's function, checked: every parameter and the result carried by JSON.
struct Picked {
    shown: String,
    instance: Option<String>,
    name: String,
    params: Vec<(String, Type)>,
    result: Option<Type>,
}

/// The exported functions of a component (top level and one instance deep).
fn functions(engine: &Engine, component: &Component) -> Vec<Export> {
    let mut out = Vec::new();
    for (name, item) in component.component_type().exports(engine) {
        match item.ty {
            ComponentItem::ComponentFunc(ty) => out.push(Export {
                shown: name.to_string(),
                instance: None,
                name: name.to_string(),
                ty,
            }),
            ComponentItem::ComponentInstance(i) => {
                for (fname, item) in i.exports(engine) {
                    if let ComponentItem::ComponentFunc(ty) = item.ty {
                        out.push(Export {
                            shown: format!("{name}#{fname}"),
                            instance: Some(name.to_string()),
                            name: fname.to_string(),
                            ty,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Pick the tool's function: `export` (its name, or `interface#name`), else the only one.
fn pick(engine: &Engine, component: &Component, export: Option<&str>) -> Result<Picked, String> {
    let all = functions(engine, component);
    let names: Vec<&str> = all.iter().map(|f| f.shown.as_str()).collect();
    let chosen = match export {
        Some(want) => all
            .iter()
            .find(|f| {
                f.shown == want
                    || (f.name == want && all.iter().filter(|g| g.name == want).count() == 1)
            })
            .ok_or_else(|| {
                format!(
                    "the component exports no function {want:?} (it exports: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )
            })?,
        None => match all.as_slice() {
            [one] => one,
            [] => return Err("the component exports no function".into()),
            _ => {
                return Err(format!(
                    "the component exports several functions ({}): name the tool's with `export` under [run]",
                    names.join(", ")
                ));
            }
        },
    };
    let shown = &chosen.shown;
    let params: Vec<(String, Type)> = chosen
        .ty
        .params()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
    let mut results = chosen.ty.results();
    let result = results.next();
    if results.next().is_some() {
        return Err(format!(
            "function {shown} returns several values; return one (a record)"
        ));
    }
    for (n, t) in &params {
        if let Some(why) = wit::unsupported(t) {
            return Err(format!(
                "parameter `{n}` of {shown} is {why}, which MCP arguments cannot carry"
            ));
        }
    }
    if let Some(why) = result.as_ref().and_then(wit::unsupported) {
        return Err(format!(
            "the result of {shown} is {why}, which a tool result cannot carry"
        ));
    }
    Ok(Picked {
        shown: shown.clone(),
        instance: chosen.instance.clone(),
        name: chosen.name.clone(),
        params,
        result,
    })
}

impl WasmRunner {
    /// The input and output schemas of a component's tool function (what `build_tool` writes
    /// into tool.toml). `export` as `[run] export`.
    pub fn component_schemas(&self, bytes: &[u8], export: Option<&str>) -> Result<Schemas, String> {
        let sha = hashing::sha256_bytes(bytes);
        let component = self.compile_cached::<Component>(super::Source::Bytes(bytes), &sha)?;
        let p = pick(&self.engine, &component, export)?;
        Ok(Schemas {
            export: p.shown,
            input: wit::object(p.params.into_iter()),
            output: wit::output_schema(p.result.as_ref()),
        })
    }

    /// Verify and load a component tool, using the in-memory and on-disk caches.
    pub(super) fn load_component(&self, dir: &Path, tool: &Tool) -> Result<Arc<Loaded>, RunError> {
        let name = &tool.manifest.name;
        self.load_verified(dir, tool, |source, sha, stamp| {
            let start = |message: String| RunError::Start {
                tool: name.clone(),
                message,
            };
            let inert = source.inert();
            let component = self
                .compile_cached::<Component>(source, &sha)
                .map_err(start)?;
            let Picked {
                shown: export,
                instance,
                name: fname,
                params,
                result,
            } = pick(
                &self.engine,
                &component,
                tool.manifest.run.export.as_deref(),
            )
            .map_err(start)?;
            let parent = match &instance {
                Some(i) => Some(
                    component
                        .get_export_index(None, i)
                        .ok_or_else(|| start(format!("the component's export {i} cannot be found")))?,
                ),
                None => None,
            };
            let func = component
                .get_export_index(parent.as_ref(), &fname)
                .ok_or_else(|| start(format!("the component's function {export} cannot be found")))?;
            let pre = self.component_linker.instantiate_pre(&component).map_err(|e| {
                start(format!(
                    "the component cannot be linked as a WASI 0.2 program (it imports something toolsmith does not provide): {e:#}"
                ))
            })?;
            Ok(Loaded {
                pre,
                inert,
                func,
                export,
                params,
                result,
                stamp,
                sha,
            })
        })
    }

    /// Instantiate a component once with no grant, no network and a deadline two ticks away,
    /// then drop it (`WasmRunner::prepare`, for a component whose instantiation runs none of
    /// its code): its first instance is made before its first call. Not a deadline already
    /// passed, as for a module: wasmtime 48 checks the epoch while it instantiates a
    /// component even when none of the component's functions runs ("wasm trap: interrupt"
    /// with no wasm frame), so such an instantiation always failed.
    /// True when it was instantiated.
    pub(super) fn instantiate_once(&self, loaded: &Loaded, tool: &Tool) -> bool {
        let name = &tool.manifest.name;
        let filter = Filter::new(name, Reach::Nothing, std::time::Duration::from_millis(1));
        let mut store = self.component_store(tool, WasiCtxBuilder::new(), filter);
        let _running = super::Running::start(&self.ticking);
        store.set_epoch_deadline(2);
        match loaded.pre.instantiate(&mut store) {
            Ok(_) => true,
            Err(e) => {
                tracing::debug!(tool = %name, "instantiating ahead failed: {e:#}");
                false
            }
        }
    }

    /// A store for one instance of a component tool: no sockets (network goes through
    /// `filter` only), its memory limit (growth past it traps), interruption at the epoch
    /// deadline (none set yet: already passed).
    fn component_store(
        &self,
        tool: &Tool,
        mut b: WasiCtxBuilder,
        filter: Filter,
    ) -> Store<ComponentState> {
        let mem_mb = tool.manifest.limits.memory_mb().min(MAX_MEMORY_MB);
        b.allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let limits = Limits::new(
            StoreLimitsBuilder::new()
                .memory_size((mem_mb as usize) << 20)
                .trap_on_grow_failure(true)
                .instances(64)
                .memories(1)
                .build(),
        );
        let mut store = Store::new(
            &self.engine,
            ComponentState {
                wasi: b.build(),
                http: WasiHttpCtx::new(),
                filter,
                table: ResourceTable::new(),
                limits,
            },
        );
        store.limiter(|c| &mut c.limits);
        store.epoch_deadline_trap();
        store
    }

    /// Run a component tool: arguments converted to its function's parameters, the result
    /// back to JSON. Blocking: call from a blocking context.
    pub(super) fn call_component(
        &self,
        dir: &Path,
        tool: &crate::Granted,
        args: &Value,
    ) -> Result<CallOutput, RunError> {
        let m = &tool.manifest;
        let name = m.name.clone();
        let net = &m.capabilities.network;
        let reach = match net.domains() {
            Some(d) => Reach::Listed(d.to_vec()),
            None if net.is_any() => Reach::Anywhere,
            None => Reach::Nothing,
        };
        let loaded = self.load_component(dir, tool)?;
        let params =
            wit::params_guided(&loaded.params, args, Some(&*tool.input_schema)).map_err(|e| {
                RunError::Arguments {
                    tool: name.clone(),
                    message: e.to_string(),
                }
            })?;
        let cap = m.limits.output_bytes() as usize;
        let mem_mb = m.limits.memory_mb().min(MAX_MEMORY_MB);
        let timeout_ms = m.limits.timeout_ms();

        let stdout = MemoryOutputPipe::new(cap + 1);
        let stderr = MemoryOutputPipe::new(cap + 1);
        let mut b = WasiCtxBuilder::new();
        b.stdout(stdout.clone()).stderr(stderr.clone());
        self.grant(&mut b, tool)?;
        let filter = Filter::new(&name, reach, std::time::Duration::from_millis(timeout_ms));
        let mut store = self.component_store(tool, b, filter);
        store.set_epoch_deadline((timeout_ms / TICK.as_millis() as u64).max(1) + 1);

        let mut results = vec![Val::Bool(false); usize::from(loaded.result.is_some())];
        let run = crate::telemetry::stage("sandbox start")
            .enter(|| loaded.pre.instantiate(&mut store))
            .and_then(|i| {
                let f = i.get_func(&mut store, loaded.func).ok_or_else(|| {
                    wasmtime::format_err!("function {} is not exported", loaded.export)
                })?;
                f.call(&mut store, &params, &mut results)
            });
        let memory_refused = store.data().limits.memory_refused;
        let seen = store.data().filter.seen();
        let refused = store.data().filter.refused();
        drop(store);
        let out = stdout.contents();
        let err = stderr.contents();
        if out.len() > cap || err.len() > cap {
            return Err(RunError::OutputTooLarge {
                tool: name,
                bytes: cap as u64,
            });
        }
        if let Err(e) = run {
            let stderr_text = String::from_utf8_lossy(&err).trim().to_string();
            return Err(super::failure(
                e,
                name,
                timeout_ms,
                memory_refused.then_some(mem_mb),
                stderr_text,
            ));
        }
        let mut logs = lines(&out);
        logs.extend(lines(&err));
        let value = match results.pop() {
            None => Value::Null,
            Some(Val::Result(r)) if matches!(loaded.result, Some(Type::Result(_))) => match r {
                Ok(v) => v.as_deref().map_or(Value::Null, |v| {
                    wit::to_json_guided(v, tool.output_schema.as_deref())
                }),
                Err(e) => {
                    let data = e.as_deref().map_or(Value::Null, wit::to_json);
                    let message = match &data {
                        Value::String(s) => s.clone(),
                        Value::Null => "the function returned an error".into(),
                        other => other.to_string(),
                    };
                    return Err(RunError::ToolError {
                        tool: name,
                        message,
                        data: Some(data),
                    });
                }
            },
            Some(v) => wit::to_json_guided(&v, tool.output_schema.as_deref()),
        };
        let text_len = value.to_string().len();
        if text_len > cap {
            return Err(RunError::OutputTooLarge {
                tool: name,
                bytes: cap as u64,
            });
        }
        let mut out = CallOutput::from_value(value, logs);
        out.network = seen;
        out.warnings.extend(refused);
        Ok(out)
    }
}
