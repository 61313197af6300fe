//! A checker for the JSON Schema keywords kvload's schemas use (type, required,
//! properties, additionalProperties, items, enum, const, minimum, anyOf, $ref into $defs).
//! Any other keyword in a schema is an error, so the schema files stay within what
//! this checker and Python's jsonschema both understand the same way.

use serde_json::Value;

const ANNOTATIONS: &[&str] = &["$schema", "$id", "title", "description", "$defs"];

/// The schema file `name` under crates/kvload/schema/.
pub fn load(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every violation of `schema` by `v`, as "path: what" lines (empty = valid).
pub fn violations(schema: &Value, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, v, "$", &mut out);
    out
}

/// Panics listing the violations, if any.
pub fn assert_valid(schema: &Value, v: &Value) {
    let errs = violations(schema, v);
    assert!(errs.is_empty(), "JSON does not match the schema:\n{}", errs.join("\n"));
}

fn violations_from(root: &Value, s: &Value, v: &Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, s, v, path, &mut out);
    out
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "array" => v.is_array(),
        "object" => v.is_object(),
        other => panic!("schema: unknown type {other}"),
    }
}

fn resolve<'a>(root: &'a Value, r: &str) -> &'a Value {
    let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("schema: unsupported $ref {r}"));
    root.get("$defs").and_then(|d| d.get(name)).unwrap_or_else(|| panic!("schema: no $defs/{name}"))
}

fn check(root: &Value, s: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(obj) = s.as_object() else { panic!("schema at {path} is not an object") };
    for (k, kw) in obj {
        match k.as_str() {
            "$ref" => check(root, resolve(root, kw.as_str().unwrap_or("")), v, path, out),
            "type" => {
                let types: Vec<&str> = match kw {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("schema: bad type at {path}"),
                };
                if !types.iter().any(|t| type_matches(t, v)) {
                    out.push(format!("{path}: {v} is not of type {types:?}"));
                }
            }
            "const" if kw != v => out.push(format!("{path}: {v} != {kw}")),
            "enum" if !kw.as_array().is_some_and(|a| a.contains(v)) => out.push(format!("{path}: {v} not in {kw}")),
            "minimum" => {
                if let (Some(x), Some(m)) = (v.as_f64(), kw.as_f64()) {
                    if x < m {
                        out.push(format!("{path}: {x} < minimum {m}"));
                    }
                }
            }
            "required" => {
                for key in kw.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if v.as_object().is_some_and(|o| !o.contains_key(key)) {
                        out.push(format!("{path}: missing {key}"));
                    }
                }
            }
            "properties" | "additionalProperties" => {}
            "items" => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    check(root, kw, item, &format!("{path}[{i}]"), out);
                }
            }
            "anyOf" => {
                let subs = kw.as_array().unwrap_or_else(|| panic!("schema: bad anyOf at {path}"));
                if !subs.iter().any(|sub| violations_from(root, sub, v, path).is_empty()) {
                    out.push(format!("{path}: matches none of anyOf"));
                }
            }
            "const" | "enum" => {}
            a if ANNOTATIONS.contains(&a) => {}
            other => panic!("schema: keyword {other} at {path} is not supported by this checker"),
        }
    }
    if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
        check_members(root, obj, v, path, out);
    }
}

/// properties + additionalProperties of one object schema.
fn check_members(root: &Value, s: &serde_json::Map<String, Value>, v: &Value, path: &str, out: &mut Vec<String>) {
    let Some(o) = v.as_object() else { return };
    let props = s.get("properties").and_then(Value::as_object);
    for (k, val) in o {
        let sub = format!("{path}.{k}");
        match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
            (Some(ps), _) => check(root, ps, val, &sub, out),
            (None, Some(Value::Bool(false))) => out.push(format!("{path}: unexpected key {k}")),
            (None, Some(extra)) if extra.is_object() => check(root, extra, val, &sub, out),
            _ => {}
        }
    }
}
