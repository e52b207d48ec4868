use super::*;
use serde_json::json;

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("an object")
}

#[test]
fn schemas_become_a_world() {
    let input = obj(
        json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string"},
            "max_len": {"type": "integer"},
            "mode": {"type": "string", "enum": ["loud", "quiet"]},
            "words": {"type": "array", "items": {"type": "string"}}
        }}),
    );
    let output =
        obj(json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}));
    let wit = generate("tool", Some(&input), Some(&output))
        .expect("wit")
        .wit;
    assert!(
        wit.contains("package toolsmith:tool;\n\nworld %tool {"),
        "{wit}"
    );
    assert!(
        wit.contains("enum %mode {\n    %loud,\n    %quiet,\n  }"),
        "{wit}"
    );
    assert!(wit.contains("record %output {\n    %n: s64,\n  }"), "{wit}");
    assert!(
        wit.contains("export call: func(%max-len: option<s64>, %mode: option<%mode>, %text: string, %words: option<list<string>>) -> result<%output, string>;"),
        "{wit}"
    );
}

/// The schemas an AI writes for Python's tuples, optionals, dicts, unions and `Any`.
#[test]
fn tuples_optionals_maps_unions_and_free_values_have_a_form() {
    let input = obj(
        json!({"type": "object", "required": ["pair", "counts", "either", "anything", "maybe"], "properties": {
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "nullable": {"type": ["number", "null"]},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
            "anything": {"description": "any JSON"},
            "maxLen": {"type": "integer"}
        }}),
    );
    let output = obj(json!({"type": "object", "properties": {"result": {"type": "string"}}}));
    let world = generate("tool", Some(&input), Some(&output)).expect("a world");
    let wit = &world.wit;
    assert!(
        wit.contains("variant %either {\n    %integer(s64),\n    %string(string),\n    %array(list<s64>),\n  }"),
        "{wit}"
    );
    assert!(
        wit.contains("export call: func(%anything: string, %counts: list<tuple<string, s64>>, %either: %either, %max-len: option<s64>, %maybe: option<string>, %nullable: option<f64>, %pair: tuple<s64, string>) -> result<%output, string>;"),
        "{wit}"
    );
    assert!(
        wit.contains("record %output {\n    %result: option<string>,\n  }"),
        "{wit}"
    );
    let keys: Vec<&str> = world.params.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "anything", "counts", "either", "maxLen", "maybe", "nullable", "pair"
        ]
    );
    assert_eq!(world.params[0].shape, Shape::Json);
    assert_eq!(
        world.params[1].shape,
        Shape::Map {
            of: Box::new(Shape::Int)
        }
    );
    assert_eq!(
        serde_json::to_value(&world.params[6].shape).expect("json"),
        json!({"t": "tuple", "of": [{"t": "int"}, {"t": "str"}]})
    );
    // No output schema: the result is text.
    let world = generate("tool", Some(&input), None).expect("a world");
    assert_eq!(world.result, Shape::Text);
}

#[test]
fn what_has_no_wit_form_is_named_by_keyword_and_path() {
    let input = obj(
        json!({"type": "object", "properties": {"x": {"type": "array", "items": {"$ref": "#/$defs/item"}}}}),
    );
    let e = generate("tool", Some(&input), None).unwrap_err();
    assert_eq!(e.at, "input_schema/properties/x/items");
    assert_eq!(e.keyword, "$ref");
    let input = obj(json!({"type": "object", "properties": {"größe": {"type": "string"}}}));
    let e = generate("tool", Some(&input), None).unwrap_err();
    assert_eq!(e.at, "input_schema/properties/größe");
    assert_eq!(e.keyword, "properties");
    let input = obj(
        json!({"type": "object", "properties": {"max_len": {"type": "integer"}, "maxLen": {"type": "integer"}}}),
    );
    let e = generate("tool", Some(&input), None).unwrap_err();
    assert!(e.message.contains("same WIT name"), "{e}");
    let output = obj(json!({"allOf": [{"type": "object"}, {"required": ["a"]}]}));
    let e = generate("tool", None, Some(&output)).unwrap_err();
    assert_eq!(
        (e.at.as_str(), e.keyword.as_str()),
        ("output_schema", "allOf")
    );
}

mod roundtrip;
