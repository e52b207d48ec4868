//! Every schema toolsmith writes into tool.toml for a component is one its generator takes,
//! and a value keeps its JSON through the generated world: for every kind of WIT type, a
//! component of that type (made from WIT, no code) gives the schema `with_schemas` would write
//! (`wasm::wit::object`, `output_schema`), the generator turns it into WIT again, and JSON
//! values converted to the generated world's types with that schema and back are the same
//! JSON.

use crate::wasm::wit;
use crate::wit_gen::generate;
use serde_json::{Map, Value, json};
use wasm_encoder::{
    CodeSection, ExportKind, ExportSection, Function, FunctionSection, MemorySection, MemoryType,
    Module, TypeSection, ValType,
};
use wasmtime::component::{Component, Type, types::ComponentItem};
use wit_parser::abi::{AbiVariant, WasmType};
use wit_parser::{LiftLowerAbi, ManglingAndAbi, Resolve, WasmExport, WasmExportKind, WorldItem};

/// A component of `wit` whose functions trap (enough for its types).
fn component(wit: &str) -> Vec<u8> {
    let mut resolve = Resolve::default();
    let pkg = resolve
        .push_str("world.wit", wit)
        .unwrap_or_else(|e| panic!("the WIT parses: {e:#}\n{wit}"));
    let world = resolve.select_world(&[pkg], None).expect("a world");
    let mangling = ManglingAndAbi::Legacy(LiftLowerAbi::Sync);
    let flat = |tys: &[WasmType]| -> Vec<ValType> {
        tys.iter()
            .map(|t| match t {
                WasmType::I64 | WasmType::PointerOrI64 => ValType::I64,
                WasmType::F32 => ValType::F32,
                WasmType::F64 => ValType::F64,
                _ => ValType::I32,
            })
            .collect()
    };
    let mut funcs: Vec<(String, Vec<ValType>, Vec<ValType>)> = Vec::new();
    for item in resolve.worlds[world].exports.values() {
        if let WorldItem::Function(func) = item {
            let sig = resolve.wasm_signature(AbiVariant::GuestExport, func);
            for (kind, params, results) in [
                (
                    WasmExportKind::Normal,
                    flat(&sig.params),
                    flat(&sig.results),
                ),
                (WasmExportKind::PostReturn, flat(&sig.results), vec![]),
            ] {
                let export = WasmExport::Func {
                    interface: None,
                    func,
                    kind,
                };
                funcs.push((resolve.wasm_export_name(mangling, export), params, results));
            }
        }
    }
    funcs.push((
        resolve.wasm_export_name(mangling, WasmExport::Realloc),
        vec![ValType::I32; 4],
        vec![ValType::I32],
    ));
    let (mut types, mut fs, mut exports, mut code) = (
        TypeSection::new(),
        FunctionSection::new(),
        ExportSection::new(),
        CodeSection::new(),
    );
    for (i, (name, params, results)) in funcs.iter().enumerate() {
        types.ty().function(params.clone(), results.clone());
        fs.function(i as u32);
        exports.export(name, ExportKind::Func, i as u32);
        let mut f = Function::new([]);
        f.instructions().unreachable().end();
        code.function(&f);
    }
    let mut memory = MemorySection::new();
    memory.memory(MemoryType {
        minimum: 0,
        maximum: None,
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    exports.export(
        &resolve.wasm_export_name(mangling, WasmExport::Memory),
        ExportKind::Memory,
        0,
    );
    let mut module = Module::new();
    module
        .section(&types)
        .section(&fs)
        .section(&memory)
        .section(&exports)
        .section(&code);
    let mut bytes = module.finish();
    wit_component::embed_component_metadata(
        &mut bytes,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .expect("metadata");
    wit_component::ComponentEncoder::default()
        .module(&bytes)
        .expect("the module")
        .validate(true)
        .encode()
        .expect("a component")
}

/// The parameters and result of the component's function `call`.
fn signature(wit: &str) -> (Vec<(String, Type)>, Option<Type>) {
    let mut config = wasmtime::Config::new();
    config.wasm_component_model(true);
    let engine = wasmtime::Engine::new(&config).expect("an engine");
    let c = Component::new(&engine, component(wit)).expect("wasmtime loads it");
    for (name, item) in c.component_type().exports(&engine) {
        if let (ComponentItem::ComponentFunc(f), "call") = (item.ty, name) {
            let params = f.params().map(|(n, t)| (n.to_string(), t)).collect();
            return (params, f.results().next());
        }
    }
    panic!("no function call in\n{wit}")
}

const TYPES: &str = r#"package test:types;

world types {
  record point { x: f64, y: f64, label: option<string>, max-len: u32 }
  variant shape { circle(f64), rect(point), empty }
  variant choice { yes, no }
  enum color { red, green, dark-blue }
  flags perms { read, write }
  export call: func(
    a-bool: bool, a-s8: s8, a-u8: u8, a-s16: s16, a-u16: u16, a-s32: s32, a-u32: u32,
    a-s64: s64, a-u64: u64, a-f32: f32, a-f64: f64, a-char: char, a-string: string,
    a-list: list<s64>, a-tuple: tuple<s64, string, bool>, a-option: option<string>,
    a-nested: option<option<s64>>, a-record: point, a-variant: shape, a-cases: choice,
    a-enum: color, a-flags: perms, a-result: result<s64, string>, a-unit-result: result,
    a-pairs: list<tuple<string, s64>>, a-points: list<point>, a-opt-record: option<point>,
    a-bytes: list<u8>, a-matrix: list<list<f64>>
  ) -> result<point, string>;
}
"#;

/// Values for every parameter, as MCP sends them.
fn args() -> Value {
    json!({
        "a_bool": true, "a_s8": -8, "a_u8": 200, "a_s16": -300, "a_u16": 60000,
        "a_s32": -70000, "a_u32": 4000000000u32, "a_s64": -9007199254740993i64,
        "a_u64": 18446744073709551615u64, "a_f32": 1.5, "a_f64": -2.25, "a_char": "é",
        "a_string": "text", "a_list": [1, -2, 3], "a_tuple": [7, "seven", false],
        "a_option": "some", "a_nested": 5,
        "a_record": {"x": 1.0, "y": 2.5, "label": "p", "max_len": 9},
        "a_variant": {"rect": {"x": 0.5, "y": 1.0, "label": null, "max_len": 0}},
        "a_cases": "no", "a_enum": "dark-blue", "a_flags": ["write"],
        "a_result": {"err": "bad"}, "a_unit_result": {"ok": null},
        "a_pairs": [["a", 1], ["b", 2]],
        "a_points": [{"x": 3.0, "y": 4.0, "label": null, "max_len": 1}],
        "a_opt_record": null, "a_bytes": [0, 255], "a_matrix": [[1.5], [2.5, 3.5]]
    })
}

/// The JSON of converted parameter values, as the call's result conversion gives it.
fn back(params: &[(String, Type)], vals: &[wasmtime::component::Val], s: &Value) -> Value {
    let props = s["properties"].as_object().expect("properties");
    let mut out = Map::new();
    for ((name, _), v) in params.iter().zip(vals) {
        let key = props
            .keys()
            .find(|k| wit::form::wit_name(k).as_deref() == Some(name.as_str()))
            .cloned()
            .unwrap_or_else(|| wit::json_name(name));
        let schema = props.get(&key).and_then(Value::as_object);
        out.insert(key, wit::to_json_guided(v, schema));
    }
    Value::Object(out)
}

#[test]
fn every_wit_type_survives_schema_and_generated_wit() {
    let (params, result) = signature(TYPES);
    // The schemas `with_schemas` writes into tool.toml for this component.
    let input = wit::object(params.iter().cloned());
    let output = wit::output_schema(result.as_ref()).expect("a record result");
    let world = generate("tool", input.as_object(), output.as_object())
        .unwrap_or_else(|e| panic!("the generator takes toolsmith's own schemas: {e}"));
    let (params2, result2) = signature(&world.wit);
    assert_eq!(params2.len(), params.len(), "{}", world.wit);
    assert!(result2.is_some());

    // By the WIT types alone, and through the generated world with the schema.
    let a = args();
    let vals = wit::params(&params, &a).expect("the original types take the arguments");
    assert_eq!(back(&params, &vals, &input), a);
    let vals2 = wit::params_guided(&params2, &a, input.as_object())
        .unwrap_or_else(|e| panic!("the generated types take them: {e}\n{}", world.wit));
    assert_eq!(back(&params2, &vals2, &input), a, "{}", world.wit);

    // The result: a record with an absent option.
    let point = json!({"x": 1.0, "y": -1.0, "label": null, "max_len": 3});
    let one = json!({"type": "object", "properties": {"p": output}, "required": ["p"]});
    let (_, Some(wasmtime::component::Type::Result(r))) = (&params2, &result2) else {
        panic!("a result")
    };
    let ok = vec![("p".to_string(), r.ok().expect("an ok type"))];
    let v = wit::params_guided(&ok, &json!({"p": point}), one.as_object()).expect("a record");
    assert_eq!(wit::to_json_guided(&v[0], output.as_object()), point);
}

/// The schemas an AI writes: through the generated world and back, the same JSON.
#[test]
fn the_schemas_an_ai_writes_carry_their_values() {
    let input = json!({"type": "object", "required": ["pair", "either", "anything", "counts"], "properties": {
        "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "nullable": {"type": ["number", "null"]},
        "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
        "anything": {"description": "any JSON"},
        "maxLen": {"type": "integer"},
        "mode": {"enum": ["Fast Lane", "slow"]},
        "level": {"enum": ["low", "High"]},
        "nested": {"type": "object", "properties": {"when": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["when"]}
    }});
    let output = json!({"type": "object", "properties": {"result": {"type": "string"}, "n": {"type": "integer"}}, "required": ["n"]});
    let world = generate("tool", input.as_object(), output.as_object()).expect("a world");
    let (params, result) = signature(&world.wit);
    for a in [
        json!({"pair": [1, "one"], "either": 5, "anything": {"k": [1, null, "x"]}, "counts": {"b": 2, "a": 1},
               "maybe": null, "nullable": 2.5, "maxLen": 3, "mode": "Fast Lane", "level": "High",
               "nested": {"when": "now", "tags": ["x"]}}),
        json!({"pair": [-1, ""], "either": "five", "anything": null, "counts": {}}),
        json!({"pair": [0, "z"], "either": [1, 2], "anything": 3.5, "counts": {"x": -1}, "nested": {"when": "later"}}),
    ] {
        let vals = wit::params_guided(&params, &a, input.as_object())
            .unwrap_or_else(|e| panic!("{e}\n{}", world.wit));
        let mut b = back(&params, &vals, &input);
        // An optional property left out stays out; one given as null is null.
        b.as_object_mut()
            .expect("an object")
            .retain(|k, v| !v.is_null() || a.get(k).is_some());
        assert_eq!(b, a, "{}", world.wit);
    }
    // A value of the wrong JSON type is refused, naming it.
    let e = wit::params_guided(
        &params,
        &json!({"pair": [1, "x"], "either": true, "anything": 1, "counts": {}}),
        input.as_object(),
    )
    .unwrap_err();
    assert_eq!(e.path, "either");
    assert!(e.message.contains("integer, string, array"), "{e}");

    // An absent optional result is left out, as the output schema says (not `null`).
    let Some(wasmtime::component::Type::Result(r)) = result else {
        panic!("a result")
    };
    let rec = vec![("o".to_string(), r.ok().expect("ok"))];
    let one = json!({"type": "object", "properties": {"o": output}, "required": ["o"]});
    let v = wit::params_guided(&rec, &json!({"o": {"n": 1}}), one.as_object()).expect("record");
    assert_eq!(
        wit::to_json_guided(&v[0], output.as_object()),
        json!({"n": 1})
    );
}
